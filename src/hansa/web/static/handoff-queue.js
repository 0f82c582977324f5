// The handoff queue (issue 17): conversations waiting for a person and those a person has,
// by priority (urgent first), then age (oldest first), as GET /api/handoffs orders them.
// A person accepts one under their name and gets the human's view of it.

import { api } from "./api.js";
import { dayTime, h, uid } from "./dom.js";
import { sheet } from "./sheet.js";

const RANK = { urgent: 3, high: 2, normal: 1, low: 0 };
const NAME_KEY = "hansa.assignee";

/** The queue's order: priority first, then the oldest first. */
export function byPriorityThenAge(a, b) {
  return (RANK[b.priority] ?? 0) - (RANK[a.priority] ?? 0) || a.createdAt.localeCompare(b.createdAt);
}

export class HandoffQueue {
  /**
   * @param {object} ctx {openHandoff(id), conversationName(id), counted(pending)}
   */
  constructor(ctx) {
    this.ctx = ctx;
    const nameId = uid("assignee");
    this.name = h("input", {
      id: nameId, type: "text", autocomplete: "name", maxlength: "200",
      value: readName(), placeholder: "e.g. Ana",
    });
    this.list = h("ul.handoff-list", { "aria-labelledby": "handoffs-title" });
    this.error = h("p.card-error", { role: "alert", hidden: true });
    ({ el: this.el, status: this.status, open: this.open } = sheet({
      className: "handoff-queue", titleId: "handoffs-title", title: "Handoff queue",
      closeLabel: "Close the handoff queue",
      intro: "Conversations handed to a person. While a person has one, the assistants do not answer in it.",
      load: () => this.load(),
    },
    h("div.field.assignee-field", {},
      h("label", { for: nameId }, "Your name (shown to the user)"), this.name),
    this.error, this.list));
  }

  /** The open handoffs, in the queue's order; tells ctx how many wait. */
  async fetch() {
    const [pending, active] = await Promise.all([api.handoffs("pending"), api.handoffs("active")]);
    this.ctx.counted(pending.length);
    return [...pending.sort(byPriorityThenAge), ...active.sort(byPriorityThenAge)];
  }

  async load() {
    this.status.textContent = "Loading…";
    this.error.hidden = true;
    try {
      const open = await this.fetch();
      this.list.replaceChildren(...open.map((x) => this.row(x)));
      this.status.textContent = open.length ? "" : "No conversation is waiting for a person.";
    } catch (err) {
      this.status.textContent = `Could not load the queue: ${err.message}`;
    }
  }

  row(handoff) {
    const pending = handoff.status === "pending";
    const titleId = uid("handoff");
    const action = pending
      ? h("button.primary.small", { type: "button", "aria-describedby": titleId,
        onclick: (e) => this.accept(handoff, e.currentTarget) }, "Accept")
      : h("button.small", { type: "button", "aria-describedby": titleId,
        onclick: () => this.show(handoff.id) }, "Open");
    return h("li.handoff", { dataset: { handoffId: handoff.id, status: handoff.status } },
      h("div.handoff-main", {},
        h("div.handoff-head", {},
          h("span.pill", { dataset: { priority: handoff.priority } }, handoff.priority),
          h("span.handoff-reason", { id: titleId }, handoff.reason)),
        h("div.rule-meta", {},
          h("span", {}, this.ctx.conversationName(handoff.conversationId)),
          h("span", {}, pending
            ? `waiting since ${dayTime(handoff.createdAt)}`
            : `${handoff.assignee || "a person"} has it since ${dayTime(handoff.assignedAt)}`),
          h("span", {}, `asked by ${handoff.requestedBy?.kind || "api"}`))),
      action);
  }

  async accept(handoff, button) {
    const assignee = this.name.value.trim();
    this.error.hidden = true;
    if (!assignee) {
      this.error.textContent = "Give your name first: the user sees who took over.";
      this.error.hidden = false;
      this.name.focus();
      return;
    }
    saveName(assignee);
    button.disabled = true;
    try {
      await api.acceptHandoff(handoff.id, assignee);
      this.show(handoff.id);
    } catch (err) {
      this.error.textContent = `Could not accept it: ${err.message}`;
      this.error.hidden = false;
      button.disabled = false;
      this.load();
    }
  }

  show(id) {
    this.el.close();
    this.ctx.openHandoff(id);
  }
}

function readName() {
  try {
    return localStorage.getItem(NAME_KEY) || "";
  } catch {
    return "";
  }
}

function saveName(name) {
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch {
    // private mode: asked again next time
  }
}
