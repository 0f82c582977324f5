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


@dataclass
class Trial:
    """One server's figures: the first turn, the warm ones, the cross-agent ones."""

    ready_ms: float
    first: Timing
    warm: list[Timing]
    cross: list[Timing]
    summaries: list[float]
    versions: list[dict[str, object]]
    log: str


def _trial(turns: int, cross_turns: int, env: dict[str, str] | None = None) -> Trial:
    """A fresh server (``env`` added to its environment): the first turn, ``turns`` warm
    ones, then the cross-agent conversation."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        started = time.perf_counter()
        url = stack.enter_context(hansa_server(Path(tmp), "--model", "local", env=env))
        ready_ms = (time.perf_counter() - started) * 1000
        with httpx.Client(base_url=url, timeout=TURN_TIMEOUT_SECONDS) as client:
            first = _turn(client, f"Give me one tip about {TOPICS[0]}.")
            warm = [
                _turn(client, f"Give me one tip about {TOPICS[(i + 1) % len(TOPICS)]}.")
                for i in range(turns)
            ]
            cross, summaries, versions = _cross_agent(client, cross_turns)
        log = (Path(tmp) / "server.log").read_text()
    return Trial(ready_ms, first, warm, cross, summaries, versions, log)


def _in_order(timings: list[Timing]) -> str:
    return ", ".join(f"{t.ttft_ms:.0f}{'r' if t.retried else ''}" for t in timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10, help="warm turns after the first")
    parser.add_argument("--cross", type=int, default=12, help="turns of the cross-agent case")
    parser.add_argument("--runs", type=int, default=1, help="fresh servers; medians reported")
    parser.add_argument(
        "--anchor",
        action="store_true",
        help="each run also on a server with HANSA_LOCAL_CACHE_REUSE=false (decision 0045)",
    )
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    parser.add_argument(
        "--server-log",
        type=Path,
        help="copy the (last) server's log here (with HANSA_LOG_LEVEL=debug it says, per call "
        "of the model, how many prompt tokens were kept, evaluated in gaps and left)",
    )
    args = parser.parse_args()
    trials: list[Trial] = []
    anchors: list[Trial] = []
    load_before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    for _ in range(args.runs):
        trials.append(_trial(args.turns, args.cross))
        if args.anchor:
            anchors.append(_trial(2, args.cross, {"HANSA_LOCAL_CACHE_REUSE": "false"}))
    if args.server_log:
        args.server_log.write_text(trials[-1].log)
    report = _report(trials, anchors, load_before)
    print(report)
    print("sample answer:", json.dumps(trials[-1].warm[0].text[:160]))
    if args.record:
        record("ttft_local", report)


def _report(trials: list[Trial], anchors: list[Trial], load_before: str) -> str:
    last = trials[-1]
    warmed = re.search(r"model \S+ (warmed in \d+ ms)", last.log)
    warm_note = (
        f"the model {warmed.group(1)} at start-up, before serving"
        if warmed
        else "no warm-up logged"
    )
    med = statistics.median
    first = med(t.first.ttft_ms for t in trials)
    p50 = med(med(w.ttft_ms for w in t.warm) for t in trials)
    p95 = med(_pct([w.ttft_ms for w in t.warm], 0.95) for t in trials)
    done = med(med(w.done_ms for w in t.warm) for t in trials)
    cross_p50 = med(med(c.ttft_ms for c in t.cross) for t in trials)
    cross_p95 = med(_pct([c.ttft_ms for c in t.cross], 0.95) for t in trials)
    cross_done = med(med(c.done_ms for c in t.cross) for t in trials)
    cross_met = cross_p95 <= TARGET_CROSS_P95_MS
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    runs = f"medians of {len(trials)} runs" if len(trials) > 1 else "one run"
    lines = [
        f"ttft_local: `hansa serve --model local` (SmolLM2-135M-Instruct, llama.cpp, 2 threads), "
        f"SQLite file, one plain question per new conversation, one at a time; "
        f"then one conversation of {len(last.cross)} turns rotating over three agents; "
        f"{runs}, each on a fresh server; "
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load_before} at the "
        f"start, {load} at the end; server ready (`/healthz`) "
        f"{med(t.ready_ms for t in trials):.0f} ms after launch; {warm_note}",
        "",
        "| turn | TTFT p50 ms | TTFT p95 ms | `done` p50 ms | target TTFT p50 |",
        "| --- | --- | --- | --- | --- |",
        f"| first after start-up (sent as soon as `/healthz` answers) | {first:.0f} | - "
        f"| {med(t.first.done_ms for t in trials):.0f} | - |",
        f"| next {len(last.warm)} (warm) | {p50:.0f} | {p95:.0f} | "
        f"{done:.0f} | <= {TARGET_P50_MS:.0f} ms "
        f"({'met' if p50 <= TARGET_P50_MS else 'missed'}) |",
        f"| {len(last.cross)} in one conversation, each to another agent | "
        f"{cross_p50:.0f} | {cross_p95:.0f} | {cross_done:.0f} | p95 <= "
        f"{TARGET_CROSS_P95_MS:.0f} ms ({'met' if cross_met else 'missed'}) |",
    ]
    if anchors:
        lines.append(
            f"| the same, `HANSA_LOCAL_CACHE_REUSE=false` (anchor: only the unchanged "
            f"beginning reused) | {med(med(c.ttft_ms for c in t.cross) for t in anchors):.0f} | "
            f"{med(_pct([c.ttft_ms for c in t.cross], 0.95) for t in anchors):.0f} | "
            f"{med(med(c.done_ms for c in t.cross) for t in anchors):.0f} | - |"
        )
    lines += ["", "Warm turns' TTFT in order (ms; `r`: the quality gate retried it):"]
    lines += [f"- run {i + 1}: {_in_order(t.warm)}." for i, t in enumerate(trials)]
    lines += ["", "Cross-agent turns' TTFT in order (SEO, brand, hosting, ...):"]
    lines += [f"- run {i + 1}: {_in_order(t.cross)}." for i, t in enumerate(trials)]
    lines += [f"- anchor {i + 1}: {_in_order(t.cross)}." for i, t in enumerate(anchors)]
    lines.append("")
    for i, t in enumerate(trials):
        lines.append(
            f"Rolling summary by the end of run {i + 1}'s cross-agent turns: "
            f"{len(t.versions)} versions "
            f"({sum(1 for v in t.versions if v.get('modelFailed'))} with the model failed), "
            f"{len(t.summaries)} calls recorded"
            + (f" ({', '.join(f'{ms:.0f}' for ms in t.summaries)} ms)." if t.summaries else ".")
        )
    lines += [
        "",
        "TTFT: POST of the message -> the turn's first `text_delta` on the SSE stream (the "
        "agent loop and the quality gate in place; a message's first text is written at once, "
        "the rest coalesced). p95 by rank: of 12 turns or fewer, the slowest.",
        "",
        "Reproduce: `.venv/bin/python bench/ttft_local.py --runs 3 --anchor --record`.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
