// Runs as the panel knows them: built from events (run_created, task_created, task_status,
// thinking with a group, ...) and filled in by GET /api/runs/{id} (parameters, hashes,
// reversibility). Statuses come from the event log, which is the source of truth; a
// snapshot only supplies them for tasks that no event has described yet.

import { api } from "./api.js";
import { keyOf } from "./feed.js";
import { PlanCard } from "./plan-card.js";
import { RunCard } from "./run-card.js";
import { ThinkingList } from "./thinking.js";

const RUN_EVENTS = new Set([
  "run_created", "plan", "task_created", "task_updated", "task_status", "operation", "run_status",
]);

export class Runs {
  /**
   * @param {object} ctx {feed, agents: Map, taskTypes: Map, dialog, live: () => boolean}
   */
  constructor(ctx) {
    this.ctx = ctx;
    this.runs = new Map();
    this.loading = new Map();
  }

  get(id) {
    let run = this.runs.get(id);
    if (!run) {
      run = {
        id, title: "", status: "planning", plan: null, agents: [], tasks: new Map(),
        thinking: new Map(), planCard: null, runCard: null, edits: new Map(), error: "",
      };
      this.runs.set(id, run);
    }
    return run;
  }

  task(run, id) {
    let task = run.tasks.get(id);
    if (!task) {
      task = { id, stepGroup: "A", status: "open", statusSeq: 0, operations: [], order: run.tasks.size };
      run.tasks.set(id, task);
    }
    return task;
  }

  groupThinking(run, group) {
    let list = run.thinking.get(group);
    if (!list) {
      list = new ThinkingList(`Group ${group} thinking`);
      run.thinking.set(group, list);
    }
    return list;
  }

  reversible(task) {
    if (typeof task.isReversibleBySystem === "boolean") return task.isReversibleBySystem;
    return this.ctx.taskTypes.get(task.taskType)?.isReversibleBySystem !== false;
  }

  apply(ev) {
    const d = ev.data || {};
    const runId = ev.runId || d.runId;
    if (!runId || !RUN_EVENTS.has(ev.type)) return;
    const run = this.get(runId);
    switch (ev.type) {
      case "run_created":
        run.title = d.title || run.title;
        run.status = d.status || run.status;
        run.graphId = d.graphId || run.graphId; // a graph's run starts at once: no plan card
        this.ensureCards(run, ev);
        this.refresh(run);
        break;
      case "plan":
        run.plan = d.plan || run.plan;
        run.title = run.plan?.title || run.title;
        this.ensureCards(run, ev);
        break;
      case "task_created": {
        const task = this.task(run, ev.taskId);
        Object.assign(task, { taskType: d.taskType, stepGroup: d.stepGroup || task.stepGroup,
          summary: d.summary, agentId: ev.agentId });
        break;
      }
      case "task_updated": {
        // edited before approval: the new parameters, hash and reversibility come with the card
        const task = this.task(run, ev.taskId);
        Object.assign(task, { summary: d.summary, agentId: ev.agentId, parametersHash: d.parametersHash });
        this.refresh(run);
        break;
      }
      case "task_status": {
        const task = this.task(run, ev.taskId);
        Object.assign(task, { status: d.status, statusSeq: ev.seq, retryAt: d.retryAt || null });
        if (d.result) task.result = d.result;
        if (d.status === "awaiting_confirmation") this.refresh(run);
        break;
      }
      case "operation":
        if (ev.taskId) this.task(run, ev.taskId).operations.push(d.name);
        break;
      case "run_status":
        run.status = d.status || run.status;
        this.ensureCards(run, ev);
        // a plan filling the run opened at Hans's first question: its steps' parameters;
        // an ended run: what can be undone
        if (["awaiting_approval", "completed", "failed", "cancelled"].includes(run.status)) this.refresh(run);
        break;
      default:
        break;
    }
    this.update(run);
  }

  thinking(ev, entry) {
    const run = this.get(ev.runId);
    this.groupThinking(run, entry.group).add({ ...entry, agentId: ev.agentId });
    this.update(run);
  }

