"""PostgreSQL as the shared engine: API processes and worker processes on one database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from harness import (
    Server,
    events_until,
    hans_says,
    new_conversation,
    post,
    run_done,
    running_server,
    running_worker,
    turn,
)
from pg import fresh_schema


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[list[Server]]:
    tmp = tmp_path_factory.mktemp("fleet")
    with (
        running_server(tmp, database_url=pg_url, extra_args=("--workers", "0")) as api_one,
        running_server(tmp, database_url=pg_url, extra_args=("--workers", "0")) as api_two,
        running_worker(tmp, pg_url),
        running_worker(tmp, pg_url),
    ):
        yield [api_one, api_two]


def test_a_turn_posted_on_one_api_runs_on_a_worker_and_streams_on_another(
    fleet: list[Server],
) -> None:
    one, two = fleet
    with one.client() as c1, two.client() as c2:
        cid = new_conversation(c1)
        events = turn(c1, cid, "Please improve our SEO traffic")
        seen_elsewhere = events_until(c2, cid, lambda e: e["type"] == "done")
        convo = c2.get(f"/api/conversations/{cid}").json()
    assert [e["seq"] for e in seen_elsewhere] == list(range(1, len(seen_elsewhere) + 1))
    assert seen_elsewhere[-1]["turnId"] == events[-1]["turnId"]
    assert next(e for e in events if e["type"] == "routing")["data"]["agentId"] == "growthLead"
    assert hans_says(events), "the agent answered"
    assert convo["state"] == "idle"


def test_a_run_executes_across_the_fleet(fleet: list[Server]) -> None:
    one, two = fleet
    tasks = [
        {
            "stepGroup": g,
            "taskType": "wait",
            "parameters": {"seconds": 0.1},
            "createdByAgentId": "schedulerAgent",
        }
        for g in ("A", "A", "A", "B", "C")
    ]
    with one.client() as c1, two.client() as c2:
        cid = new_conversation(c1)
        run = c1.post("/api/runs", json={"conversationId": cid, "title": "Fleet", "tasks": tasks})
        assert run.status_code == 201, run.text
        run_id = run.json()["id"]
        assert c2.post(f"/api/runs/{run_id}/approve").status_code == 200
        events = events_until(c1, cid, run_done(run_id))
        card = c2.get(f"/api/runs/{run_id}").json()
    assert card["status"] == "completed"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    done_tasks = [
        e for e in events if e["type"] == "task_status" and e["data"]["status"] == "completed"
    ]
    assert len(done_tasks) == 5, "each task completed exactly once"


def test_streams_see_every_event_when_every_notice_is_lost(tmp_path: Path, pg_url: str) -> None:
    """Notices are hints: with all of them dropped, a stream on another API still follows."""
    deaf = {"HANSA_DROP_NOTICES": "1"}
    with (
        running_server(tmp_path, database_url=pg_url, env=deaf, extra_args=("--workers", "0")) as a,
        running_server(tmp_path, database_url=pg_url, env=deaf, extra_args=("--workers", "0")) as b,
        running_worker(tmp_path, pg_url, env=deaf),
        a.client() as c1,
        b.client() as c2,
    ):
        cid = new_conversation(c1)
        with ThreadPoolExecutor(1) as pool:
            following = pool.submit(events_until, c2, cid, lambda e: e["type"] == "done")
            time.sleep(0.5)  # the stream is live (past its replay) before the turn is posted
            post(c1, cid, "Hello there")
            seen = following.result(timeout=60)
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
    assert seen[-1]["type"] == "done"
    assert hans_says(seen), "the answer reached the stream"


def test_a_lock_held_too_long_answers_503_and_readiness_says_so(
    tmp_path: Path, pg_url: str
) -> None:
    """Review M8: a write that waits past ``lock_timeout`` is an outage (503 with
    ``Retry-After``), not a 500; ``/readyz`` checks that the database takes a write."""
    quick = {"HANSA_DB_LOCK_TIMEOUT_SECONDS": "1"}
    with running_server(tmp_path, database_url=pg_url, env=quick) as server, server.client() as c:
        cid = new_conversation(c)
        assert c.get("/readyz").json() == {"status": "ready"}
        with psycopg.connect(pg_url) as holder:  # a transaction that keeps the rows locked
            holder.execute("SELECT 1 FROM assistant_conversations WHERE id = %s FOR UPDATE", (cid,))
            holder.execute("SELECT 1 FROM tenants WHERE id = 'default' FOR UPDATE")
            refused = c.post(f"/api/conversations/{cid}/messages", json={"content": "Hi"})
            not_ready = c.get("/readyz")
        for answer in (refused, not_ready):
            assert answer.status_code == 503, answer.text
            assert answer.json()["error"]["code"] == "database_unavailable"
            assert answer.json()["error"]["details"] == {"reason": "busy"}
            assert int(answer.headers["Retry-After"]) > 0
        assert c.get(f"/api/conversations/{cid}/messages").json() == [], "nothing half-written"
        assert c.get("/readyz").status_code == 200
        events = turn(c, cid, "Hello again")
    assert events[-1]["type"] == "done"
