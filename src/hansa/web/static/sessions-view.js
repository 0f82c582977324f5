// Agent sessions (seed 004, issue 20): the tenant's sessions (GET /api/agent-sessions), a
// form that starts one, and a session's detail: its steps as they are recorded, live over
// the session's event stream (session_step, session_status), and its controls: pause,
// resume, stop, interrupt with guidance for the next step, delete.
//
// The stream is the session's SSE (/api/agent-sessions/{id}/events) read by stream.js's
// follow(): same-origin fetch, so it carries the panel's session cookie, and it resumes
// with Last-Event-ID. Replayed from the start, it draws the steps already recorded too.

import { api } from "./api.js";
import { avatar, dayTime, h, uid } from "./dom.js";
import { follow } from "./stream.js";

const DEFAULT_MAX_STEPS = 100;
const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const FINAL = new Set(["stopped", "completed", "failed"]);
const REASONS = {
  done: "goal reached",
  max_steps: "step limit reached",
  max_runtime: "time limit reached",
  stopped: "stopped",
  paused: "paused",
};

export class SessionsView {
  /**
   * @param {HTMLElement} root the (empty) section that holds the view
   * @param {object} ctx {agents: Map, openSession(id), openList(), openConversation(id)}
   */
  constructor(root, ctx) {
    this.root = root;
    this.ctx = ctx;
    this.session = null;
    this.stream = null;
    this.taken = new Map();
    this.listPane = this.buildList();
    this.detailPane = this.buildDetail();
    root.append(h("div.sessions-scroll", {}, this.listPane, this.detailPane));
  }

  // --- the list and the form that starts a session ---

