"""Operating a server: JSON logs with request and turn ids, the access log, ``/metrics``
(with HTTP requests by route, and no ``*_created`` series)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness import (
    Server,
    free_port,
    new_conversation,
    running_server,
    running_worker,
    turn,
)


@pytest.fixture(scope="module")
def json_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("operable")
    with running_server(tmp, extra_args=("--log-format", "json")) as s:
        yield s


def _metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the export (0 when absent)."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? (\S+)", line)
        if match is None or match[1] != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', match[2] or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(match[3])
    return 0.0


def _log_lines(path: Path) -> list[dict[str, object]]:
    lines = [line for line in path.read_text().splitlines() if line.startswith("{")]
    return [json.loads(line) for line in lines]


def test_metrics_count_a_turn_and_its_tokens(json_server: Server) -> None:
    with json_server.client() as client:
        before = client.get("/metrics")
        cid = new_conversation(client)
        events = turn(client, cid, "Hello there")
        after = client.get("/metrics")

    assert before.status_code == after.status_code == 200
    assert after.headers["content-type"].startswith("text/plain")
    text = after.text
    done = next(e for e in events if e["type"] == "done")
    assert done["data"]["status"] == "completed"
    turns = _metric(text, "hansa_turns_total", status="completed")
    assert turns == _metric(before.text, "hansa_turns_total", status="completed") + 1
    prompt = _metric(text, "hansa_llm_tokens_total", provider="scripted", kind="prompt")
    assert prompt > _metric(
        before.text, "hansa_llm_tokens_total", provider="scripted", kind="prompt"
    )
    assert _metric(text, "hansa_llm_calls_total", provider="scripted", outcome="ok") >= 1
    assert _metric(text, "hansa_job_seconds_count", kind="turn", outcome="ok") >= 1
    assert "hansa_llm_cost_usd_total" in text
    # the queue is read from the jobs table at scrape time: every kind is there
    assert 'hansa_queue_jobs{kind="turn",status="queued"}' in text
    assert 'hansa_queue_jobs{kind="run",status="running"}' in text


def test_metrics_is_not_in_the_openapi_description(json_server: Server) -> None:
    with json_server.client() as client:
        paths = client.get("/openapi.json").json()["paths"]
    assert "/metrics" not in paths and "/healthz" in paths


def test_json_logs_carry_request_and_turn_ids(json_server: Server) -> None:
    with json_server.client() as client:
        given = client.get("/healthz", headers={"X-Request-ID": "probe-42"})
        made = client.get("/api/agents")
        cid = new_conversation(client)
        events = turn(client, cid, "Hello again")
    turn_id = events[-1]["turnId"]
    assert given.headers["x-request-id"] == "probe-42"
    request_id = made.headers["x-request-id"]
    assert re.fullmatch(r"[0-9A-Z]{26}", request_id)

    deadline = time.monotonic() + 10
    while True:  # the access line is written as the response ends
        lines = _log_lines(json_server.log_path)
        access = [x for x in lines if x.get("logger") == "hansa.access"]
        jobs = [x for x in lines if x.get("turn_id") == turn_id]
        if (len(access) >= 2 and jobs) or time.monotonic() > deadline:
            break
        time.sleep(0.1)

    probe = next(x for x in access if x.get("request_id") == "probe-42")
    assert probe["method"] == "GET" and probe["path"] == "/healthz" and probe["status"] == 200
    assert probe["level"] == "info" and isinstance(probe["duration_ms"], float)
    agents = next(x for x in access if x.get("request_id") == request_id)
    assert agents["path"] == "/api/agents" and agents["message"].startswith("GET /api/agents 200")
    (job,) = jobs
    assert job["job_kind"] == "turn" and job["conversation_id"] == cid
    assert job["outcome"] == "ok" and "request_id" not in job


def test_metrics_count_http_requests_by_route_template(json_server: Server) -> None:
    with json_server.client() as client:
        cid = new_conversation(client)
        before = client.get("/metrics").text
        for _ in range(3):
            assert client.get(f"/api/conversations/{cid}").status_code == 200
        assert client.get("/api/conversations/nope").status_code == 404
        assert client.get("/no/such/path").status_code in (401, 404)
        after = client.get("/metrics").text

    route = "/api/conversations/{conversation_id}"
    seen = _metric(
        after, "hansa_http_request_seconds_count", method="GET", route=route, status="200"
    )
    was = _metric(
        before, "hansa_http_request_seconds_count", method="GET", route=route, status="200"
    )
    assert seen == was + 3, "the route's template, not each id: one series"
    assert _metric(after, "hansa_http_request_seconds_count", route=route, status="404") >= 1
    assert _metric(after, "hansa_http_request_seconds_sum", route=route, status="200") > 0
    assert cid not in after and "/no/such/path" not in after, "ids and unknown paths stay out"
    assert 'route="unmatched"' in after
    assert "_created" not in after, "no *_created duplicates of the counters and histograms"
    assert "hansa_turns_total" in after and "hansa_job_seconds_count" in after


def test_json_logs_are_json_without_colour_codes_from_the_first_line(json_server: Server) -> None:
    """uvicorn's start-up lines are JSON like the rest, without its ``color_message``."""
    lines = _log_lines(json_server.log_path)
    text = json_server.log_path.read_text()

    started = [x for x in lines if str(x.get("message", "")).startswith("Started server process")]
    assert started and started[0]["logger"] == "uvicorn.error"
    assert any(x.get("message") == "Application startup complete." for x in lines)
    assert all("color_message" not in x for x in lines)
    assert "\x1b[" not in text and "\\u001b" not in text
    banner = [x for x in lines if x.get("logger") == "hansa.cli"]
    assert banner and str(banner[0]["message"]).startswith("Hansa on http://")
    assert banner[0]["url"] == json_server.url
    assert [line for line in text.splitlines() if line.strip() and not line.startswith("{")] == []


def test_a_worker_process_serves_its_own_metrics(api: Server, pg_url: str, tmp_path: Path) -> None:
    port = free_port()
    args = ("--metrics-port", str(port))
    with running_worker(tmp_path, pg_url, extra_args=args), api.client() as client:
        cid = new_conversation(client)
        turn(client, cid, "Good morning!")  # only the worker process can answer it
        worker = f"http://127.0.0.1:{port}/metrics"

        deadline = time.monotonic() + 30
        while True:  # the job's end is counted just after its done is written
            text = httpx.get(worker, timeout=5).text
            if _metric(text, "hansa_job_seconds_count", kind="turn", outcome="ok") >= 1:
                break
            assert time.monotonic() < deadline, text
            time.sleep(0.2)
        served = client.get("/metrics").text

    assert _metric(text, "hansa_turns_total", status="completed") >= 1
    assert _metric(served, "hansa_job_seconds_count", kind="turn", outcome="ok") == 0, (
        "the API process ran no job: the worker's figures are the worker's to serve"
    )
