// The conversation feed: user messages, answers (streamed, with their thinking preview),
// a person's messages during a handoff, status chips. Live and replayed events go through
// the same apply(); during a replay the new nodes collect in a fragment that is attached
// once (fast first render).

import { avatar, clock, h } from "./dom.js";
import { firstSentence, renderMarkdown } from "./markdown.js";
import { ThinkingList } from "./thinking.js";
import { explain, TURN_TAKING } from "./turn-taking.js";

// Answers longer than this are collapsed to their first sentence and an expand control.
const LONG_CHARS = 1200;
const LONG_LINES = 16;

/** What an event belongs to in the feed: its turn, or outside a turn its run. */
export function keyOf(ev) {
  return ev.turnId || (ev.runId ? `run:${ev.runId}` : "conversation");
}

/** One assistant answer: header, Markdown body, thinking preview; fills in as events come. */
class Answer {
  constructor(feed, key, agentId, createdAt) {
    this.feed = feed;
    this.key = key;
    this.text = "";
    this.messageId = null;
    this.final = false;
    this.body = h("div.msg-body.md");
    this.who = h("span.msg-author");
    this.role = h("span.msg-role");
    this.time = h("time.msg-time");
    this.face = h("span.msg-face");
    this.thinking = new ThinkingList("Thinking");
    this.more = null;
    this.el = h("article.msg.msg-assistant.pending", {},
      this.face,
      h("div.msg-main", {}, h("header.msg-head", {}, this.who, this.role, this.time), this.body,
        this.thinking.el));
    this.setAgent(agentId, createdAt);
  }

  setAgent(agentId, createdAt) {
    if (!agentId || agentId === this.agentId) return;
    this.agentId = agentId;
    const agent = this.feed.agents.get(agentId);
    this.face.replaceChildren(avatar(agent));
    this.who.textContent = agent?.displayName || agentId;
    this.role.textContent = agent?.role && agent.role !== agent.displayName ? agent.role : "";
    this.el.setAttribute("aria-label", `${this.who.textContent} said`);
    if (createdAt) {
      this.time.dateTime = createdAt;
      this.time.textContent = clock(createdAt);
    }
  }

  /**
   * The first words of an answer go below what arrived while it was only thinking (status
   * chips, other messages), but above the plan or run cards of its own turn.
   */
  placeLast() {
    if (this.text || !this.el.nextElementSibling) return;
    const cards = [];
    for (let n = this.el.nextElementSibling; n; n = n.nextElementSibling) {
      if (n.classList.contains("card") && n.dataset.key === this.key) cards.push(n);
    }
    this.feed.add(this.el);
    cards.forEach((card) => this.feed.add(card));
  }

  append(delta) {
    this.placeLast();
    this.text += delta;
    this.el.classList.add("streaming");
    this.el.classList.remove("pending");
    this.feed.dirty(this);
  }

  finish(content, messageId) {
    this.placeLast();
    this.text = content;
    this.messageId = messageId;
    this.final = true;
    this.el.dataset.id = messageId;
    this.el.classList.remove("pending", "streaming");
    this.feed.dirty(this);
  }

  render() {
    this.body.innerHTML = renderMarkdown(this.text); // safe: renderMarkdown escapes everything
    if (this.final && !this.more && isLong(this.text)) this.collapse();
  }

  collapse() {
    const summary = h("p.msg-summary", {}, firstSentence(this.text));
    this.more = h("button.more", {
      type: "button",
      "aria-expanded": "false",
      onclick: () => {
        const open = this.el.classList.toggle("collapsed") === false;
        this.more.setAttribute("aria-expanded", String(open));
        this.more.textContent = open ? "Show less" : "Show the full answer";
      },
    }, "Show the full answer");
    this.el.classList.add("collapsed", "long");
    this.body.before(summary);
    this.body.after(this.more);
  }
}

/** "AM" for "Ana Maria", "H" (human) without a name. */
function initials(name) {
  const words = (name || "").split(/\s+/).filter(Boolean);
  return words.length ? words.slice(0, 2).map((w) => w[0]).join("").toUpperCase() : "H";
}

function isLong(text) {
  return text.length > LONG_CHARS || text.split("\n").length > LONG_LINES;
}

export class Feed {
  /**
   * @param {HTMLElement} root the feed container (role=log)
   * @param {Map<string, object>} agents by id
   * Set `runs` (the plan and run cards) and `onChange` after construction.
   */
  constructor(root, agents) {
    this.root = root;
    this.agents = agents;
    this.runs = null;
    this.target = root;
    this.answers = new Map(); // key (turn or run) -> latest Answer
    this.seen = new Set(); // message ids already shown
    this.pendingRender = new Set();
    this.frame = 0;
    this.onChange = () => {};
    this.userName = "You"; // who the user is to the reader (the human's view says "The user")
    this.person = null; // the person who accepted the latest handoff
  }

  beginBatch() {
    this.target = document.createDocumentFragment();
  }

  endBatch() {
    for (const answer of this.pendingRender) answer.render();
    this.pendingRender.clear();
    this.root.append(this.target);
    this.target = this.root;
    this.onChange();
  }

  get batching() {
    return this.target !== this.root;
  }

  add(el) {
    this.target.append(el);
    if (!this.batching) this.onChange();
  }

