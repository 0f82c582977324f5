// The human's view of a handed-off conversation (issue 17): what the handoff is about, the
// conversation as it goes on (the feed's own rendering, live), a composer that writes as the
// person (POST /api/handoffs/{id}/messages, author "human"), and the buttons that resolve the
// matter or give the conversation back to the assistants.

import { api } from "./api.js";
import { dayTime, h } from "./dom.js";
import { Feed } from "./feed.js";
import { follow } from "./stream.js";

const CLOSED = {
  resolved: "Resolved: the matter is closed, and the assistants do not answer in this conversation.",
  returned: "Given back to the assistants: they answer the user's next message.",
  cancelled: "This handoff was cancelled.",
};

export class HumanView {
  /**
   * @param {HTMLElement} root the (empty) section that holds the view
   * @param {object} ctx {agents: Map, conversationName(id), openConversation(id), openQueue(),
   *   changed()}
   */
  constructor(root, ctx) {
    this.root = root;
    this.ctx = ctx;
    this.handoff = null;
    this.stream = null;
    this.kind = h("span.pill");
    this.title = h("h2.human-title", { id: "human-title" });
    this.facts = h("ul.facts");
    this.snapshot = h("p.human-snapshot");
    this.error = h("p.card-error", { role: "alert", hidden: true });
    this.resolveButton = h("button.small", { type: "button", onclick: () => this.move("resolve") },
      "Resolve");
    this.returnButton = h("button.small", { type: "button", onclick: () => this.move("return") },
      "Return to the assistants");
    this.userView = h("button.link-button", { type: "button",
      onclick: () => this.ctx.openConversation(this.handoff.conversationId) }, "See it as the user does");
    this.queueButton = h("button.link-button", { type: "button", onclick: () => this.ctx.openQueue() },
      "Handoff queue");
    this.feedRoot = h("div.feed", { role: "log", "aria-label": "Messages of the handed-off conversation",
      "aria-live": "polite" });
    this.scroller = h("div.feed-scroll", {}, this.feedRoot);
    this.notice = h("p.held-notice", { role: "status" });
    this.input = h("textarea", { id: "human-input", rows: "1", autocomplete: "off" });
    this.label = h("label.visually-hidden", { for: "human-input" }, "Reply as the person");
    this.send = h("button.primary", { type: "submit" }, "Send");
    this.form = h("form.composer", { "aria-label": "Write as the person who has the conversation" },
      this.label, this.input, this.send);
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.say();
    });
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.say();
      }
    });
    root.append(
      h("header.human-head", {},
        h("div.card-head", {}, h("span.card-kind", {}, "Handoff"), this.kind, this.title),
        this.facts, this.snapshot,
        h("div.card-actions", {}, this.resolveButton, this.returnButton, this.userView, this.queueButton),
        this.error),
      this.scroller,
      h("div.composer-area", {}, this.notice, this.form));
  }

  /** Show handoff ``id``: its facts, then its conversation from the start, live. */
  async open(id) {
    this.close();
    this.root.dataset.handoffId = id;
    this.error.hidden = true;
    this.feedRoot.replaceChildren();
    const feed = new Feed(this.feedRoot, this.ctx.agents);
    feed.userName = "The user";
    feed.onChange = () => { this.scroller.scrollTop = this.scroller.scrollHeight; };
    this.feed = feed;
    let handoff;
    try {
      handoff = await api.handoff(id);
    } catch (err) {
      if (this.feed === feed) this.fail(`Could not open that handoff: ${err.message}`);
      return;
    }
    if (this.feed !== feed) return; // another handoff was opened meanwhile
    this.show(handoff);
    this.stream = follow(api.eventsUrl(handoff.conversationId), {
      after: 0,
      onEvent: (ev) => {
        if (this.feed !== feed) return;
        feed.apply(ev);
        const d = ev.data || {};
        if (ev.type === "handoff_status" && d.handoffId === this.handoff?.id) {
          this.show({ ...this.handoff, status: d.status, assignee: d.assignee ?? this.handoff.assignee });
        }
      },
    });
  }

  close() {
    this.stream?.close();
    this.stream = null;
    this.feed = null;
    this.handoff = null;
  }

  show(handoff) {
    this.handoff = handoff;
    this.root.dataset.status = handoff.status;
    this.kind.textContent = handoff.status;
    this.kind.dataset.status = handoff.status;
    this.title.textContent = handoff.reason;
    const who = handoff.assignee || "you";
    const fact = (name, value) => value && h("li", {}, h("span", {}, `${name} `), value);
    this.facts.replaceChildren(...[
      fact("Conversation", this.ctx.conversationName(handoff.conversationId)),
      fact("Priority", handoff.priority),
      fact("Asked by", handoff.requestedBy?.kind),
      fact("Asked", dayTime(handoff.createdAt)),
      fact("Person", handoff.assignee),
    ].filter(Boolean));
    const snap = handoff.snapshot || {};
    const runs = (snap.runs || []).map((r) => `${r.title} (${r.status})`);
    this.snapshot.textContent = [
      snap.currentAgent && `Answering before the handoff: ${this.agentName(snap.currentAgent)}.`,
      runs.length && `Runs paused or open: ${runs.join("; ")}.`,
      handoff.pausedRuns?.length && `${handoff.pausedRuns.length} run(s) resume when you give it back.`,
    ].filter(Boolean).join(" ");
    const active = handoff.status === "active";
    const open = active || handoff.status === "pending";
    this.resolveButton.disabled = !open;
    this.returnButton.disabled = !open;
    this.input.disabled = !active;
    this.send.disabled = !active;
    this.label.textContent = `Reply as ${who}`;
    this.input.placeholder = active ? `Write to the user as ${who}…` : "";
    this.send.textContent = active ? `Send as ${who}` : "Send";
    this.notice.dataset.state = handoff.status;
    this.notice.textContent = active
      ? `You have this conversation as ${who}: the assistants do not answer while you hold it.`
      : handoff.status === "pending"
        ? "Accept this handoff in the queue before you write."
        : CLOSED[handoff.status] || "";
  }

  agentName(id) {
    return this.ctx.agents.get(id)?.displayName || id;
  }

  fail(message) {
    this.error.textContent = message;
    this.error.hidden = false;
  }

  async say() {
    const content = this.input.value.trim();
    if (!content || !this.handoff || this.send.disabled) return;
    this.send.disabled = true;
    this.error.hidden = true;
    try {
      await api.humanMessage(this.handoff.id, content);
      this.input.value = "";
    } catch (err) {
      this.fail(`Your message was not sent: ${err.message}`);
    } finally {
      this.send.disabled = this.handoff?.status !== "active";
      this.input.focus();
    }
  }

  async move(verb) {
    if (!this.handoff) return;
    this.error.hidden = true;
    this.resolveButton.disabled = true;
    this.returnButton.disabled = true;
    try {
      const moved = await (verb === "resolve"
        ? api.resolveHandoff(this.handoff.id)
        : api.returnHandoff(this.handoff.id));
      this.show(moved);
      this.ctx.changed();
    } catch (err) {
      this.fail(`Could not ${verb} it: ${err.message}`);
      this.show(this.handoff);
    }
  }
}
