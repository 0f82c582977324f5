// Ask for what the first screen needs at once, while the modules load: the agents, and
// for an open conversation its record and its event log (replayed from the start).
// A classic script of its own (not inline): the panel's Content-Security-Policy allows
// only scripts from this origin.
(() => {
  const get = (path) => fetch(path, { headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))));
  const early = { agents: get("/api/agents") };
  const id = new URLSearchParams(location.hash.slice(1)).get("c");
  if (id) {
    const path = `/api/conversations/${encodeURIComponent(id)}`;
    early.id = id;
    early.conversation = get(path);
    early.controller = new AbortController();
    early.response = fetch(`${path}/events?after=0`, {
      headers: { Accept: "text/event-stream", "Last-Event-ID": "0" },
      cache: "no-store", signal: early.controller.signal,
    });
  }
  for (const p of [early.agents, early.conversation, early.response]) p?.catch(() => {});
  window.hansaEarly = early;
})();
