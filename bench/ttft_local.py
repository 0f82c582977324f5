"""Time to first text of a plain turn with the embedded model (issue 19 item 8, issue 34).

Starts ``hansa serve --model local`` on a fresh SQLite file and, as soon as it answers
``/healthz``, sends plain questions one after another, each in a conversation of its own
(no history, no plan: routing, context, the agent loop, the quality gate). For each turn it
measures POST -> the turn's first ``text_delta`` on the conversation's SSE stream (TTFT)
and POST -> ``done``. The first turn after start-up is reported apart from the next N (the
warm figure, target p50 <= 500 ms).

Then the cross-agent case (issue 34 item 2): one conversation of ``--cross`` turns whose
questions rotate over an SEO, a brand and a hosting topic, so that the routing hands each
turn to another agent than the previous one (target p95 <= 500 ms).

    python bench/ttft_local.py [--turns 10] [--cross 12] [--record]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from httpx_sse import connect_sse

from _server import hansa_server, record

TARGET_P50_MS = 500.0
TARGET_CROSS_P95_MS = 500.0
TURN_TIMEOUT_SECONDS = 120.0
TOPICS = (
    "writing a good headline",
    "naming a newsletter",
    "choosing brand colours",
    "writing a product description",
    "writing an about page",
    "running a webinar",
    "answering customer emails",
    "picking a domain name",
    "structuring a FAQ",
    "writing alt text",
    "preparing a press release",
    "keeping a content calendar",
)
"""Each turn asks about another topic: only the shared prefix of the prompts (the agent's
system prompt) may come from llama.cpp's cache, as for real turns."""
CROSS_AGENT = (
    "How do I get more SEO traffic to {}?",
    "Which brand colours suit {}?",
    "Which hosting plan does {} need?",
)
"""The cross-agent conversation's questions, in turn: the SEO Specialist's, the Creative
Lead's and the Web Engineer's keywords (``engine/routing.py``)."""
CROSS_SUBJECTS = ("a bakery", "a bike shop", "a dentist", "a yoga studio")


@dataclass(frozen=True)
class Timing:
    ttft_ms: float
    done_ms: float
    text: str
    retried: bool
    """The quality gate held a draft back (TTFT is the draft's first text)."""
    seq: int = 0
    """The seq of the turn's ``done`` event: where the conversation's next turn reads from."""


