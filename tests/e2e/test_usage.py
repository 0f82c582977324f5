"""GET /api/usage over the real server (issue 13 item 9): after two turns and a graph run
with model calls (the scripted model reports tokens), the totals, the sums per agent, per
run and per model are those of GET /api/llm-calls; filters narrow them; another tenant
sees none of it."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from apikeys import client, create_key

from harness import Server, new_conversation, running_server, turn

Usage = dict[str, Any]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("usage")) as s:
        yield s


@pytest.fixture(scope="module")
def keys(server: Server) -> tuple[str, str]:
    return create_key(server, "acme"), create_key(server, "globex")


@pytest.fixture(scope="module")
def acme(server: Server, keys: tuple[str, str]) -> Iterator[httpx.Client]:
    with client(server, keys[0]) as c:
        yield c


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.url}: {response.text}"
    return response.json()


def _graph_run(c: httpx.Client, cid: str) -> str:
    """A run of two model nodes (Rui's and Sami's); its id once it has completed."""
    components = [
        {"id": "research", "type": "llm.invoke",
         "config": {"prompt": "Research {{message.content}}", "agentId": "researchAgent"}},
        {"id": "keywords", "type": "llm.invoke",
         "config": {"prompt": "Keywords for {{llmResponse}}", "agentId": "seoSpecialist"}},
    ]  # fmt: skip
    edges = [{"from": "research", "to": "keywords"}]
    body = {"name": "usage", "components": components, "edges": edges}
    graph = _ok(c.post("/api/graphs", json=body), 201)["id"]
    inputs = {"message": {"content": "swimming pools"}}
    run = _ok(
        c.post(f"/api/graphs/{graph}/runs", json={"conversationId": cid, "inputs": inputs}), 201
    )
    deadline = time.monotonic() + 30
    while (card := _ok(c.get(f"/api/runs/{run['id']}")))["status"] not in ("completed", "failed"):
        assert time.monotonic() < deadline, f"the run never ended: {card['status']}"
        time.sleep(0.05)
    assert card["status"] == "completed", card
    return str(run["id"])


@pytest.fixture(scope="module")
def made(acme: httpx.Client) -> dict[str, str]:
    """Two turns (Dana's, Hans's) and a graph run in one conversation, a turn in another."""
    cid = new_conversation(acme)
    turn(acme, cid, "Please improve our SEO traffic")
    turn(acme, cid, "hello there")
    run_id = _graph_run(acme, cid)
    other = new_conversation(acme)
    turn(acme, other, "hello again")
    return {"conversation": cid, "run": run_id, "other": other}


def _sums(calls: list[dict[str, Any]], *key: str) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = defaultdict(
        lambda: {"calls": 0, "promptTokens": 0, "completionTokens": 0, "totalTokens": 0,
                 "costUsd": 0.0}
    )  # fmt: skip
    for call in calls:
        sums = out[tuple(call[k] for k in key)]
        sums["calls"] += 1
        for field in ("promptTokens", "completionTokens", "totalTokens", "costUsd"):
            sums[field] += call[field]
    return dict(out)


def _same(found: dict[str, Any], expected: dict[str, Any]) -> None:
    for field, value in expected.items():
        assert found[field] == pytest.approx(value), (field, found, expected)


def test_the_usage_is_the_sum_of_the_model_calls(acme: httpx.Client, made: dict[str, str]) -> None:
    calls = _ok(acme.get("/api/llm-calls"))
    usage: Usage = _ok(acme.get("/api/usage"))
    assert len(calls) >= 4 and all(c["totalTokens"] > 0 for c in calls), calls
    _same(usage["totals"], _sums(calls)[()])

    per_agent = _sums(calls, "agentId")
    assert {a["agentId"] for a in usage["byAgent"]} == {k[0] for k in per_agent}
    assert {"growthLead", "chief", "researchAgent", "seoSpecialist"} <= set(k[0] for k in per_agent)
    for row in usage["byAgent"]:
        _same(row, per_agent[(row["agentId"],)])
    tokens = [a["totalTokens"] for a in usage["byAgent"]]
    assert tokens == sorted(tokens, reverse=True), "most tokens first"

    per_run = _sums([c for c in calls if c["runId"]], "runId")
    assert [r["runId"] for r in usage["byRun"]] == [made["run"]]
    run = usage["byRun"][0]
    assert run["title"] and run["calls"] == 2
    _same(run, {k: v for k, v in per_run[(made["run"],)].items() if k in run})

    per_model = _sums(calls, "provider", "model")
    assert {(m["provider"], m["model"]) for m in usage["byModel"]} == set(per_model)
    for row in usage["byModel"]:
        expected = per_model[(row["provider"], row["model"])]
        _same(row, {k: v for k, v in expected.items() if k in row})


def test_filters_narrow_the_usage_to_a_conversation_a_run_or_a_time(
    acme: httpx.Client, made: dict[str, str]
) -> None:
    for params in ({"conversationId": made["conversation"]}, {"runId": made["run"]}):
        calls = _ok(acme.get("/api/llm-calls", params=params))
        usage = _ok(acme.get("/api/usage", params=params))
        _same(usage["totals"], _sums(calls)[()])
    other = _ok(acme.get("/api/usage", params={"conversationId": made["other"]}))
    assert [a["agentId"] for a in other["byAgent"]] == ["chief"] and other["byRun"] == []
    later = _ok(acme.get("/api/usage", params={"since": "2999-01-01T00:00:00Z"}))
    assert later["totals"]["calls"] == 0 and later["byAgent"] == []
    naive = _ok(acme.get("/api/usage", params={"since": "2000-01-01T00:00:00"}))
    assert naive["totals"] == _ok(acme.get("/api/usage"))["totals"], "no zone: UTC"
    assert acme.get("/api/usage", params={"since": "yesterday"}).status_code == 422


def test_another_tenant_sees_none_of_it(
    server: Server, keys: tuple[str, str], made: dict[str, str]
) -> None:
    with client(server, keys[1]) as globex:
        empty = _ok(globex.get("/api/usage"))
        by_ids = [
            _ok(globex.get("/api/usage", params={"conversationId": made["conversation"]})),
            _ok(globex.get("/api/usage", params={"runId": made["run"]})),
        ]
        cid = new_conversation(globex)
        turn(globex, cid, "hello from globex")
        own = _ok(globex.get("/api/usage"))
        own_calls = _ok(globex.get("/api/llm-calls"))
    zero = {
        "calls": 0,
        "promptTokens": 0,
        "completionTokens": 0,
        "totalTokens": 0,
        "costUsd": 0,
        "cancelledCalls": 0,
        "failedCalls": 0,
        "estimatedTokens": 0,
    }
    assert empty == {"totals": zero, "byAgent": [], "byRun": [], "byModel": []}
    assert all(u == empty for u in by_ids), "A's ids name nothing of B's"
    _same(own["totals"], _sums(own_calls)[()])
    assert own["totals"]["calls"] == len(own_calls) >= 1 and own["byRun"] == []
