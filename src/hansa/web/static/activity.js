// The activity indicator (seed 000 §10.4): names what is happening, derived from the
// latest events, instead of a generic typing bubble.

import { h } from "./dom.js";

const PHASES = {
  routing: "Routing",
  context: "Thinking",
  triage: "Thinking",
  reply: "Thinking",
  planning: "Planning",
  execution: "Executing",
  validation: "Validating",
};

export class Activity {
  constructor(agentName) {
    this.agentName = agentName;
    this.word = h("strong.activity-word");
    this.detail = h("span.activity-detail");
    this.el = h("div.activity", { role: "status", "aria-live": "polite", hidden: true },
      h("span.activity-dots", { "aria-hidden": "true" }, h("i"), h("i"), h("i")), this.word, this.detail);
    this.running = new Set(); // runs in progress keep "Executing" alive between turns
    this.waiting = new Set(); // tasks awaiting the user's confirmation
  }

  show(word, detail = "") {
    this.el.hidden = false;
    this.el.dataset.state = word.toLowerCase().replace(/[^a-z]+/g, "-");
    this.word.textContent = `${word}…`;
    this.detail.textContent = detail;
  }

  hide() {
    this.el.hidden = true;
    this.el.dataset.state = "idle";
  }

  reset() {
    this.running.clear();
    this.waiting.clear();
    this.hide();
  }

  /** Update from one event (live or replayed: the result is the same). */
  update(ev) {
    const d = ev.data || {};
    const who = this.agentName(ev.agentId);
    switch (ev.type) {
      case "session":
        return this.show("Thinking", `${who} is reading your message`);
      case "routing":
        return this.show("Routing", `${who} is choosing who should answer`);
      case "thinking":
        return this.show(PHASES[d.phase] || "Thinking", d.summary || "");
      case "plan":
        return this.show("Planning", `${who} is proposing a plan`);
      case "text_delta":
        return this.show("Writing", `${who} is writing`);
      case "run_status":
        if (d.status === "running") this.running.add(ev.runId);
        else this.running.delete(ev.runId);
        return d.status === "running" ? this.show("Executing", "The run has started") : this.settle();
      case "task_status":
        if (d.status === "awaiting_confirmation") {
          this.waiting.add(ev.taskId);
          return this.show("Waiting for you", `${who} needs your confirmation`);
        }
        this.waiting.delete(ev.taskId);
        if (d.status === "in_progress") return this.show("Executing", `${who} is working on a task`);
        if (d.status === "open" && d.retryAt) return this.show("Retrying", `${who} will try again shortly`);
        return undefined;
      case "error":
        return this.show("Recovering", d.message || "Something went wrong");
      case "done":
        return this.settle();
      default:
        return undefined;
    }
  }

  settle() {
    if (this.waiting.size) return this.show("Waiting for you", "A step needs your confirmation");
    if (this.running.size) return this.show("Executing", "The run is in progress");
    return this.hide();
  }
}
