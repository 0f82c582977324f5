// The HTTP contract of /work/shared/API.md, one small function per call.

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code || "http_error";
    this.details = body?.error?.details || {};
  }
}

async function call(method, path, body) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

const get = (path) => call("GET", path);
const post = (path, body = {}) => call("POST", path, body);
const enc = encodeURIComponent;

export const api = {
  agents: () => get("/api/agents"),
  projects: () => get("/api/projects"),
  taskTypes: () => get("/api/task-types"),
  tenant: () => get("/api/tenant"),
  conversations: () => get("/api/conversations"),
  conversation: (id) => get(`/api/conversations/${enc(id)}`),
  createConversation: (body) => post("/api/conversations", body),
  sendMessage: (id, body) => post(`/api/conversations/${enc(id)}/messages`, body),
  run: (id) => get(`/api/runs/${enc(id)}`),
  approve: (id, edits) => post(`/api/runs/${enc(id)}/approve`, edits?.length ? { edits } : {}),
  cancel: (id) => post(`/api/runs/${enc(id)}/cancel`),
  rollback: (id) => post(`/api/runs/${enc(id)}/rollback`),
  undoTask: (id) => post(`/api/tasks/${enc(id)}/undo`),
  task: (id) => get(`/api/tasks/${enc(id)}`),
  confirm: (id, parametersHash) => post(`/api/tasks/${enc(id)}/confirm`, { parametersHash }),
  eventsUrl: (id) => `/api/conversations/${enc(id)}/events`,
  rules: () => get("/api/rules"),
  changeRule: (id, changes) => call("PATCH", `/api/rules/${enc(id)}`, changes),
  ruleFirings: (id, limit = 20) => get(`/api/rules/${enc(id)}/firings?limit=${limit}`),
  usage: () => get("/api/usage"),
  handoffs: (status) => get(`/api/handoffs?status=${enc(status)}`),
  handoff: (id) => get(`/api/handoffs/${enc(id)}`),
  acceptHandoff: (id, assignee) => post(`/api/handoffs/${enc(id)}/accept`, { assignee }),
  humanMessage: (id, content) => post(`/api/handoffs/${enc(id)}/messages`, { content }),
  resolveHandoff: (id) => post(`/api/handoffs/${enc(id)}/resolve`),
  returnHandoff: (id) => post(`/api/handoffs/${enc(id)}/return`),
  sessions: () => get("/api/agent-sessions"),
  session: (id) => get(`/api/agent-sessions/${enc(id)}`),
  startSession: (body) => post("/api/agent-sessions", body),
  controlSession: (id, verb) => post(`/api/agent-sessions/${enc(id)}/${enc(verb)}`),
  interruptSession: (id, guidance) => post(`/api/agent-sessions/${enc(id)}/interrupt`, { guidance }),
  deleteSession: (id) => call("DELETE", `/api/agent-sessions/${enc(id)}`),
  sessionEventsUrl: (id) => `/api/agent-sessions/${enc(id)}/events`,
  me: () => get("/api/me"),
  entity: (id) => get(`/api/workspace/entities/${enc(id)}`),
  openSession: (key) => post("/api/session", { key }),
  closeSession: () => call("DELETE", "/api/session"),
};
