// The assistant panel: wires the API, the event stream and the views together.
//
// The conversation's event log is the source of truth: opening a conversation replays it
// from seq 0 through the same handlers that render live events, then follows it live.

import { Activity } from "./activity.js";
import { AgentList, shortName } from "./agents.js";
import { api } from "./api.js";
import { ConfirmDialog } from "./dialog.js";
import { h } from "./dom.js";
import { EntityView } from "./entity-view.js";
import { Feed } from "./feed.js";
import { HandoffQueue } from "./handoff-queue.js";
import { HumanView } from "./human-view.js";
import { RulesDialog } from "./rules-view.js";
import { Runs } from "./runs.js";
import { SessionsView } from "./sessions-view.js";
import { UsageDialog } from "./usage-view.js";
import { askForKey, needsKey } from "./signin.js";
import { follow } from "./stream.js";
import { TopBar } from "./topbar.js";

const $ = (id) => document.getElementById(id);
const REPLAY_TIMEOUT_MS = 8000;
// The conversation's state after a handoff moves (handoff_status), and the states in which
// no assistant answers a message (tasks/builtin/graph_nodes.ENDS_THE_TURN and agent_active).
const AFTER_HANDOFF = {
  active: "agent_active", resolved: "resolved", returned: "idle", cancelled: "idle",
};
const HELD = {
  handoff_pending: () => "Handed to a human colleague: the assistants will not answer here "
    + "until a person gives the conversation back.",
  agent_active: (person) => `${person || "A human colleague"} has this conversation: the assistants `
    + "will not answer until it is given back.",
  resolved: () => "This conversation is resolved: the assistants will not answer here.",
  archived: () => "This conversation is archived: the assistants will not answer here.",
};

const state = {
  agents: new Map(),
  taskTypes: new Map(),
  conversation: null, // null: a new conversation, created on the first message
  projectId: null,
  activeAgentId: "chief",
  explicitAgent: false, // only a clicked agent is sent as activeAgentId
  stream: null,
  feed: null,
  runs: null,
  live: true,
  convState: "idle", // the conversation's state, for the notice when a person holds it
};

const activity = new Activity((id) => state.agents.get(id)?.displayName || "Hans", () => state.live);
const entityView = new EntityView($("workspace"));
const dialog = new ConfirmDialog();
const feedRoot = $("feed");
const scroller = $("feed-scroll");
const input = $("composer-input");

const agentList = new AgentList($("agents"), (id, explicit) => {
  state.activeAgentId = id;
  state.explicitAgent = explicit;
  showAddressee();
  if (!state.conversation) showWelcome();
});

/** Whom the composer writes to: the chosen agent, unless a person holds the conversation. */
function showAddressee() {
  const held = HELD[state.convState]?.(state.feed?.person);
  const notice = $("held-notice");
  notice.hidden = !held;
  notice.textContent = held || "";
  notice.dataset.state = state.convState;
  const agent = state.agents.get(state.activeAgentId);
  if (held) {
    const person = state.convState === "handoff_pending" || state.convState === "agent_active";
    $("composer-to").textContent = person ? "To the human colleague" : "No one answers here";
    input.placeholder = person ? "Message the human colleague…" : "Message…";
  } else {
    $("composer-to").textContent = agent ? `To ${agent.displayName}` : "";
    input.placeholder = agent ? `Message ${shortName(agent)}…` : "Message…";
  }
}

function conversationName(id) {
  const option = [...$("conversation").options].find((o) => o.value === id);
  return option && option.value ? option.textContent : `Conversation …${id.slice(-6)}`;
}

const rulesDialog = new RulesDialog({ openConversation: (id) => navigate(id), conversationName });
const handoffQueue = new HandoffQueue({
  openHandoff: (id) => openHandoff(id),
  conversationName,
  counted: (pending) => {
    const count = $("handoff-count");
    count.textContent = String(pending);
    count.hidden = pending === 0;
    $("open-handoffs").setAttribute("aria-label", `Handoffs, ${pending} waiting`);
  },
});
const humanView = new HumanView($("human-view"), {
  agents: state.agents,
  conversationName,
  openConversation: (id) => navigate(id),
  openQueue: () => handoffQueue.open(),
  changed: () => countHandoffs(),
});
const sessionsView = new SessionsView($("sessions-view"), {
  agents: state.agents,
  openSession: (id) => openSessions(id),
  openList: () => openSessions(""),
  openConversation: (id) => navigate(id),
});
$("open-sessions").addEventListener("click", () => openSessions(""));
$("open-rules").addEventListener("click", () => rulesDialog.open());
const usageDialog = new UsageDialog({ agents: state.agents });
$("open-usage").addEventListener("click", () => usageDialog.open());
$("open-handoffs").addEventListener("click", () => handoffQueue.open());

