"""Different conversations run in parallel; turns of one conversation are serialized."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest

from harness import (
    Server,
    events_until,
    new_conversation,
    post,
    run_done,
    running_server,
    stream,
    waits,
)

DELAY = 0.6


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("slow")
    script = tmp / "script.json"
    script.write_text(json.dumps({"delaySeconds": DELAY}))
    with running_server(tmp, model=f"scripted:{script}") as s:
        yield s


def _span(events: list[dict], turn_id: str) -> tuple[datetime, datetime, int, int]:
    mine = [e for e in events if e["turnId"] == turn_id]
    start = next(e for e in mine if e["type"] == "session")
    end = next(e for e in mine if e["type"] == "done")
    return (
        datetime.fromisoformat(start["createdAt"]),
        datetime.fromisoformat(end["createdAt"]),
        start["seq"],
        end["seq"],
    )


def test_two_conversations_progress_concurrently(slow_server: Server) -> None:
    with slow_server.client() as client:
        a, b = new_conversation(client), new_conversation(client)
        turn_a, turn_b = post(client, a, "first"), post(client, b, "second")
        with ThreadPoolExecutor(2) as pool:
            fa = pool.submit(stream, client, a, turn_id=turn_a["turnId"])
            fb = pool.submit(stream, client, b, turn_id=turn_b["turnId"])
            events_a, events_b = fa.result(), fb.result()
    start_a, end_a, _, _ = _span(events_a, turn_a["turnId"])
    start_b, end_b, _, _ = _span(events_b, turn_b["turnId"])
    assert (end_a - start_a).total_seconds() >= DELAY * 0.9
    # each started before the other ended: they overlapped in time
    assert start_b < end_a and start_a < end_b


def test_two_messages_to_one_conversation_are_serialized(slow_server: Server) -> None:
    with slow_server.client() as client:
        cid = new_conversation(client)
        first, second = post(client, cid, "one"), post(client, cid, "two")
        events = stream(client, cid, turn_id=second["turnId"])
    start_1, end_1, _, done_1 = _span(events, first["turnId"])
    start_2, end_2, session_2, _ = _span(events, second["turnId"])
    assert session_2 > done_1, "the second turn starts after the first turn's done"
    assert start_2 >= end_1
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events].count("done") == 2


def test_many_parallel_posts_to_one_conversation_keep_order(slow_server: Server) -> None:
    with slow_server.client() as client:
        cid = new_conversation(client)
        with ThreadPoolExecutor(4) as pool:
            turns = list(pool.map(lambda i: post(client, cid, f"message {i}"), range(4)))
        by_seq = sorted(turns, key=lambda t: t["seq"])
        events = stream(client, cid, turn_id=by_seq[-1]["turnId"])
    done_order = [e["turnId"] for e in events if e["type"] == "done"]
    assert done_order == [t["turnId"] for t in by_seq], "turns finish in the order they arrived"
    sessions = [e["turnId"] for e in events if e["type"] == "session"]
    assert sessions == done_order


def test_long_runs_do_not_hold_up_turns(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Runs have slots of their own: a worker full of long-running runs still answers."""
    env = {"HANSA_WORKER_CONCURRENCY": "2"}
    with running_server(tmp_path_factory.mktemp("lanes"), env=env) as server:
        with server.client() as client:
            runs = []
            for _ in range(3):  # more runs than the worker has slots for turns
                cid = new_conversation(client)
                body = {"conversationId": cid, "title": "Long", "tasks": waits("A", seconds=8)}
                run = client.post("/api/runs", json=body).json()
                client.post(f"/api/runs/{run['id']}/approve", json={}).raise_for_status()
                runs.append(run["id"])
            chat = new_conversation(client)
            asked = post(client, chat, "hello")
            answered = stream(client, chat, turn_id=asked["turnId"])
            still = [client.get(f"/api/runs/{r}").json()["status"] for r in runs]
    assert any(e["type"] == "done" for e in answered)
    assert still == ["running"] * 3, "the turn was answered while every run still ran"


def test_runs_beyond_the_run_slots_wait_and_all_complete(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """At most ``worker_run_concurrency`` runs execute at once, approved together or not."""
    env = {"HANSA_WORKER_RUN_CONCURRENCY": "2"}
    with running_server(tmp_path_factory.mktemp("run-slots"), env=env) as server:
        with server.client() as client:
            started = []
            for _ in range(4):
                cid = new_conversation(client)
                body = {"conversationId": cid, "title": "Slot", "tasks": waits("A", seconds=1)}
                run = client.post("/api/runs", json=body).json()
                client.post(f"/api/runs/{run['id']}/approve", json={}).raise_for_status()
                started.append((cid, run["id"]))
            spans = []
            for cid, run_id in started:
                events = events_until(client, cid, run_done(run_id))
                moves = {
                    e["data"]["status"]: datetime.fromisoformat(e["createdAt"])
                    for e in events
                    if e["type"] == "task_status"
                }
                spans.append((moves["in_progress"], moves["completed"]))
    most = max(sum(s <= at < e for s, e in spans) for at, _ in spans)
    assert len(spans) == 4, "every run completed"
    assert most == 2, f"runs executing at once: {most} (2 run slots)"
