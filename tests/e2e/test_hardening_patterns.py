"""No input stalls the event loop, over the real server (security review 2026-11-27, H1):
rules' and graph conditions' pattern tests, a huge ``words`` list, and templates that
multiply a large value. A thread polls ``/healthz`` while each attack runs; before the fix
it waited 2 to 12 s."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from harness import Server, events_until, new_conversation, poll_until, post, running_server

CATASTROPHIC = {"field": "message.content", "operator": "matches", "value": "(a|a)*$"}
"""The review's leaf: backtracks for ever on ``"a" * n + "!"``."""
HEALTHY = 0.5
"""The slowest ``/healthz`` allowed while an attack runs (generous for a loaded machine)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("patterns")
    env = {
        "HANSA_MAX_RULES_PER_TENANT": "3",
        "HANSA_MAX_RULE_WORDS": "100",
        "HANSA_MAX_CONVERSATION_CONTEXT_BYTES": "200000",
    }
    with running_server(tmp, env=env) as s:
        yield s


@contextmanager
def _health(server: Server) -> Iterator[list[float]]:
    """The slowest ``/healthz`` seen while the block runs (in a one-item list)."""
    slowest = [0.0]
    stop = threading.Event()

    def probe() -> None:
        with server.client(timeout=30) as c:
            while not stop.is_set():
                started = time.perf_counter()
                assert c.get("/healthz").status_code == 200
                slowest[0] = max(slowest[0], time.perf_counter() - started)
                time.sleep(0.005)

    prober = threading.Thread(target=probe, name="healthz probe")
    prober.start()
    try:
        yield slowest
    finally:
        stop.set()
        prober.join()


def _rule(client: httpx.Client, leaves: list[dict[str, Any]], name: str) -> dict[str, Any]:
    body = {
        "name": name,
        "trigger": "message.received",
        "conditions": {"logic": "or", "conditions": leaves},
        "actions": [{"type": "context.update", "params": {"set": {"hit": name}}}],
    }
    created = client.post("/api/rules", json=body)
    assert created.status_code == 201, created.text
    return dict(created.json())


def test_catastrophic_rules_neither_stall_the_loop_nor_match(server: Server) -> None:
    with server.client() as client:
        rules = [_rule(client, [CATASTROPHIC] * 50, f"evil {n}") for n in range(2)]
        try:
            facts = {"message": {"content": "a" * 30_000 + "!"}}
            with _health(server) as slowest:
                started = time.perf_counter()
                tried = client.post(
                    "/api/rules/test", json={"trigger": "message.received", "facts": facts}
                )
                took = time.perf_counter() - started
            assert tried.status_code == 200, tried.text
            assert slowest[0] < HEALTHY, f"/healthz took {slowest[0]:.3f} s"
            assert took < 5, f"the dry run took {took:.1f} s: the budget bounds it"
            mine = [f for f in tried.json()["firings"] if f["ruleId"] in {r["id"] for r in rules}]
            assert len(mine) == 2 and not any(f["matched"] for f in mine)
            leaves = [c for f in mine for c in f["conditions"]]
            assert all(c["timedOut"] and not c["matched"] for c in leaves)

            cid = new_conversation(client)
            with _health(server) as slowest:  # a 20,000-character message: the rules stage
                turn_id = post(client, cid, "a" * 19_999 + "!")["turnId"]
                events = events_until(
                    client, cid, lambda e: e["type"] == "done" and e["turnId"] == turn_id
                )
            assert slowest[0] < HEALTHY, f"/healthz took {slowest[0]:.3f} s"
            (evaluated,) = [e for e in events if e["type"] == "rule_evaluated"]
            firings = evaluated["data"]["firings"]
            assert not any(f["matched"] for f in firings)
            shown = [c["actual"] for f in firings for c in f["conditions"]]
            assert all(len(a) <= 501 for a in shown), "the event shows a part of the message"
            assert any(c["timedOut"] for f in firings for c in f["conditions"]), str(firings)[:1500]
        finally:
            for rule in rules:
                client.delete(f"/api/rules/{rule['id']}")


def test_rules_per_tenant_and_words_lists_are_capped(server: Server) -> None:
    leaf = {"field": "message.content", "operator": "words", "value": ["refund"]}
    huge = {**leaf, "value": [f"word{n}" for n in range(60_000)]}
    with server.client() as client:
        before = server.row_counts()
        too_many_words = client.post(
            "/api/rules",
            json={
                "name": "huge",
                "trigger": "message.received",
                "conditions": {"conditions": [huge]},
                "actions": [{"type": "context.update", "params": {"set": {"a": 1}}}],
            },
        )
        assert too_many_words.status_code == 422, too_many_words.text
        assert "at most 100 words" in too_many_words.json()["error"]["message"]
        slow = {"field": "message.content", "operator": "matches", "value": "(a{1000}){1000}"}
        with _health(server) as slowest:  # compiling it took 0.4 s where the rule is saved
            slow_to_compile = client.post(
                "/api/rules",
                json={
                    "name": "slow",
                    "trigger": "message.received",
                    "conditions": {"conditions": [slow]},
                    "actions": [{"type": "context.update", "params": {"set": {"a": 1}}}],
                },
            )
        assert slow_to_compile.status_code == 422, slow_to_compile.text
        assert "expand to more than" in slow_to_compile.json()["error"]["message"]
        assert slowest[0] < HEALTHY, f"/healthz took {slowest[0]:.3f} s"
        assert server.row_counts() == before
        made = [_rule(client, [leaf], f"r{n}") for n in range(3)]
        refused = client.post(
            "/api/rules",
            json={
                "name": "one too many",
                "trigger": "message.received",
                "conditions": {"conditions": [leaf]},
                "actions": [{"type": "context.update", "params": {"set": {"a": 1}}}],
            },
        )
        for rule in made:
            client.delete(f"/api/rules/{rule['id']}")
    assert refused.status_code == 422, refused.text
    assert "at most 3 rules" in refused.json()["error"]["message"]


def _graph(client: httpx.Client, components: list[Any], edges: list[Any]) -> str:
    made = client.post("/api/graphs", json={"name": "g", "components": components, "edges": edges})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _run(client: httpx.Client, graph_id: str, cid: str, **body: Any) -> dict[str, Any]:
    started = client.post(f"/api/graphs/{graph_id}/runs", json={"conversationId": cid, **body})
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    return poll_until(
        client,
        f"/api/runs/{run_id}",
        lambda r: r["status"] in ("completed", "failed", "cancelled"),
        seconds=60,
    )


def _nodes(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["nodeId"]: t for g in card["groups"] for t in g["tasks"]}


def test_a_graphs_catastrophic_condition_does_not_stall_the_loop(server: Server) -> None:
    leaf = {**CATASTROPHIC, "field": "context.text"}
    with server.client() as client:
        graph_id = _graph(
            client,
            [
                {
                    "id": "check",
                    "type": "condition",
                    "config": {"condition": {"logic": "or", "conditions": [leaf] * 50}},
                },
                {"id": "yes", "type": "message.send", "config": {"text": "matched"}},
                {"id": "no", "type": "message.send", "config": {"text": "no match"}},
            ],
            [
                {"from": "check", "to": "yes", "when": "true"},
                {"from": "check", "to": "no", "when": "false"},
            ],
        )
        cid = new_conversation(client)
        with _health(server) as slowest:
            done = _run(client, graph_id, cid, inputs={"context": {"text": "a" * 30_000 + "!"}})
    assert slowest[0] < HEALTHY, f"/healthz took {slowest[0]:.3f} s"
    assert done["status"] == "completed", done
    nodes = _nodes(done)
    assert (nodes["yes"]["status"], nodes["no"]["status"]) == ("skipped", "completed")
    tests = nodes["check"]["result"]["conditions"]
    assert all(t["timedOut"] and not t["matched"] for t in tests)


def _amplifier(client: httpx.Client, copies: int) -> str:
    """The review's H2 graph: a 65,000-character message, then a ``context.update`` that
    names it ``copies`` times."""
    return _graph(
        client,
        [
            {"id": "a", "type": "message.send", "config": {"text": "x" * 65_000}},
            {
                "id": "u",
                "type": "context.update",
                "config": {"set": {"k": ["{{a.result.text}}"] * copies}},
            },
        ],
        [{"from": "a", "to": "u"}],
    )


def test_template_amplification_fails_the_node_and_stores_nothing(server: Server) -> None:
    with server.client() as client:
        graph_id = _amplifier(client, 1000)  # an 86 KB request; 130 MB of context before
        cid = new_conversation(client)
        size_before = server.db_path.stat().st_size
        with _health(server) as slowest:
            done = _run(client, graph_id, cid)
        convo = client.get(f"/api/conversations/{cid}").json()
    assert slowest[0] < HEALTHY, f"/healthz took {slowest[0]:.3f} s"
    assert done["status"] == "failed", done
    update = _nodes(done)["u"]
    assert update["status"] == "failed"
    assert "HANSA_MAX_NODE_PARAMS_BYTES" in update["error"], update
    assert "k" not in convo["context"], "nothing was stored"
    # the message's own 65 KB (its event, its task) and no more: 130 MB before the fix
    grown = server.db_path.stat().st_size - size_before
    wal = server.db_path.with_name(server.db_path.name + "-wal")
    assert grown < 4 * 1024 * 1024 and (not wal.exists() or wal.stat().st_size < 32 * 1024**2)


def test_a_few_copies_still_fit(server: Server) -> None:
    with server.client() as client:
        graph_id = _amplifier(client, 2)
        cid = new_conversation(client)
        done = _run(client, graph_id, cid)
        convo = client.get(f"/api/conversations/{cid}").json()
    assert done["status"] == "completed", done
    assert convo["context"]["k"] == ["x" * 65_000] * 2


def test_a_conversations_context_is_capped(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        path = f"/api/conversations/{cid}"
        first = client.patch(path, json={"context": {"a": "x" * 150_000}})
        assert first.status_code == 200, first.text
        refused = client.patch(path, json={"context": {"b": "x" * 100_000}, "title": "t"})
        graph_id = _amplifier(client, 1)  # 65 KB more through a context.update
        done = _run(client, graph_id, cid)
        convo = client.get(path).json()
    assert refused.status_code == 422, refused.text
    assert "HANSA_MAX_CONVERSATION_CONTEXT_BYTES" in refused.json()["error"]["message"]
    assert done["status"] == "failed", done
    assert "HANSA_MAX_CONVERSATION_CONTEXT_BYTES" in _nodes(done)["u"]["error"]
    assert sorted(convo["context"]) == ["a"] and convo["title"] != "t", "nothing was changed"


def test_a_huge_list_index_fails_the_node_and_ends_the_run(server: Server) -> None:
    """L4: ``int()`` refused the 5,000-digit index, the run job failed 3 times, and the run
    stayed ``running``."""
    with server.client() as client:
        graph_id = _graph(
            client,
            [
                {
                    "id": "l",
                    "type": "loop",
                    "config": {"collection": [1, 2], "itemKey": "item"},
                },
                {
                    "id": "m",
                    "type": "message.send",
                    "config": {"text": "x {{l.result.items." + "9" * 5000 + "}}"},
                },
            ],
            [{"from": "l", "to": "m"}],
        )
        done = _run(client, graph_id, new_conversation(client))
    assert done["status"] == "failed", done
    tasks = [t for g in done["groups"] for t in g["tasks"]]
    failed = [t for t in tasks if t["status"] == "failed"]
    assert failed and all("law of clarity" in t["error"] for t in failed), [
        (t["nodeId"], t["status"], t["error"]) for t in tasks
    ]
