// The activity indicator (seed 000 §10.4): names what is happening, derived from the
// latest events, instead of a generic typing bubble.
//
// Events often come in bursts (routing, planning and validation entries are written in the
// same transaction as what follows them), so live, each word stays up for at least
// MIN_SHOW_MS: later words wait their turn in a short queue (consecutive entries of one word
// merge, and only the newest MAX_QUEUED wait). Replayed history is shown at once.
//
// An indicator ends with its turn: after a turn's (or a run's) ``done`` nothing of it shows
// again, so an event of that turn that comes later (a plan written after its ``done``, say)
// cannot bring back "Planning…" once the turn, and the run it started, are over. Hans's
// message outside a turn (a run's or an undo's summary) ends the work that led to it.

import { h } from "./dom.js";

export const MIN_SHOW_MS = 500;
const MAX_QUEUED = 6;
const OF_A_TURN = new Set(["session", "routing", "thinking", "plan", "text_delta", "error"]);
const MAX_ENDED = 200; // the turns and runs remembered as ended (the newest)

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
  /** ``live()`` tells whether events are live (queued for a visible moment) or replayed. */
  constructor(agentName, live = () => true) {
    this.agentName = agentName;
    this.live = live;
    this.queue = []; // [word, detail] or [null] (hide), waiting for the current word's moment
    this.shownAt = 0;
    this.timer = 0;
    this.word = h("strong.activity-word");
    this.detail = h("span.activity-detail");
    this.el = h("div.activity", { role: "status", "aria-live": "polite", hidden: true },
      h("span.activity-dots", { "aria-hidden": "true" }, h("i"), h("i"), h("i")), this.word, this.detail);
    this.running = new Set(); // runs in progress keep "Executing" alive between turns
    this.waiting = new Set(); // tasks awaiting the user's confirmation
    this.ended = new Set(); // turns and runs whose ``done`` came: their later events show nothing
  }

  show(word, detail = "") {
    this.request(word, detail);
  }

  hide() {
    this.request(null);
  }

  reset() {
    this.running.clear();
    this.waiting.clear();
    this.ended.clear();
    this.queue = [];
    clearTimeout(this.timer);
    this.timer = 0;
    this.apply(null);
  }

  /** The word now shown ("" while hidden). */
  current() {
    return this.el.hidden ? "" : this.word.textContent.replace(/…$/, "");
  }

  /** Show ``word`` (null: hide) now, or after the words before it had their moment. */
  request(word, detail = "") {
    if (!this.live()) {
      this.queue = [];
      clearTimeout(this.timer);
      this.timer = 0;
      return this.apply(word, detail);
    }
    const last = this.queue.at(-1);
    if (last && (last[0] === word || (last[0] === null && word !== null))) {
      last[0] = word; // the same word again only says more; a word after a hide replaces it
      last[1] = detail;
      const before = this.queue.at(-2);
      if (before && before[0] === word) this.queue.splice(-2, 1);
      return undefined;
    }
    if (!this.queue.length) {
      const now = (word || "") === this.current();
      const due = this.el.hidden || performance.now() - this.shownAt >= MIN_SHOW_MS;
      if (now || due) return this.apply(word, detail, now);
    }
    this.queue.push([word, detail]);
    if (this.queue.length > MAX_QUEUED) this.queue.splice(0, this.queue.length - MAX_QUEUED);
    return this.schedule();
  }

  schedule() {
    if (this.timer || !this.queue.length) return undefined;
    const wait = Math.max(0, MIN_SHOW_MS - (performance.now() - this.shownAt));
    this.timer = setTimeout(() => {
      this.timer = 0;
      const next = this.queue.shift();
      if (next) this.apply(next[0], next[1]);
      this.schedule();
    }, wait);
    return undefined;
  }

  apply(word, detail = "", same = false) {
    if (word === null) {
      this.el.hidden = true;
      this.el.dataset.state = "idle";
      return;
    }
    if (!same || this.el.hidden) this.shownAt = performance.now();
    this.el.hidden = false;
    this.el.dataset.state = word.toLowerCase().replace(/[^a-z]+/g, "-");
    this.word.textContent = `${word}…`;
    this.detail.textContent = detail;
  }

  /** Update from one event (live or replayed: the result is the same). */
  update(ev) {
    const d = ev.data || {};
    const owner = ev.turnId ? `turn:${ev.turnId}` : null;
    if (ev.type === "done") return this.end(owner || (ev.runId ? `run:${ev.runId}` : null));
    if (owner && this.ended.has(owner) && OF_A_TURN.has(ev.type)) return undefined; // it is over
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
      case "message":
        // Hans's word outside a turn (a run's summary, an undo's) ends what led to it; an
        // undo has no ``done`` of its own
        return !ev.turnId && d.kind === "assistant" ? this.settle() : undefined;
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
      default:
        return undefined;
    }
  }

  /** A turn's or a run's ``done``: it is over; show what still goes on, if anything. */
  end(owner) {
    if (owner) {
      this.ended.add(owner);
      if (this.ended.size > MAX_ENDED) this.ended.delete(this.ended.values().next().value);
    }
    return this.settle();
  }

  settle() {
    if (this.waiting.size) return this.show("Waiting for you", "A step needs your confirmation");
    if (this.running.size) return this.show("Executing", "The run is in progress");
    return this.hide();
  }
}
