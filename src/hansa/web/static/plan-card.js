// The plan card: the proposed plan with its groups, owners and irreversible steps flagged,
// with Approve, Cancel, and per-step Adjust (edits are sent with the approval).

import { avatar, h, uid } from "./dom.js";

const STATUS_TEXT = {
  planning: "Being planned",
  awaiting_approval: "Waiting for your approval",
  running: "Approved",
  completed: "Approved",
  failed: "Approved",
  cancelled: "Cancelled",
};

export class PlanCard {
  constructor(run, runs) {
    this.run = run;
    this.runs = runs;
    this.editing = null; // task id whose form is open
    this.busy = false;
    const titleId = uid("plan");
    this.title = h("h3.card-title", { id: titleId });
    this.status = h("span.pill");
    this.intent = h("p.card-intent");
    this.facts = h("ul.facts", { "aria-label": "What the plan is based on" });
    this.steps = h("div.plan-groups");
    this.error = h("p.card-error", { role: "alert", hidden: true });
    this.actions = h("div.card-actions");
    this.el = h("section.card.plan-card", { "aria-labelledby": titleId, dataset: { run: run.id } },
      h("header.card-head", {}, h("span.card-kind", {}, "Plan"), this.title, this.status),
      this.intent, this.facts, this.steps, this.error, this.actions);
    this.signature = "";
  }

  get awaiting() {
    return this.run.status === "awaiting_approval";
  }

  update() {
    const { run } = this;
    this.title.textContent = run.title || "Proposed plan";
    this.status.textContent = STATUS_TEXT[run.status] || run.status;
    this.status.dataset.status = run.status;
    this.el.dataset.status = run.status;
    this.intent.textContent = run.plan?.intent || "";
    this.intent.hidden = !run.plan?.intent;
    this.renderFacts();
    // Rebuild the steps only when what they show changed, and never under an open form.
    const signature = JSON.stringify([...run.tasks.values()].map((t) =>
      [t.id, t.summary, t.agentId, t.stepGroup, t.isReversibleBySystem, t.parameters, run.edits.get(t.id)]))
      + run.status + (run.plan ? 1 : 0);
    if (signature !== this.signature && !this.editing) {
      this.signature = signature;
      this.renderSteps();
    }
    this.renderActions();
    this.error.hidden = !run.error;
    this.error.textContent = run.error || "";
  }

  renderFacts() {
    const plan = this.run.plan;
    const facts = (plan?.requirements || []).filter((r) => r.value && r.source === "user");
    const fork = plan?.forks?.find((f) => f.id === plan.chosenFork);
    this.facts.replaceChildren(...facts.map((r) => h("li", {}, h("span", {}, `${r.label}: `),
      r.name === "layout" && fork ? `${r.value} — ${fork.title}` : String(r.value))));
    this.facts.hidden = facts.length === 0;
  }

  renderSteps() {
    const { run, runs } = this;
    this.steps.replaceChildren(...runs.groups(run).map(([group, tasks]) => {
      const stage = runs.stageTitle(run, group);
      return h("section.plan-group", { dataset: { group } },
        h("h4.group-title", {}, h("span.group-badge", {}, group), stage || `Group ${group}`),
        h("ol.steps", {}, tasks.map((task) => this.step(task))));
    }));
  }

  step(task) {
    const { runs } = this;
    const agent = runs.ctx.agents.get(task.agentId);
    const irreversible = !runs.reversible(task);
    const edited = this.run.edits.has(task.id);
    const row = h("li.step", { dataset: { task: task.id, irreversible: String(irreversible) } },
      avatar(agent, "small"),
      h("div.step-main", {},
        h("div.step-line", {}, h("span.step-owner", {}, runs.agentName(task.agentId)),
          h("span.step-summary", {}, task.summary || task.taskType || "")),
        h("div.step-meta", {}, h("code.task-type", {}, task.taskType || ""),
          irreversible && h("span.flag-irreversible", {}, "⚠ Cannot be undone — you confirm it before it runs"),
          edited && h("span.flag-edited", {}, "Adjusted"))),
      this.awaiting && task.parameters && h("button.link-button", {
        type: "button",
        "aria-label": `Adjust step: ${task.summary || task.taskType}`,
        onclick: () => this.openForm(task, row),
      }, "Adjust"));
    return row;
  }

  openForm(task, row) {
    if (this.editing) return;
    this.editing = task.id;
    const current = { ...task.parameters, ...(this.run.edits.get(task.id) || {}) };
    const fields = Object.entries(current).map(([key, value]) => field(key, value));
    const form = h("form.adjust", {
      "aria-label": `Adjust ${task.summary || task.taskType}`,
      onsubmit: (e) => {
        e.preventDefault();
        const changed = {};
        for (const f of fields) {
          const value = f.read();
          if (JSON.stringify(value) !== JSON.stringify(task.parameters[f.key])) changed[f.key] = value;
        }
        if (Object.keys(changed).length) this.run.edits.set(task.id, changed);
        else this.run.edits.delete(task.id);
        this.closeForm();
      },
    }, fields.map((f) => f.el), h("div.form-actions", {},
      h("button.primary.small", { type: "submit" }, "Save step"),
      h("button.small", { type: "button", onclick: () => this.closeForm() }, "Discard")));
    row.after(h("li.step-form", {}, form));
    this.renderActions();
    fields[0]?.input.focus();
  }

  closeForm() {
    const id = this.editing;
    this.editing = null;
    this.signature = "";
    this.update();
    this.steps.querySelector(`[data-task="${CSS.escape(id)}"] button`)?.focus();
  }

  renderActions() {
    if (!this.approveButton) {
      this.approveButton = h("button.primary", { type: "button", onclick: () => this.act("approve") });
      this.cancelButton = h("button", { type: "button", onclick: () => this.act("cancel") }, "Cancel plan");
      this.actions.append(this.approveButton, this.cancelButton,
        h("span.hint", {}, "Use Adjust on a step to change it before approving."));
    }
    this.actions.hidden = !this.awaiting;
    const n = this.run.edits.size;
    this.approveButton.textContent = n ? `Approve with ${n} change${n > 1 ? "s" : ""}` : "Approve";
    this.approveButton.disabled = this.busy || !!this.editing;
    this.cancelButton.disabled = this.busy;
  }

  async act(what) {
    this.busy = true;
    this.run.error = "";
    this.update();
    try {
      await (what === "approve" ? this.runs.approve(this.run) : this.runs.cancel(this.run));
    } catch (err) {
      this.run.error = err.message;
    } finally {
      this.busy = false;
      this.update();
    }
  }
}

/** One labelled input for a parameter; read() returns a value of the original type. */
function field(key, value) {
  const id = uid("param");
  const isText = typeof value === "string";
  const long = !isText || value.length > 60 || value.includes("\n");
  const shown = isText ? value : JSON.stringify(value, null, 2);
  const input = long
    ? h("textarea", { id, name: key, rows: Math.min(6, shown.split("\n").length + 1) })
    : h("input", { id, name: key, type: typeof value === "number" ? "number" : "text" });
  input.value = shown;
  return {
    key,
    input,
    el: h("div.field", {}, h("label", { for: id }, key), input),
    read() {
      if (typeof value === "number") return Number(input.value);
      if (isText) return input.value;
      try {
        return JSON.parse(input.value);
      } catch {
        return input.value;
      }
    },
  };
}