function countHandoffs() {
  handoffQueue.fetch().catch(() => {}); // the count keeps its old value
}

function openHandoff(id) {
  if (location.hash !== `#h=${id}`) location.hash = `h=${id}`;
  else humanView.open(id);
}

/** The sessions (``#s=``) or one of them (``#s=<session id>``). */
function openSessions(id) {
  if (location.hash !== `#s=${id}`) location.hash = `s=${id}`;
  else route();
}

/** The human's view (``#h=<handoff id>``) or the sessions in place of the conversation, or back. */
function showView(which) {
  $("human-view").hidden = which !== "human";
  $("sessions-view").hidden = which !== "sessions";
  $("conversation-view").hidden = which !== "conversation";
  if (which !== "human") humanView.close();
  if (which !== "sessions") sessionsView.close();
}

const topBar = new TopBar(
  { tenant: $("tenant"), project: $("project"), conversation: $("conversation"),
    newButton: $("new-conversation"), connection: $("connection") },
  {
    project: (id) => {
      state.projectId = id;
      if (state.conversation && state.conversation.projectId !== id) openDraft();
    },
    conversation: (id) => (id ? navigate(id) : openDraft()),
    newConversation: () => openDraft(),
  },
);

$("activity-slot").append(activity.el);

function navigate(id) {
  if (location.hash !== `#c=${id}`) location.hash = `c=${id}`;
  else route();
}

function hashId() {
  return new URLSearchParams(location.hash.slice(1)).get("c");
}

/** Show the conversation (or handoff, or sessions) named in the URL; resolves once it is drawn. */
function route(prefetched = null) {
  const params = new URLSearchParams(location.hash.slice(1));
  const handoffId = params.get("h");
  const sessionId = params.get("s"); // "" for the list
  showView(handoffId ? "human" : sessionId !== null ? "sessions" : "conversation");
  if (handoffId) return humanView.open(handoffId);
  if (sessionId !== null) return sessionId ? sessionsView.open(sessionId) : sessionsView.showList();
  const id = hashId();
  if (id && id === state.conversation?.id) return Promise.resolve();
  if (id) return openConversation(id, prefetched);
  if (state.conversation || !state.feed) openDraft();
  return Promise.resolve();
}

function reset() {
  state.stream?.close();
  state.stream = null;
  activity.reset();
  entityView.reset();
  feedRoot.replaceChildren();
  state.feed = new Feed(feedRoot, state.agents);
  state.runs = new Runs({
    feed: state.feed, agents: state.agents, taskTypes: state.taskTypes, dialog, live: () => state.live,
  });
  state.feed.runs = state.runs;
  state.feed.onChange = stickToBottom;
  state.live = true;
  state.convState = "idle";
  showAddressee();
}

function openDraft() {
  showView("conversation");
  reset();
  state.conversation = null;
  if (location.hash) history.pushState(null, "", location.pathname + location.search);
  topBar.setConversation(null);
  topBar.setProject(state.projectId);
  topBar.connection("draft");
  showWelcome();
}

function showWelcome() {
  const agent = state.agents.get(state.activeAgentId);
  if (!agent || state.conversation || hashId()) return;
  const prompts = agent.examplePrompts || [];
  feedRoot.replaceChildren(h("div.welcome", {},
    h("p.welcome-title", {}, `${agent.displayName} is ready.`),
    h("p", {}, agent.roleSummary || ""),
    prompts.length && h("div.suggestions", { role: "group", "aria-label": "Example prompts" },
      prompts.map((p) => h("button.suggestion", {
        type: "button",
        onclick: () => {
          input.value = p;
          input.focus();
        },
      }, p)))));
}

/** The event request index.html started for this conversation, if any (used once). */
function earlyStream(id) {
  const early = window.hansaEarly;
  if (!early?.response) return null;
  const mine = early.id === id ? { controller: early.controller, response: early.response } : null;
  if (!mine) early.controller.abort();
  early.response = null;
  return mine;
}

async function openConversation(id, prefetched = null) {
  reset();
  const early = earlyStream(id);
  let conversation;
  try {
    conversation = await (prefetched || api.conversation(id));
  } catch (err) {
    openDraft();
    notice(`Could not open that conversation: ${err.message}`);
    return;
  }
  if (hashId() !== id) {
    early?.controller.abort();
    return; // the user moved on meanwhile
  }
  state.conversation = conversation;
  state.convState = conversation.state || "idle";
  showAddressee();
  state.projectId = conversation.projectId;
  topBar.setProject(conversation.projectId);
  topBar.setConversation(id);
  return startStream(id, conversation.lastSeq || 0, early);
}

