// The run card: title, agents involved, tasks by step group with live status badges,
// per-group thinking; collapsible. An irreversible task waiting for consent offers
// "Review and confirm", which opens the confirmation dialog. An ended run whose completed
// steps can be undone offers "Undo" (asked first), which rolls the run back. A graph's run
// is drawn as its graph instead of groups (graph-view.js).

import { ask } from "./dialog.js";
import { avatar, h, uid } from "./dom.js";
import { GraphView, isGraphRun } from "./graph-view.js";

const TASK_STATUS = {
  open: "Waiting",
  in_progress: "In progress",
  awaiting_confirmation: "Needs your confirmation",
  completed: "Done",
  failed: "Failed",
  cancelled: "Cancelled",
  skipped: "Skipped",
  ambiguous: "Outcome unknown",
  undone: "Undone",
};

const RUN_STATUS = {
  planning: "Planning",
  awaiting_approval: "Awaiting approval",
  running: "Running",
  completed: "Completed",
  failed: "Failed",
  cancelled: "Cancelled",
  rolled_back: "Rolled back",
};

const FINISHED = new Set(["completed", "failed", "cancelled", "skipped", "undone"]);
const ENDED = new Set(["completed", "failed", "cancelled"]); // a run whose steps may be undone

export class RunCard {
  constructor(run, runs) {
    this.run = run;
    this.runs = runs;
    this.groups = new Map(); // group -> {el, list, progress}
    this.rows = new Map(); // task id -> {el, badge, action, detail}
    const titleId = uid("run");
    const bodyId = uid("runbody");
    this.title = h("h3.card-title", { id: titleId });
    this.status = h("span.pill");
    this.progress = h("span.card-progress");
    this.agents = h("ul.agents-involved", { "aria-label": "Agents involved" });
    this.body = h("div.run-body", { id: bodyId });
    this.error = h("p.card-error", { role: "alert", hidden: true });
    this.actions = h("div.card-actions.run-actions", { hidden: true });
    this.toggle = h("button.icon-button.card-toggle", {
      type: "button", "aria-expanded": "true", "aria-controls": bodyId,
      "aria-label": "Collapse run details", onclick: () => this.setOpen(this.body.hidden),
    }, h("span.chev", { "aria-hidden": "true" }, "▾"));
    this.el = h("section.card.run-card", { "aria-labelledby": titleId, dataset: { run: run.id } },
      h("header.card-head", {}, h("span.card-kind", {}, "Run"), this.title, this.progress, this.status,
        this.toggle),
      this.agents, this.body, this.error, this.actions);
  }

  setOpen(open) {
    this.body.hidden = !open;
    this.el.classList.toggle("closed", !open);
    this.toggle.setAttribute("aria-expanded", String(open));
    this.toggle.setAttribute("aria-label", `${open ? "Collapse" : "Expand"} run details`);
  }

  update() {
    const { run, runs } = this;
    this.title.textContent = run.title || "Run";
    this.status.textContent = RUN_STATUS[run.status] || run.status;
    this.status.dataset.status = run.status;
    this.el.dataset.status = run.status;
    const tasks = [...run.tasks.values()];
    const done = tasks.filter((t) => t.status === "completed" || t.status === "skipped").length;
    this.progress.textContent = tasks.length ? `${done}/${tasks.length} tasks` : "";
    this.renderAgents(tasks);
    if (isGraphRun(run)) this.updateGraph();
    else for (const [group, groupTasks] of runs.groups(run)) this.updateGroup(group, groupTasks);
    this.renderUndo();
  }

  /** The steps a rollback would undo, newest first, as the API last listed them. */
  undoable() {
    const { run } = this;
    if (!ENDED.has(run.status)) return [];
    return (run.undoable || []).map((id) => run.tasks.get(id)).filter((t) => t?.status === "completed");
  }

  renderUndo() {
    const steps = this.undoable();
    if (steps.length && !this.undoButton) {
      this.undoButton = h("button.small", { type: "button", onclick: () => this.rollback() }, "Undo");
      this.actions.append(this.undoButton);
    } else if (!steps.length && this.undoButton) {
      this.undoButton.remove();
      this.undoButton = null;
    }
    this.actions.hidden = !this.undoButton;
    const n = steps.length;
    this.undoButton?.setAttribute("aria-label",
      `Undo ${n} step${n === 1 ? "" : "s"} of ${this.run.title || "this run"}`);
  }

  async rollback() {
    const steps = this.undoable();
    if (!steps.length) return;
    const yes = await ask({
      title: "Undo this run?",
      text: "Hansa will undo these steps, newest first. Steps that cannot be undone stay as they are.",
      items: steps.map((t) => t.summary || t.taskType || ""),
      yes: "Undo the steps",
    });
    if (!yes || !this.undoButton) return;
    this.undoButton.disabled = true;
    this.error.hidden = true;
    try {
      await this.runs.rollback(this.run);
    } catch (err) {
      this.error.textContent = err.message;
      this.error.hidden = false;
      if (this.undoButton) this.undoButton.disabled = false;
    }
  }