def _turn(client: httpx.Client, question: str, cid: str | None = None, after: int = 0) -> Timing:
    """One turn in conversation ``cid`` (a new conversation when None), its events read
    after seq ``after`` (the previous turn's ``done``)."""
    if cid is None:
        cid = client.post("/api/conversations", json={}).raise_for_status().json()["id"]
    opened = threading.Event()
    seen: dict[str, float] = {}
    parts: list[str] = []
    retried: list[bool] = []
    last: list[int] = [after]

    def follow() -> None:
        path = f"/api/conversations/{cid}/events?after={after}"
        with connect_sse(client, "GET", path, timeout=TURN_TIMEOUT_SECONDS) as source:
            opened.set()
            for sse in source.iter_sse():
                if not sse.data:
                    continue
                ev = json.loads(sse.data)
                if ev["type"] == "text_delta":
                    seen.setdefault("text", time.perf_counter())
                    parts.append(ev["data"]["delta"])
                elif ev["type"] == "draft_superseded":
                    parts.clear()
                    retried.append(True)
                elif ev["type"] == "done":
                    seen["done"] = time.perf_counter()
                    last.append(ev["seq"])
                    return

    reader = threading.Thread(target=follow, name=f"sse {cid}")
    reader.start()
    opened.wait(10)
    started = time.perf_counter()
    client.post(f"/api/conversations/{cid}/messages", json={"content": question})
    reader.join(TURN_TIMEOUT_SECONDS)
    if "done" not in seen or "text" not in seen:
        raise RuntimeError(f"the turn in {cid} streamed no text or did not end: {seen}")
    return Timing(
        (seen["text"] - started) * 1000,
        (seen["done"] - started) * 1000,
        "".join(parts),
        bool(retried),
        last[-1],
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cross_agent(
    client: httpx.Client, turns: int
) -> tuple[list[Timing], list[float], list[dict[str, object]]]:
    """``turns`` turns of one conversation, each routed to another agent than the last; the
    latencies (ms) of the rolling summary's calls recorded by then, and its versions."""
    cid = client.post("/api/conversations", json={}).raise_for_status().json()["id"]
    timings: list[Timing] = []
    for i in range(turns):
        subject = CROSS_SUBJECTS[i // len(CROSS_AGENT) % len(CROSS_SUBJECTS)]
        question = CROSS_AGENT[i % len(CROSS_AGENT)].format(subject)
        timings.append(_turn(client, question, cid, timings[-1].seq if timings else 0))
    calls = client.get("/api/llm-calls", params={"conversationId": cid}).raise_for_status()
    summaries = [c["latencyMs"] for c in calls.json() if c.get("nodeId") == "summary"]
    versions = client.get(f"/api/conversations/{cid}/summaries").raise_for_status().json()
    return timings, summaries, versions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10, help="warm turns after the first")
    parser.add_argument("--cross", type=int, default=12, help="turns of the cross-agent case")
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    parser.add_argument(
        "--server-log",
        type=Path,
        help="copy the server's log here (with HANSA_LOG_LEVEL=debug it says, per call of the "
        "model, how many prompt tokens were kept, moved and evaluated)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        started = time.perf_counter()
        url = stack.enter_context(hansa_server(Path(tmp), "--model", "local"))
        ready_ms = (time.perf_counter() - started) * 1000
        with httpx.Client(base_url=url, timeout=TURN_TIMEOUT_SECONDS) as client:
            first = _turn(client, f"Give me one tip about {TOPICS[0]}.")
            warm = [
                _turn(client, f"Give me one tip about {TOPICS[(i + 1) % len(TOPICS)]}.")
                for i in range(args.turns)
            ]
            cross, summaries, versions = _cross_agent(client, args.cross)
        log = (Path(tmp) / "server.log").read_text()
        if args.server_log:
            args.server_log.write_text(log)
    warmed = re.search(r"model \S+ (warmed in \d+ ms)", log)
    warm_note = (
        f"the model {warmed.group(1)} at start-up, before serving"
        if warmed
        else "no warm-up logged"
    )
    ttft = [t.ttft_ms for t in warm]
    done = [t.done_ms for t in warm]
    p50 = statistics.median(ttft)
    cross_ttft = [t.ttft_ms for t in cross]
    cross_p95 = _pct(cross_ttft, 0.95)
    cross_met = cross_p95 <= TARGET_CROSS_P95_MS
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"ttft_local: `hansa serve --model local` (SmolLM2-135M-Instruct, llama.cpp, 2 threads), "
        f"SQLite file, one plain question per new conversation, one at a time; "
        f"then one conversation of {len(cross)} turns rotating over three agents; "
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load} at the end; "
        f"server ready (`/healthz`) "
        f"{ready_ms:.0f} ms after launch; {warm_note}",
        "",
        "| turn | TTFT p50 ms | TTFT p95 ms | `done` p50 ms | target TTFT p50 |",
        "| --- | --- | --- | --- | --- |",
        f"| first after start-up (sent as soon as `/healthz` answers) | {first.ttft_ms:.0f} | - "
        f"| {first.done_ms:.0f} | - |",
        f"| next {len(warm)} (warm) | {p50:.0f} | {_pct(ttft, 0.95):.0f} | "
        f"{statistics.median(done):.0f} | <= {TARGET_P50_MS:.0f} ms "
        f"({'met' if p50 <= TARGET_P50_MS else 'missed'}) |",
        f"| {len(cross)} in one conversation, each to another agent | "
        f"{statistics.median(cross_ttft):.0f} | {cross_p95:.0f} | "
        f"{statistics.median(t.done_ms for t in cross):.0f} | p95 <= "
        f"{TARGET_CROSS_P95_MS:.0f} ms ({'met' if cross_met else 'missed'}) |",
        "",
        "Warm turns' TTFT in order (ms; `r`: the quality gate retried it): "
        + ", ".join(f"{t.ttft_ms:.0f}{'r' if t.retried else ''}" for t in warm)
        + ".",
        "",
        "Cross-agent turns' TTFT in order (SEO, brand, hosting, ...): "
        + ", ".join(f"{t.ttft_ms:.0f}{'r' if t.retried else ''}" for t in cross)
        + ".",
        "",
        f"Rolling summary by the end of the cross-agent turns: {len(versions)} versions "
        f"({sum(1 for v in versions if v.get('modelFailed'))} with the model failed), "
        f"{len(summaries)} calls recorded"
        + (
            f" ({', '.join(f'{ms:.0f}' for ms in summaries)} ms; since issue 34 they run on a "
            "second llama.cpp context that waits while a reply's first text is due)."
            if summaries
            else "."
        ),
        "",
        "TTFT: POST of the message -> the turn's first `text_delta` on the SSE stream (the "
        "agent loop and the quality gate in place; deltas coalesced at 64 characters or 50 ms).",
        "",
        "Reproduce: `.venv/bin/python bench/ttft_local.py --record`.",
    ]
    report = "\n".join(lines)
    print(report)
    print("sample answer:", json.dumps(warm[0].text[:160]))
    if args.record:
        record("ttft_local", report)


if __name__ == "__main__":
    main()