/** Follow the conversation's events; resolves once the history (up to replayTo) is drawn. */
function startStream(id, replayTo, early = null) {
  const { feed } = state;
  let timer = 0;
  let drawn;
  const replayed = new Promise((resolve) => { drawn = resolve; });
  const finish = () => {
    drawn();
    if (state.live || state.feed !== feed) return;
    clearTimeout(timer);
    state.live = true;
    performance.mark("hansa:events-applied");
    feed.endBatch();
    state.runs.afterReplay();
    pinned = true;
    scroller.scrollTop = scroller.scrollHeight;
    performance.mark("hansa:replayed");
  };
  if (replayTo > 0) {
    state.live = false;
    feed.beginBatch();
    timer = setTimeout(finish, REPLAY_TIMEOUT_MS);
  } else drawn();
  state.stream = follow(api.eventsUrl(id), {
    after: 0,
    early,
    onEvent: (ev) => {
      if (state.feed !== feed) return;
      if (ev.seq === 1) performance.mark("hansa:first-event");
      activity.update(ev);
      feed.apply(ev);
      entityView.apply(ev);
      if (ev.type === "handoff" || ev.type === "handoff_status") handoffMoved(ev, ev.seq > replayTo);
      if (!state.live && ev.seq >= replayTo) finish();
    },
    onState: (s) => {
      if (s === "open") performance.mark("hansa:stream-open");
      topBar.connection(s);
      if (s === "reconnecting") finish();
    },
  });
  return replayed;
}

/** A handoff event: a live one moves the conversation's state; each may name the person. */
function handoffMoved(ev, live) {
  if (live) {
    state.convState = ev.type === "handoff" ? "handoff_pending"
      : AFTER_HANDOFF[ev.data?.status] || state.convState;
    countHandoffs();
  }
  showAddressee();
}

// The feed follows new content while the reader is at the bottom ("pinned"); scrolling up
// unpins it. Off-screen messages are laid out lazily (content-visibility), so the height
// keeps settling after a replay: a ResizeObserver keeps a pinned feed at the bottom.
let pinned = true;
scroller.addEventListener("scroll", () => {
  pinned = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
}, { passive: true });
new ResizeObserver(() => stickToBottom()).observe(feedRoot);

function stickToBottom() {
  if (pinned && state.live) scroller.scrollTop = scroller.scrollHeight;
}

function notice(text) {
  state.feed?.chip(null, text, "error");
}

let sending = false;

async function send(text) {
  const content = text.trim();
  if (!content || sending) return;
  sending = true;
  const button = $("composer-send");
  button.disabled = true;
  try {
    if (!state.conversation) {
      const created = await api.createConversation({
        projectId: state.projectId || undefined,
        activeAgentId: state.explicitAgent ? state.activeAgentId : undefined,
      });
      reset();
      state.conversation = created;
      history.replaceState(null, "", `#c=${created.id}`);
      startStream(created.id, 0);
      refreshConversations(created.id);
    }
    await api.sendMessage(state.conversation.id, {
      content,
      activeAgentId: state.explicitAgent ? state.activeAgentId : undefined,
    });
    input.value = "";
  } catch (err) {
    notice(`Your message was not sent: ${err.message}`);
  } finally {
    sending = false;
    button.disabled = false;
    input.focus();
  }
}

async function refreshConversations(selected) {
  try {
    topBar.setConversations(await api.conversations(), selected);
  } catch {
    // the picker keeps its old list
  }
}

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  send(input.value);
});
input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send(input.value);
  }
});
window.addEventListener("hashchange", () => route());

async function boot() {
  // Only the agents and the conversation are needed to draw the feed (index.html has asked
  // for them already); the rest waits until the feed is drawn, so that it does not compete
  // with the replay for the server.
  const early = window.hansaEarly || {};
  const id = hashId();
  const conversation = id && early.id === id ? early.conversation : id ? api.conversation(id) : null;
  conversation?.catch(() => {}); // handled by openConversation
  let agents = [];
  try {
    agents = await (early.agents || api.agents());
  } catch {
    if (await needsKey()) {
      early.controller?.abort();
      askForKey();
      return;
    }
  }
  for (const a of agents) state.agents.set(a.id, a);
  agentList.render([...state.agents.values()], "chief");
  await route(hashId() === id ? conversation : null);
  const [projects, conversations, taskTypes, tenant] = await Promise.allSettled([
    api.projects(), api.conversations(), api.taskTypes(), api.tenant(),
  ]);
  for (const t of taskTypes.value || []) state.taskTypes.set(t.name, t);
  topBar.tenant(tenant.value?.name || tenant.value?.id || "default");
  const projectId = state.conversation ? state.conversation.projectId : state.projectId;
  topBar.setProjects(projects.value || [], projectId);
  topBar.setConversations(conversations.value || [], state.conversation?.id ?? hashId());
  countHandoffs();
}

window.hansa = { state, dropConnection: () => state.stream?.drop() };
boot();