  dirty(answer) {
    this.pendingRender.add(answer);
    if (this.batching || this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      for (const a of this.pendingRender) a.render();
      this.pendingRender.clear();
      this.onChange();
    });
  }

  apply(ev) {
    const d = ev.data || {};
    switch (ev.type) {
      case "message":
        return this.message(ev, d);
      case "status":
        return this.chip(d.messageId, d.text, "status", ev.createdAt);
      case "thinking":
        return this.thought(ev, d.messageId, d.summary, d.group);
      case "text_delta":
        return this.answerFor(ev, d.messageId).append(d.delta || "");
      case "draft_superseded":
        return this.superseded(ev, d.messageId);
      case "error":
        return this.chip(null, d.message || "Something went wrong.", "error", ev.createdAt);
      case "done":
        return this.done(ev);
      case "handoff_status":
        return this.handoffStatus(ev, d);
      default:
        if (TURN_TAKING.has(ev.type)) return this.turnTaking(ev);
        return this.runs?.apply(ev);
    }
  }

  message(ev, d) {
    if (d.kind === "user") return this.user(d.messageId, d.content, ev.createdAt);
    if (d.author === "human") return this.human(ev, d);
    if (d.kind === "assistant") {
      if (this.seen.has(d.messageId)) return undefined;
      this.seen.add(d.messageId);
      const answer = this.answerFor(ev, d.messageId);
      answer.setAgent(ev.agentId, ev.createdAt);
      return answer.finish(d.content || "", d.messageId);
    }
    if (d.kind === "thinking") return this.thought(ev, d.messageId, d.content, d.metadata?.group);
    return this.chip(d.messageId, d.content, d.kind === "system" ? "system" : "status", ev.createdAt);
  }

  user(messageId, content, createdAt) {
    if (messageId && this.seen.has(messageId)) return;
    this.seen.add(messageId);
    this.add(h("article.msg.msg-user", { dataset: { id: messageId }, "aria-label": `${this.userName} said` },
      h("div.msg-main", {}, h("header.msg-head", {}, h("span.msg-author", {}, this.userName),
        h("time.msg-time", { datetime: createdAt }, clock(createdAt))),
      h("div.msg-body", {}, content || ""))));
  }

  /** A message from the person who holds the conversation (author "human"). */
  human(ev, d) {
    if (this.seen.has(d.messageId)) return;
    this.seen.add(d.messageId);
    const name = this.person || "A human colleague";
    this.add(h("article.msg.msg-human", { dataset: { id: d.messageId }, "aria-label": `${name} said` },
      h("span.msg-face", {},
        avatar({ displayName: name, avatar: { color: "#0f766e", initials: initials(this.person) } })),
      h("div.msg-main", {},
        h("header.msg-head", {}, h("span.msg-author", {}, name),
          this.person && h("span.msg-role", {}, "human colleague"),
          h("time.msg-time", { datetime: ev.createdAt }, clock(ev.createdAt))),
        h("div.msg-body", {}, d.content || ""))));
  }

  handoffStatus(ev, d) {
    if (d.status === "active") this.person = d.assignee || this.person;
    const who = d.assignee || this.person || "A human colleague";
    const text = {
      active: `${who} took over the conversation`,
      resolved: `${who} resolved the conversation`,
      returned: `${who} gave the conversation back to the assistants`,
      cancelled: "The handoff was cancelled",
    }[d.status];
    if (text) this.chip(null, text, "status", ev.createdAt);
  }

  /** Who claimed, deferred, watched or answers, and why a rule fired: the turn's thinking. */
  turnTaking(ev) {
    const name = (id) => this.agents.get(id)?.displayName || id;
    return this.thought(ev, `turn-taking:${ev.seq}`, explain(ev, name), null);
  }

  chip(messageId, text, kind, createdAt) {
    if (messageId && this.seen.has(messageId)) return;
    if (messageId) this.seen.add(messageId);
    this.add(h(`div.chip.chip-${kind}`, { role: kind === "error" ? "alert" : "note", title: clock(createdAt) },
      text || ""));
  }

  thought(ev, id, summary, group) {
    if (ev.runId && group && this.runs) return this.runs.thinking(ev, { id, summary, group });
    const answer = this.answerFor(ev, null, true);
    answer.setAgent(answer.agentId ? null : ev.agentId, ev.createdAt);
    return answer.thinking.add({ id, summary: summary || "", agentId: ev.agentId });
  }

  /** The answer that an event belongs to: same turn (or, outside a turn, same run). */
  answerFor(ev, messageId, forThinking = false) {
    const key = keyOf(ev);
    const current = this.answers.get(key);
    const open = current && !current.final && (!current.streamId || current.streamId === messageId);
    if (current && (forThinking || open || current.messageId === messageId)) {
      if (!forThinking) current.setAgent(ev.agentId, ev.createdAt);
      if (!forThinking && messageId && !current.final) current.streamId = messageId;
      return current;
    }
    const answer = new Answer(this, key, ev.agentId, ev.createdAt);
    answer.streamId = forThinking ? null : messageId;
    this.answers.set(key, answer);
    this.add(answer.el);
    return answer;
  }

  /** The quality gate held the streamed draft back: clear it; the answer streams anew. */
  superseded(ev, messageId) {
    const answer = this.answers.get(keyOf(ev));
    if (!answer || answer.final || answer.streamId !== messageId) return;
    answer.text = "";
    answer.streamId = null;
    answer.el.classList.remove("streaming");
    answer.el.classList.add("pending");
    this.dirty(answer);
  }

  done(ev) {
    const answer = this.answers.get(keyOf(ev));
    if (answer && !answer.text) answer.el.classList.add("silent");
    this.runs?.apply(ev);
  }
}