  renderAgents(tasks) {
    const ids = this.run.agents.length ? this.run.agents.map((a) => a.id)
      : [...new Set(tasks.map((t) => t.agentId).filter(Boolean))];
    const key = ids.join(",");
    if (key === this.agentsKey) return;
    this.agentsKey = key;
    this.agents.replaceChildren(...ids.map((id) =>
      h("li", {}, avatar(this.runs.ctx.agents.get(id), "small"), this.runs.agentName(id))));
  }

  updateGraph() {
    if (!this.graph) {
      this.graph = new GraphView({
        statusText,
        confirm: (task) => this.runs.ctx.dialog.open(task.id, this.runs),
      });
      this.groups.forEach((g) => g.el.remove()); // drawn from events before the card came
      this.groups.clear();
      this.rows.clear();
      this.body.prepend(this.graph.el);
    }
    this.graph.update(this.run);
    for (const list of this.run.thinking.values()) {
      if (list.el.parentNode !== this.body) this.body.append(list.el);
    }
  }

  updateGroup(group, tasks) {
    let g = this.groups.get(group);
    if (!g) {
      const list = h("ol.tasks");
      const heading = h("h4.group-title", {}, h("span.group-badge", {}, group),
        h("span.group-name", {}), h("span.group-state"));
      g = { list, heading, el: h("section.run-group", { dataset: { group } }, heading, list) };
      this.groups.set(group, g);
      const next = [...this.groups.keys()].sort().find((k) => k > group);
      this.body.insertBefore(g.el, next ? this.groups.get(next).el : null);
    }
    const title = this.runs.stageTitle(this.run, group) || `Group ${group}`;
    g.heading.querySelector(".group-name").textContent = title;
    const state = groupState(tasks);
    g.el.dataset.state = state;
    g.heading.querySelector(".group-state").textContent =
      { done: "Done", active: "Working", failed: "Failed", waiting: "Needs you", pending: "Up next" }[state];
    tasks.forEach((task) => this.updateTask(task, g.list));
    const thinking = this.run.thinking.get(group);
    if (thinking && thinking.el.parentNode !== g.el) g.el.append(thinking.el);
  }

  updateTask(task, list) {
    let row = this.rows.get(task.id);
    if (!row) {
      row = {
        badge: h("span.badge"),
        summary: h("span.task-summary"),
        owner: h("span.task-owner"),
        face: h("span.task-face"),
        detail: h("div.task-detail"),
        action: h("div.task-action"),
      };
      row.el = h("li.task", { dataset: { task: task.id } }, row.face,
        h("div.task-main", {}, h("div.task-line", {}, row.owner, row.summary), row.detail), row.badge,
        row.action);
      this.rows.set(task.id, row);
      list.append(row.el);
    }
    row.el.dataset.status = task.status;
    row.face.replaceChildren(avatar(this.runs.ctx.agents.get(task.agentId), "small"));
    row.owner.textContent = this.runs.agentName(task.agentId);
    row.summary.textContent = task.summary || task.taskType || "";
    row.badge.textContent = statusText(task);
    row.badge.dataset.status = task.status;
    row.detail.replaceChildren(...taskDetail(task, this.runs));
    const needsConsent = task.status === "awaiting_confirmation";
    if (needsConsent && !row.confirm) {
      row.confirm = h("button.primary.small", {
        type: "button",
        "aria-label": `Review and confirm: ${task.summary || task.taskType}`,
        onclick: () => this.runs.ctx.dialog.open(task.id, this.runs),
      }, "Review and confirm");
      row.action.append(row.confirm);
    } else if (!needsConsent && row.confirm) {
      row.confirm.remove();
      row.confirm = null;
    }
  }
}

function statusText(task) {
  if (task.status === "open" && task.retryAt) { // a held wait, or back after a temporary problem
    return task.taskType === "wait.durable" ? "Waiting" : "Retrying";
  }
  return TASK_STATUS[task.status] || task.status;
}

function groupState(tasks) {
  if (tasks.some((t) => t.status === "failed")) return "failed";
  if (tasks.some((t) => t.status === "awaiting_confirmation")) return "waiting";
  if (tasks.length && tasks.every((t) => FINISHED.has(t.status))) return "done";
  if (tasks.some((t) => t.status === "in_progress" || FINISHED.has(t.status))) return "active";
  return "pending";
}

function taskDetail(task, runs) {
  const out = [h("code.task-type", {}, task.taskType || "")];
  if (!runs.reversible(task)) out.push(h("span.flag-irreversible", {}, "⚠ Cannot be undone"));
  const url = task.result?.url;
  const linkable = typeof url === "string" && /^(https?:\/\/|\/(?!\/))/.test(url);
  if (task.status === "completed" && !task.result?.deleted && linkable) {
    out.push(h("a.task-link", { href: url, target: "_blank", rel: "noopener" }, "Open result"));
  }
  if (task.status === "in_progress" && task.operations.length) {
    out.push(h("span.task-op", {}, task.operations[task.operations.length - 1]));
  }
  if (task.error) out.push(h("span.task-error", {}, typeof task.error === "string" ? task.error : "Failed"));
  return out;
}
