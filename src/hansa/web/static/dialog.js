// The confirmation dialog for an irreversible task (law of no return): shows exactly what
// will happen — task type, step, agent and every parameter — and confirms for exactly those
// parameters (their hash), so a changed task needs a fresh confirmation.

import { api } from "./api.js";
import { h, uid } from "./dom.js";

/**
 * Ask before a change the user should weigh (undoing a run's steps, say): a modal dialog
 * with what will happen; resolves true when the user says yes, false on cancel or Escape.
 */
export function ask({ title, text, items = [], yes, no = "Cancel" }) {
  return new Promise((resolve) => {
    const titleId = uid("ask");
    const ok = h("button.danger", { type: "button", onclick: () => el.close("yes") }, yes);
    const el = h("dialog.confirm", { "aria-labelledby": titleId },
      h("h2", { id: titleId }, title),
      h("p.confirm-warning", {}, text),
      h("ul.confirm-steps", {}, ...items.map((item) => h("li", {}, item))),
      h("div.dialog-actions", {},
        h("button", { type: "button", onclick: () => el.close("no") }, no), ok));
    el.addEventListener("close", () => {
      el.remove();
      resolve(el.returnValue === "yes");
    });
    document.body.append(el);
    el.showModal();
    ok.focus();
  });
}

export class ConfirmDialog {
  constructor() {
    this.what = h("dl.confirm-facts");
    this.params = h("pre.confirm-params", { tabindex: "0", "aria-label": "Parameters" });
    this.error = h("p.card-error", { role: "alert", hidden: true });
    this.ok = h("button.danger", { type: "button", onclick: () => this.confirm() }, "Confirm and run");
    this.el = h("dialog.confirm", {
      "aria-labelledby": "confirm-title",
      "aria-describedby": "confirm-warning",
    },
      h("h2", { id: "confirm-title" }, "Confirm an irreversible step"),
      h("p.confirm-warning", { id: "confirm-warning" },
        "This step cannot be undone by the system. It will run exactly as shown below."),
      this.what,
      h("h3.confirm-sub", {}, "Parameters"),
      this.params, this.error,
      h("div.dialog-actions", {},
        h("button", { type: "button", onclick: () => this.el.close("cancel") }, "Cancel"), this.ok));
    document.body.append(this.el);
    this.task = null;
  }

  async open(taskId, runs) {
    this.runs = runs;
    this.error.hidden = true;
    this.ok.disabled = true;
    this.what.replaceChildren(h("dt", {}, "Loading"), h("dd", {}, "…"));
    this.params.textContent = "";
    if (!this.el.open) this.el.showModal();
    try {
      this.show(await api.task(taskId));
    } catch (err) {
      this.fail(err.message);
    }
  }

  show(task) {
    this.task = task;
    const row = (term, value) => [h("dt", {}, term), h("dd", {}, value)];
    this.what.replaceChildren(
      ...row("Task type", h("code", {}, task.taskType)),
      ...row("Step", task.summary || ""),
      ...row("Agent", this.runs.agentName(task.createdByAgentId)),
      ...row("Group", task.stepGroup || ""),
    );
    this.params.textContent = JSON.stringify(task.parameters ?? {}, null, 2);
    this.ok.disabled = false;
    this.ok.focus();
  }

  fail(message) {
    this.error.textContent = message;
    this.error.hidden = false;
  }

  async confirm() {
    if (!this.task) return;
    this.ok.disabled = true;
    try {
      await api.confirm(this.task.id, this.task.parametersHash);
      this.el.close("confirmed");
    } catch (err) {
      if (err.status === 409) {
        // The task changed since it was shown: show the new version, ask again.
        this.fail(`${err.message} The dialog now shows the current version.`);
        try {
          this.show(await api.task(this.task.id));
        } catch {
          // keep the message
        }
      } else {
        this.fail(err.message);
        this.ok.disabled = false;
      }
    }
  }
}
