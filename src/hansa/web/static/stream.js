// Server-Sent Events over fetch: resumable with Last-Event-ID, never delivers a seq twice.
//
// Native EventSource would also resend Last-Event-ID, but it needs one listener per event
// type and cannot be told where to resume after a manual reconnect; fetch gives us both.

const MIN_RETRY_MS = 250;
const MAX_RETRY_MS = 4000;

/**
 * Follow a conversation's event log from `after`.
 * onEvent(ev) gets each event once, in seq order; onState("open" | "reconnecting" | "closed").
 * Returns {close(), drop(), lastSeq()}: drop() cuts the connection as a network failure would.
 * `early` ({controller, response}) is a first request already under way from `after`.
 */
export function follow(url, { after = 0, onEvent, onState = () => {}, early = null }) {
  let last = after;
  let closed = false;
  let controller = null;
  let retry = MIN_RETRY_MS;

  const deliver = (raw) => {
    let ev;
    try {
      ev = JSON.parse(raw);
    } catch {
      return;
    }
    if (typeof ev.seq !== "number" || ev.seq <= last) return; // a replayed duplicate
    last = ev.seq;
    onEvent(ev);
  };

  async function connect() {
    while (!closed) {
      controller = early?.controller || new AbortController();
      try {
        const res = await (early?.response || fetch(`${url}?after=${last}`, {
          headers: { Accept: "text/event-stream", "Last-Event-ID": String(last) },
          cache: "no-store",
          signal: controller.signal,
        }));
        early = null;
        if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
        onState("open");
        retry = MIN_RETRY_MS;
        await read(res.body, deliver);
      } catch {
        early = null; // fall through: reconnect unless closed
      }
      if (closed) break;
      onState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, retry));
      retry = Math.min(retry * 2, MAX_RETRY_MS);
    }
    onState("closed");
  }

  connect();
  return {
    close() {
      closed = true;
      controller?.abort();
    },
    drop() {
      controller?.abort();
    },
    lastSeq: () => last,
  };
}

/** Parse the text/event-stream body; call deliver(data) for each complete event with data. */
async function read(body, deliver) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") {
        if (data.length) deliver(data.join("\n"));
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
      // id:, event: and ":" comments need no handling: the JSON carries seq and type.
    }
  }
}