  buildList() {
    const agentId = uid("session-agent");
    const goalId = uid("session-goal");
    const maxId = uid("session-max");
    this.agentPicker = h("select", { id: agentId, required: true });
    this.goal = h("textarea", { id: goalId, rows: "2", maxlength: "4000", required: true,
      placeholder: "e.g. Check the site's rankings every morning and report changes" });
    this.maxSteps = h("input", { id: maxId, type: "number", min: "1", max: "10000",
      value: String(DEFAULT_MAX_STEPS), required: true });
    this.startButton = h("button.primary", { type: "submit" }, "Start session");
    this.formError = h("p.card-error", { role: "alert", hidden: true });
    const form = h("form.session-form", { "aria-labelledby": "session-form-title" },
      h("h3.session-form-title", { id: "session-form-title" }, "Start a session"),
      h("div.session-form-fields", {},
        h("div.field", {}, h("label", { for: agentId }, "Agent"), this.agentPicker),
        h("div.field.session-goal", {}, h("label", { for: goalId }, "Goal"), this.goal),
        h("div.field.session-max", {}, h("label", { for: maxId }, "Max steps"), this.maxSteps)),
      this.formError,
      h("div.form-actions", {}, this.startButton));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.start();
    });
    this.list = h("ul.session-list", { "aria-labelledby": "sessions-title" });
    this.listStatus = h("p.sheet-status", { role: "status" });
    return h("div.sessions-pane", {},
      h("header.sheet-head", {},
        h("h2", { id: "sessions-title" }, "Agent sessions"),
        h("button.small", { type: "button", onclick: () => this.showList() }, "Refresh")),
      h("p.sheet-intro", {},
        "An agent working towards a goal one step at a time, each step recorded. ",
        "Pause, guide or stop it while it runs."),
      form, this.listStatus, this.list);
  }

  /** The list (and the form), with the agents to pick from. */
  async showList() {
    this.close();
    this.detailPane.hidden = true;
    this.listPane.hidden = false;
    this.fillAgents();
    this.listStatus.textContent = "Loading…";
    try {
      const sessions = await api.sessions();
      if (this.detailPane.hidden === false) return; // a session was opened meanwhile
      this.list.replaceChildren(...sessions.map((s) => this.row(s)));
      this.listStatus.textContent = sessions.length ? "" : "No session yet: start one above.";
    } catch (err) {
      this.listStatus.textContent = `Could not load the sessions: ${err.message}`;
    }
  }

  fillAgents() {
    const chosen = this.agentPicker.value;
    const agents = [...this.ctx.agents.values()];
    this.agentPicker.replaceChildren(...agents.map((a) => h("option", { value: a.id }, a.displayName)));
    if (chosen && agents.some((a) => a.id === chosen)) this.agentPicker.value = chosen;
  }

  row(s) {
    const goalId = uid("session");
    return h("li.session-row", { dataset: { sessionId: s.id, status: s.status } },
      avatar(this.ctx.agents.get(s.agentId), "small"),
      h("div.session-row-main", {},
        h("div.handoff-head", {},
          statusPill(s.status),
          h("span.session-goal-text", { id: goalId }, s.goal)),
        h("div.rule-meta", {},
          h("span", {}, this.agentName(s.agentId)),
          h("span.session-count", {}, stepsText(s)),
          s.reason && s.reason !== s.status && h("span.session-reason", {}, reasonText(s.reason)),
          h("span", {}, `started ${dayTime(s.createdAt)}`))),
      h("button.small", { type: "button", "aria-describedby": goalId,
        onclick: () => this.ctx.openSession(s.id) }, "Open"));
  }

  async start() {
    const goal = this.goal.value.trim();
    const maxSteps = Number(this.maxSteps.value);
    this.formError.hidden = true;
    if (!goal) return this.formFail("Give the session a goal.", this.goal);
    if (!Number.isInteger(maxSteps) || maxSteps < 1) {
      return this.formFail("Max steps is a whole number of at least 1.", this.maxSteps);
    }
    this.startButton.disabled = true;
    try {
      const made = await api.startSession({ agentId: this.agentPicker.value, goal, maxSteps });
      this.goal.value = "";
      this.ctx.openSession(made.id);
    } catch (err) {
      this.formFail(`The session was not started: ${err.message}`);
    } finally {
      this.startButton.disabled = false;
    }
  }

  formFail(message, field = null) {
    this.formError.textContent = message;
    this.formError.hidden = false;
    field?.focus();
  }

  // --- one session: its steps, live, and its controls ---

  buildDetail() {
    this.pill = h("span.pill.session-status");
    this.title = h("h2.session-title", { id: "session-title" });
    this.facts = h("ul.facts");
    this.detailError = h("p.card-error", { role: "alert", hidden: true });
    const button = (label, verb, cls = "button.small") =>
      h(cls, { type: "button", onclick: () => this.control(verb) }, label);
    this.controls = {
      pause: button("Pause", "pause"),
      resume: button("Resume", "resume"),
      stop: button("Stop", "stop"),
      delete: h("button.small", { type: "button", onclick: () => this.askDelete() }, "Delete"),
    };
    const guidanceId = uid("guidance");
    this.guidance = h("textarea", { id: guidanceId, rows: "2", maxlength: "4000",
      placeholder: "e.g. Focus on the pricing pages first" });
    this.interruptButton = h("button.primary.small", { type: "submit" }, "Interrupt");
    this.waiting = h("p.held-notice.session-waiting", { role: "status" });
    this.guidanceForm = h("form.session-guidance", { "aria-label": "Interrupt with guidance" },
      h("div.field", {}, h("label", { for: guidanceId }, "Guidance for the next step"), this.guidance),
      h("div.form-actions", {}, this.interruptButton));
    this.guidanceForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.interrupt();
    });
    this.guidance.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.interrupt();
      }
    });
    this.steps = h("ol.session-steps", { reversed: true, role: "log", "aria-label": "Steps, the newest first",
      "aria-live": "polite" });
    this.stepsStatus = h("p.sheet-status", { role: "status" });
    this.deleteDialog = this.buildDeleteDialog();
    return h("div.sessions-pane", { hidden: true },
      h("header.session-head", {},
        h("div.card-actions.session-nav", {},
          h("button.link-button", { type: "button", onclick: () => this.ctx.openList() },
            "← All sessions"),
          h("button.link-button", { type: "button",
            onclick: () => this.ctx.openConversation(this.session.conversationId) },
          "Open its conversation")),
        h("div.card-head", {}, h("span.card-kind", {}, "Session"), this.pill, this.title),
        this.facts,
        h("div.card-actions.session-controls", { role: "group", "aria-label": "Session controls" },
          this.controls.pause, this.controls.resume, this.controls.stop, this.controls.delete),
        this.detailError, this.guidanceForm, this.waiting),
      h("h3.session-steps-title", {}, "Steps, the newest first"),
      this.stepsStatus, this.steps);
  }

  buildDeleteDialog() {
    const yes = h("button.danger", { type: "button", onclick: () => {
      dialog.close();
      this.control("delete");
    } }, "Delete");
    const dialog = h("dialog.confirm", { "aria-labelledby": "session-delete-title" },
      h("h2", { id: "session-delete-title" }, "Delete this session?"),
      h("p", {}, "It stops, and the session and its steps are removed. ",
        "What it said stays in its conversation."),
      h("div.dialog-actions", {},
        h("button", { type: "button", onclick: () => dialog.close() }, "Keep it"), yes));
    document.body.append(dialog);
    return dialog;
  }

  /** Show session ``id``: its facts, then its steps from the first, live. */
  async open(id) {
    this.close();
    this.listPane.hidden = true;
    this.detailPane.hidden = false;
    this.detailError.hidden = true;
    this.steps.replaceChildren();
    this.taken = new Map(); // iteration -> the guidance that step took
    this.stepsStatus.textContent = "Loading…";
    this.root.dataset.sessionId = id;
    const opened = {};
    this.opened = opened;
    let session;
    try {
      session = await api.session(id);
    } catch (err) {
      if (this.opened === opened) this.fail(`Could not open that session: ${err.message}`);
      return;
    }
    if (this.opened !== opened) return; // another session was opened meanwhile
    this.show(session);
    this.stream = follow(api.sessionEventsUrl(id), {
      after: 0,
      onEvent: (ev) => {
        if (this.opened === opened) this.apply(ev);
      },
    });
  }

  close() {
    this.stream?.close();
    this.stream = null;
    this.opened = null;
    this.session = null;
    delete this.root.dataset.sessionId;
  }

  apply(ev) {
    const d = ev.data || {};
    if (d.sessionId !== this.session?.id) return;
    if (ev.type === "session_step") {
      if (this.steps.querySelector(`[data-iteration="${d.iteration}"]`)) return;
      this.steps.prepend(this.stepItem(d, ev.createdAt)); // the newest first, under the controls
      if (d.guidance) this.taken.set(d.iteration, d.guidance);
      const taken = d.guidance && d.guidance === this.session.guidance;
      const step = Math.max(this.session.step, d.iteration);
      this.show({ ...this.session, step, nextStep: d.nextStep, guidance: taken ? null : this.session.guidance });
    } else if (ev.type === "session_status") {
      this.show({ ...this.session, status: d.status, reason: d.reason });
    }
  }

  stepItem(d, at) {
    return h("li.session-step", { dataset: { iteration: String(d.iteration), done: String(d.done) } },
      h("div.session-step-head", {},
        h("span.group-badge", {}, String(d.iteration)),
        h("code.session-step-cursor", {}, `${d.step} → ${d.nextStep}`),
        d.done && h("span.badge", { dataset: { status: "completed" } }, "done"),
        h("time.session-step-time", { datetime: at, title: dayTime(at) }, seconds(at))),
      d.guidance && h("p.session-step-guidance", {}, h("span", {}, "Guidance: "), d.guidance),
      d.tools && d.tools.length > 0 && h("p.session-step-tools", {}, h("span", {}, "Tools: "),
        d.tools.map((t) => (t.ok ? `${t.name} ✓` : `${t.name} ✗ (${t.error})`)).join(", ")),
      h("p.session-step-text", {}, d.text || "(no text)"));
  }

  show(session) {
    this.session = session;
    const { status } = session;
    this.root.dataset.status = status;
    this.pill.textContent = status;
    this.pill.dataset.status = status;
    this.title.textContent = session.goal;
    const fact = (name, value) => h("li", {}, h("span", {}, `${name} `), value);
    this.facts.replaceChildren(...[
      fact("Agent", this.agentName(session.agentId)),
      h("li.session-count", {}, h("span", {}, "Steps "), stepsText(session)),
      fact("Next step", session.nextStep),
      session.reason && session.reason !== status && fact("Reason", reasonText(session.reason)),
      fact("Started", dayTime(session.createdAt)),
    ].filter(Boolean));
    const final = FINAL.has(status);
    this.controls.pause.disabled = status !== "running";
    this.controls.resume.disabled = status !== "paused";
    // A stopping session finishes its step in flight, then stops: no guidance would be read
    // (the API answers 409), but a second stop may still end it.
    const ending = final || status === "stopping";
    this.controls.stop.disabled = final;
    this.guidance.disabled = ending;
    this.interruptButton.disabled = ending;
    this.waiting.textContent = session.guidance && !ending
      ? `Guidance waiting for the next step: “${session.guidance}”` : "";
    const count = this.steps.children.length;
    this.stepsStatus.textContent = count ? "" : final ? "No step was recorded." : "Waiting for the first step…";
  }

  async control(verb) {
    const id = this.session?.id;
    if (!id) return;
    this.detailError.hidden = true;
    for (const b of Object.values(this.controls)) b.disabled = true;
    try {
      if (verb === "delete") {
        this.stream?.close(); // its stream would answer 404 once the session is gone
        this.stream = null;
        await api.deleteSession(id);
        this.ctx.openList();
        return;
      }
      const changed = await api.controlSession(id, verb);
      if (this.session?.id === id) this.show(this.merge(changed));
    } catch (err) {
      this.fail(`Could not ${verb} the session: ${err.message}`);
    }
    if (this.session?.id === id) {
      this.controls.delete.disabled = false;
      this.show(this.session);
    }
  }

  /** A control's answer, without undoing the steps the stream drew meanwhile. */
  merge(changed) {
    const shown = this.session;
    if (shown.step <= changed.step) return changed;
    const later = [...this.taken].filter(([iteration]) => iteration > changed.step);
    const taken = later.some(([, guidance]) => guidance === changed.guidance);
    return { ...changed, step: shown.step, nextStep: shown.nextStep,
      guidance: taken ? null : changed.guidance };
  }

  askDelete() {
    if (this.session && !this.deleteDialog.open) this.deleteDialog.showModal();
  }

  async interrupt() {
    const text = this.guidance.value.trim();
    const id = this.session?.id;
    if (!text || !id || this.interruptButton.disabled) return;
    this.interruptButton.disabled = true;
    this.detailError.hidden = true;
    try {
      const changed = await api.interruptSession(id, text);
      this.guidance.value = "";
      if (this.session?.id === id) this.show(this.merge(changed));
    } catch (err) {
      this.fail(`The guidance was not given: ${err.message}`);
    } finally {
      if (this.session?.id === id) this.show(this.session);
    }
  }

  agentName(id) {
    const agent = this.ctx.agents.get(id);
    return agent?.displayName || id;
  }

  fail(message) {
    this.detailError.textContent = message;
    this.detailError.hidden = false;
  }
}

/** "14:05:09" for an ISO timestamp (local time): steps come seconds apart. */
function seconds(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : TIME.format(d);
}

function statusPill(status) {
  return h("span.pill", { dataset: { status } }, status);
}

function stepsText(s) {
  return `${s.step} of ${s.maxSteps} steps`;
}

function reasonText(reason) {
  return REASONS[reason] || reason;
}
