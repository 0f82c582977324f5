"""``/mcp`` counts against the key's rate like ``/api``, and no key holds unbounded waits
open (security review 2026-11-27, M3): the review's repro answered 30 of 30 ``/mcp``
requests with 200 after the key's allowance was spent, each call able to wait 120 s."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
from apikeys import bearer, create_key

from harness import new_conversation, running_server

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _chat(cid: str) -> dict[str, object]:
    return {"conversationId": cid, "messages": [{"role": "user", "content": "hello"}]}


def test_mcp_spends_the_same_allowance_as_api(tmp_path: Path) -> None:
    with running_server(tmp_path, env={"HANSA_RATE_LIMIT_PER_MINUTE": "5"}) as server:
        member = create_key(server, "tb", "member")
        with server.client(headers={**bearer(member), **MCP_HEADERS}) as c:
            spent = [c.get("/api/conversations").status_code for _ in range(5)]
            mcp = [c.post("/mcp", json=LIST_TOOLS) for _ in range(30)]
    assert spent == [200] * 5
    assert {r.status_code for r in mcp} == {429}, [r.status_code for r in mcp]
    assert all(int(r.headers["Retry-After"]) >= 1 for r in mcp)


def test_a_key_holds_a_bounded_number_of_waits_open(tmp_path: Path) -> None:
    env = {"HANSA_MAX_WAITS_PER_PRINCIPAL": "2", "HANSA_CHAT_TIMEOUT_SECONDS": "6"}
    # no worker: every turn stays queued, so each chat waits its whole timeout
    with running_server(tmp_path, env=env, extra_args=("--workers", "0")) as server:
        member, other = create_key(server, "tb", "member"), create_key(server, "tb", "member")
        with server.client(headers=bearer(member)) as c:
            cid = new_conversation(c)
        answers: list[int] = []

        def chat() -> None:
            with server.client(headers=bearer(member)) as c:
                answers.append(c.post("/api/assistant/chat", json=_chat(cid)).status_code)

        waiting = [threading.Thread(target=chat) for _ in range(2)]
        for t in waiting:
            t.start()
        time.sleep(1.5)
        with server.client(headers={**bearer(member), **MCP_HEADERS}) as c:
            third = c.post("/api/assistant/chat", json=_chat(cid))
            mcp = c.post("/mcp", json=LIST_TOOLS)
            reads = c.get(f"/api/conversations/{cid}")
        with server.client(headers={**bearer(other), **MCP_HEADERS}) as c:
            theirs = c.post("/mcp", json=LIST_TOOLS)
        started = time.monotonic()
        health = httpx.get(server.url + "/healthz", timeout=5)
        latency = time.monotonic() - started
        for t in waiting:
            t.join(30)
        with server.client(headers={**bearer(member), **MCP_HEADERS}) as c:
            after = c.post("/mcp", json=LIST_TOOLS)
    assert third.status_code == 429 and third.json()["error"]["code"] == "rate_limited"
    assert int(third.headers["Retry-After"]) >= 1
    assert mcp.status_code == 429, "an MCP call may wait too: it takes a slot"
    assert reads.status_code == 200, "reads that do not wait are not held back"
    assert theirs.status_code == 200, "another key has its own waits"
    assert health.status_code == 200 and latency < 0.5
    assert sorted(answers) == [202, 202], "the two waits answered when their time was up"
    assert after.status_code == 200, "their slots were given back"
