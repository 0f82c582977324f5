"""The Agent Protocol's streams obey the stream limits of ``/api`` streams (security review
2026-11-27, L7): with 20 ``/api`` streams open on a conversation the 21st was 429, while 60
of 60 ``/ap/threads/{id}/runs/{rid}/stream`` requests on it were accepted."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path

import httpx
from apikeys import bearer, create_key

from harness import Server, running_server

RUN = {"assistant_id": "chief", "input": {"messages": [{"role": "user", "content": "Hi"}]}}


def _open(streams: ExitStack, server: Server, key: str, method: str, path: str) -> int:
    client = streams.enter_context(server.client(headers=bearer(key)))
    kwargs = {"json": RUN} if method == "POST" else {}
    response = streams.enter_context(client.stream(method, path, **kwargs))
    return response.status_code


def test_ap_streams_take_the_threads_subscriber_slots(tmp_path: Path) -> None:
    # no worker: the run stays pending, so each stream stays open
    env = {"HANSA_WORKERS": "0", "HANSA_MAX_WAITS_PER_PRINCIPAL": "100"}
    with running_server(tmp_path, env=env) as server:
        key = create_key(server, "acme", "member")
        with server.client(headers=bearer(key)) as c:
            tid = c.post("/ap/threads", json={}).json()["thread_id"]
            rid = c.post(f"/ap/threads/{tid}/runs", json=RUN).json()["run_id"]
            join = f"/ap/threads/{tid}/runs/{rid}/stream"
            with ExitStack() as streams:
                api = [
                    _open(streams, server, key, "GET", f"/api/conversations/{tid}/events")
                    for _ in range(10)
                ]
                joined = [_open(streams, server, key, "GET", join) for _ in range(10)]
                past = [c.get(join) for _ in range(5)]
                new_run = c.post(f"/ap/threads/{tid}/runs/stream", json=RUN)
                runs_before = len(c.get(f"/ap/threads/{tid}/runs").json())
                started = time.perf_counter()
                health = httpx.get(server.url + "/healthz", timeout=5)
                latency = time.perf_counter() - started
            runs_after = len(c.get(f"/ap/threads/{tid}/runs").json())
            again = _eventually(c, join)
    assert api == [200] * 10 and joined == [200] * 10, (api, joined)
    for refused in (*past, new_run):
        assert refused.status_code == 429, refused.text
        assert "this conversation" in refused.json()["error"]["message"]
        assert int(refused.headers["Retry-After"]) >= 1
    assert runs_before == runs_after == 1, "a refused streamed run started nothing"
    assert health.status_code == 200 and latency < 0.5
    assert again == 200, "the closed streams' slots came back"


def _eventually(c: httpx.Client, path: str) -> int:
    deadline = time.monotonic() + 10
    while True:
        with c.stream("GET", path) as response:
            if response.status_code == 200 or time.monotonic() > deadline:
                return response.status_code
        time.sleep(0.1)