  /** Plan card while a run awaits approval; run card once it runs (both stay in history). */
  ensureCards(run, ev = null) {
    const { feed } = this.ctx;
    const key = ev ? keyOf(ev) : `run:${run.id}`;
    if (!run.planCard && !run.graphId && (run.status === "awaiting_approval" || run.plan)) {
      run.planCard = new PlanCard(run, this);
      run.planCard.el.dataset.key = key;
      feed.add(run.planCard.el);
    }
    if (!run.runCard && !["planning", "awaiting_approval"].includes(run.status)) {
      run.runCard = new RunCard(run, this);
      run.runCard.el.dataset.key = key;
      feed.add(run.runCard.el);
    }
  }

  update(run) {
    run.planCard?.update();
    run.runCard?.update();
  }

  /** Fetch the run card from the API (coalesced) and merge it in. */
  refresh(run) {
    if (!this.ctx.live()) {
      run.needsRefresh = true; // after the replay: one fetch per run
      return this.loading.get(run.id);
    }
    if (this.loading.has(run.id)) {
      run.refreshAgain = true;
      return this.loading.get(run.id);
    }
    const promise = api.run(run.id).then((snap) => this.merge(run, snap)).catch((err) => {
      run.error = err.message;
      this.update(run);
    }).finally(() => {
      this.loading.delete(run.id);
      if (run.refreshAgain) {
        run.refreshAgain = false;
        this.refresh(run);
      }
    });
    this.loading.set(run.id, promise);
    return promise;
  }

  afterReplay() {
    for (const run of this.runs.values()) {
      if (run.needsRefresh) {
        run.needsRefresh = false;
        this.refresh(run);
      }
    }
  }

  merge(run, snap) {
    run.title = snap.title || run.title;
    run.agents = snap.agents || run.agents;
    run.plan = run.plan || snap.metadata?.plan || null;
    run.projectId = snap.projectId;
    run.metadata = snap.metadata || run.metadata;
    run.undoable = snap.undoableTaskIds || [];
    for (const group of snap.groups || []) {
      for (const t of group.tasks || []) {
        const task = this.task(run, t.id);
        const status = task.statusSeq ? task.status : t.status;
        Object.assign(task, {
          stepGroup: t.stepGroup, sequenceOrder: t.sequenceOrder, taskType: t.taskType,
          nodeId: t.nodeId, dependsOn: t.dependsOn,
          summary: t.summary, agentId: t.createdByAgentId, parameters: t.parameters,
          parametersHash: t.parametersHash, isReversibleBySystem: t.isReversibleBySystem,
          result: t.result ?? task.result, error: t.error, status,
        });
      }
    }
    this.ensureCards(run);
    this.update(run);
  }

  /** Tasks grouped by step group, in order: [[group, [task...]], ...]. */
  groups(run) {
    const byGroup = new Map();
    const tasks = [...run.tasks.values()].sort((a, b) =>
      (a.sequenceOrder ?? a.order) - (b.sequenceOrder ?? b.order));
    for (const task of tasks) {
      if (!byGroup.has(task.stepGroup)) byGroup.set(task.stepGroup, []);
      byGroup.get(task.stepGroup).push(task);
    }
    return [...byGroup.entries()].sort(([a], [b]) => a.localeCompare(b));
  }

  stageTitle(run, group) {
    return run.plan?.stages?.find((s) => s.group === group)?.title || "";
  }

  agentName(id) {
    return this.ctx.agents.get(id)?.displayName || id || "An agent";
  }

  async approve(run) {
    const edits = [...run.edits.entries()].map(([taskId, parameters]) => ({ taskId, parameters }));
    const snap = await api.approve(run.id, edits);
    run.edits.clear();
    this.merge(run, snap);
  }

  async cancel(run) {
    this.merge(run, await api.cancel(run.id));
  }

  /** Undo every completed step of an ended run that can be undone (law of no return). */
  async rollback(run) {
    this.merge(run, await api.rollback(run.id));
  }
}
