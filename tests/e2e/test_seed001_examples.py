"""Seed 001's own graph and rule examples, through the real server: each is accepted as the
seed writes it (tests/e2e/fixtures/seed001/, byte for byte), reads back in the one flat
form that can be sent again, runs, and does what the seed says. The ``logging`` service
and the ``openai`` provider are local stand-ins: a real HTTP server each, the model's
answer scripted."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from seed001 import example

from harness import Server, new_conversation, poll_until, running_server, turn

ANSWER = "Two errors: the disk is full and a request timed out."
ENTRIES = [{"message": "disk full"}, {"message": "request timed out"}]


class Stand:
    """The seed's ``logging`` service and an OpenAI-compatible model endpoint, on one port."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        stand = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                stand.requests.append((self.command, self.path, body))
                if self.path.endswith("/chat/completions") and body.get("stream"):
                    self._stream(body)
                elif self.path.endswith("/chat/completions"):
                    self._json(_completion(body))
                else:
                    self._json({"total": len(ENTRIES), "entries": ENTRIES, "path": self.path})

            def _json(self, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: Any) -> None:
                chunk = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": body.get("model"),
                    "choices": [{"index": 0, "delta": {"content": ANSWER}, "finish_reason": None}],
                }
                end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                usage = {**chunk, "choices": [], "usage": _completion(body)["usage"]}
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for frame in (chunk, end, usage):
                    self.wfile.write(f"data: {json.dumps(frame)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            do_GET = do_POST = _answer  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def prompts(self) -> list[Any]:
        return [body for _, path, body in self.requests if path.endswith("/chat/completions")]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _completion(body: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "gpt-4o-mini"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": ANSWER},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21},
    }


@pytest.fixture(scope="module")
def stand() -> Iterator[Stand]:
    s = Stand()
    yield s
    s.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, stand: Stand) -> Iterator[Server]:
    env = {
        "HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{stand.port}",
        "HANSA_OPENAI_BASE_URL": f"http://127.0.0.1:{stand.port}/v1",
        "HANSA_OPENAI_API_KEY": "sk-stand-in",
    }
    with running_server(tmp_path_factory.mktemp("seed001"), env=env) as s:
        yield s


@pytest.fixture(scope="module", autouse=True)
def logging_service(server: Server, stand: Stand) -> None:
    """The seed's ``logging`` service, the tenant's (``/api/services``): no method is
    unattended, so its POST waits for the user's consent."""
    service = {"name": "logging", "baseUrl": f"http://127.0.0.1:{stand.port}"}
    with server.client() as c:
        named = c.post("/api/services", json=service)
    assert named.status_code == 201, named.text


@pytest.fixture(scope="module")
def project(server: Server) -> str:
    """A project for the seed's rules."""
    with server.client() as c:
        made = c.post("/api/projects", json={"name": "Symbia"})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _graph(client: httpx.Client, components: list[Any], edges: list[Any] | None = None) -> Any:
    made = client.post(
        "/api/graphs", json={"name": "seed", "components": components, "edges": edges or []}
    )
    assert made.status_code == 201, made.text
    return made.json()


def _run(client: httpx.Client, graph_id: str, cid: str, inputs: dict[str, Any]) -> str:
    started = client.post(
        f"/api/graphs/{graph_id}/runs", json={"conversationId": cid, "inputs": inputs}
    )
    assert started.status_code == 201, started.text
    return str(started.json()["id"])


def _card(client: httpx.Client, run_id: str) -> Any:
    return client.get(f"/api/runs/{run_id}").json()


def _tasks(card: Any) -> dict[str, Any]:
    return {t["nodeId"]: t for g in card["groups"] for t in g["tasks"]}


def _ended(card: Any) -> bool:
    return card["status"] in ("completed", "failed", "cancelled")


def _confirm_and_finish(client: httpx.Client, run_id: str) -> Any:
    """Consent to each irreversible node as it asks (the seed's POST), until the run ends."""
    while True:
        card = poll_until(
            client,
            f"/api/runs/{run_id}",
            lambda c: (
                _ended(c) or any(t["status"] == "awaiting_confirmation" for t in _tasks(c).values())
            ),
            seconds=30,
        )
        if _ended(card):
            return card
        for task in _tasks(card).values():
            if task["status"] == "awaiting_confirmation":
                confirmed = client.post(
                    f"/api/tasks/{task['id']}/confirm",
                    json={"parametersHash": task["parametersHash"]},
                )
                assert confirmed.status_code == 200, confirmed.text


def _said(client: httpx.Client, cid: str) -> list[str]:
    found = client.get(f"/api/conversations/{cid}/messages").json()
    return [m["content"] for m in found if m["kind"] == "assistant"]


def _llm() -> dict[str, Any]:
    return dict(example("llm_invoke")["params"])


def test_each_graph_example_is_accepted_and_reads_back_in_one_form(client: httpx.Client) -> None:
    url = "http://127.0.0.1:9/{{message.content}}"
    bodies = {
        "llm_invoke": [example("llm_invoke")],
        "service_call": [example("service_call")],
        "parallel": [example("parallel", {"url": url}, {"url": url})],
        "condition": [example("service_call"), example("condition", {"params": _llm()})],
        "loop": [example("service_call"), example("loop")],
        "human_handoff": [example("human_handoff")],
    }
    for name, components in bodies.items():
        after = [{"from": "logsResult", "to": f"{c['type']}_2"} for c in components[1:]]
        saved = _graph(client, components, after)
        again = _graph(client, saved["components"], saved["edges"])
        assert again["components"] == saved["components"], name
        assert again["edges"] == saved["edges"], name
        assert all("params" not in c and "ifTrue" not in c["config"] for c in saved["components"])
    flat = _graph(client, [example("human_handoff")])
    assert [(c["id"], c["type"]) for c in flat["components"]] == [
        ("condition_1", "condition"),
        ("condition_1_true_1", "handoff.create"),
        ("condition_1_true_2", "message.send"),
    ]
    assert flat["edges"] == [
        {"from": "condition_1", "to": "condition_1_true_1", "when": "true"},
        {"from": "condition_1_true_1", "to": "condition_1_true_2", "when": None},
    ]
    assert flat["components"][0]["config"] == {
        "condition": {"field": "message.content", "operator": "contains", "value": "speak to human"}
    }


def test_the_prompt_graph_structure_runs_as_written(
    client: httpx.Client, stand: Stand, project: str
) -> None:
    """The seed's "Prompt Graphs" structure: its types spelled with dashes, configs left
    to their defaults (a model's prompt is the message; the reply is its answer)."""
    shape = example("graph_structure")
    graph = _graph(client, shape["components"], shape["edges"])
    cid = new_conversation(client, projectId=project)
    before = len(stand.requests)
    run_id = _run(client, graph["id"], cid, {"message": {"content": "why did the build fail?"}})
    card = _confirm_and_finish(client, run_id)

    assert [c["type"] for c in graph["components"]] == [
        "message.trigger",
        "service.call",
        "llm.invoke",
        "message.send",
    ]
    assert card["status"] == "completed", card
    tasks = _tasks(card)
    assert tasks["trigger"]["result"] == {"content": "why did the build fail?"}
    assert tasks["query"]["result"]["statusCode"] == 200
    assert [r[:2] for r in stand.requests[before:]][0] == ("GET", "/")
    prompt = stand.prompts()[-1]
    assert prompt["model"] == "gpt-4o-mini"
    assert prompt["messages"][-1]["content"] == "why did the build fail?"
    assert _said(client, cid)[-1] == ANSWER


def test_webhook_call_is_a_node_type(client: httpx.Client, stand: Stand) -> None:
    url = f"http://127.0.0.1:{stand.port}/hook"
    graph = _graph(
        client,
        [
            {"type": "webhook.call", "params": {"url": url, "method": "GET"}},
            {"type": "message.send", "params": {"content": "hook: {{webhook_call_1.statusCode}}"}},
        ],
        [{"from": "webhook_call_1", "to": "message_send_2"}],
    )
    cid = new_conversation(client)
    card = _confirm_and_finish(client, _run(client, graph["id"], cid, {}))
    assert card["status"] == "completed", card
    assert _tasks(card)["webhook_call_1"]["createdByAgentId"] == "technicalLead"  # not Hans
    assert _said(client, cid)[-1] == "hook: 200"


def test_the_service_call_condition_and_loop_examples_run_as_the_seed_says(
    client: httpx.Client, stand: Stand, project: str
) -> None:
    components = [
        example("service_call"),
        example("condition", {"params": _llm()}),
        example("loop"),
    ]
    edges = [
        {"from": "logsResult", "to": "condition_2"},
        {"from": "condition_2", "to": "loop_3"},
    ]
    graph = _graph(client, components, edges)
    cid = new_conversation(client, projectId=project)
    before = len(stand.requests)
    run_id = _run(client, graph["id"], cid, {"message": {"content": "any errors today?"}})
    card = _confirm_and_finish(client, run_id)

    tasks = _tasks(card)
    assert card["status"] == "completed", card
    assert tasks["condition_2_true_1"]["result"] == {"text": ANSWER}
    assert tasks["condition_2"]["result"]["branch"] == "true"
    assert tasks["condition_2_false_1"]["status"] == "skipped"
    service = [r for r in stand.requests[before:] if r[1] == "/api/logs/query"]
    assert service == [("POST", "/api/logs/query", {"level": "error", "limit": 10})]
    (prompt,) = stand.prompts()[-1:]
    assert prompt["model"] == "gpt-4o-mini" and prompt["temperature"] == 0.7
    assert 1024 in (prompt.get("max_tokens"), prompt.get("max_completion_tokens"))
    assert prompt["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    assert prompt["messages"][-1]["content"].startswith("User asked: any errors today?")
    said = _said(client, cid)
    assert said[-2:] == ["0: disk full", "1: request timed out"]


def test_the_human_handoff_example_hands_over_when_asked(client: httpx.Client) -> None:
    graph = _graph(client, [example("human_handoff")])
    asked = new_conversation(client)
    run_id = _run(client, graph["id"], asked, {"message": {"content": "I want to speak to human"}})
    poll_until(client, f"/api/conversations/{asked}", lambda c: c["state"] == "handoff_pending")
    (handed,) = [h for h in client.get("/api/handoffs").json() if h["conversationId"] == asked]
    client.post(f"/api/handoffs/{handed['id']}/accept", json={"assignee": "Ana"})
    client.post(f"/api/handoffs/{handed['id']}/return")
    card = poll_until(client, f"/api/runs/{run_id}", _ended, seconds=30)
    calm = new_conversation(client)
    quiet = poll_until(
        client,
        f"/api/runs/{_run(client, graph['id'], calm, {'message': {'content': 'hello'}})}",
        _ended,
    )

    assert handed["reason"] == "User requested human support" and handed["priority"] == "high"
    assert card["status"] == "completed", card
    assert "I'm connecting you with a human agent. Please wait..." in _said(client, asked)
    assert quiet["status"] == "completed"
    assert {t["status"] for n, t in _tasks(quiet).items() if n != "condition_1"} == {"skipped"}


def test_the_seed_rule_calls_the_service_asks_the_model_and_sends_its_answer(
    client: httpx.Client, stand: Stand, project: str
) -> None:
    rule = example(
        "rule_structure",
        example("service_call")["params"],
        _llm(),
        {"content": "{{llmResponse}}"},
    )
    made = client.post("/api/rules", json=rule)
    assert made.status_code == 201, made.text
    cid = new_conversation(client, projectId=project)
    events = turn(client, cid, "I keep getting an error when I save")
    run_id = next(e["runId"] for e in events if e["type"] == "run_created")
    card = _confirm_and_finish(client, run_id)
    client.delete(f"/api/rules/{made.json()['id']}")

    assert made.json()["name"] == "Handle error queries" and made.json()["id"] != "error-handler"
    assert card["status"] == "completed", [
        (t["status"], t.get("error")) for t in _tasks(card).values()
    ]
    assert [t["taskType"] for t in _tasks(card).values()] == [
        "service.call",
        "llm.invoke",
        "message.send",
    ]
    prompt = stand.prompts()[-1]
    assert prompt["messages"][-1]["content"].startswith(
        "User asked: I keep getting an error when I save"
    )
    assert ANSWER in _said(client, cid)


@pytest.mark.parametrize(
    ("actions", "named"),
    [
        ([{"type": "message.send", "params": {"content": "{{llmResponse}}"}}], "llmResponse"),
        ([{"type": "message.send", "params": {"content": "{{summary.text}}"}}], "summary.text"),
        ([{"type": "message.send", "params": {"content": ""}}], "content"),
        (
            [{"type": "llm.invoke", "params": {"promptTemplate": "x", "temperature": 9}}],
            "temperature",
        ),
        ([{"type": "teleport", "params": {}}], "teleport"),
    ],
)
def test_a_rule_whose_actions_cannot_work_is_refused_at_save(
    client: httpx.Client, actions: list[Any], named: str
) -> None:
    rule = {"name": "broken", "trigger": "message.received", "actions": actions}
    refused = client.post("/api/rules", json=rule)
    assert refused.status_code == 422, refused.text
    assert named in refused.text


def test_the_chain_passes_each_result_to_the_next(client: httpx.Client, project: str) -> None:
    rule = {
        "name": "chain",
        "trigger": "message.received",
        "conditions": {
            "conditions": [{"field": "message.content", "operator": "contains", "value": "logs"}]
        },
        "actions": [
            {"type": "context.update", "params": {"set": {"asked": "{{message.content}}"}}},
            example("service_call"),
            {"type": "message.send", "params": {"content": "{{logsResult.total}} entries"}},
        ],
    }
    made = client.post("/api/rules", json=rule)
    assert made.status_code == 201, made.text
    cid = new_conversation(client, projectId=project)
    events = turn(client, cid, "show me the logs")
    convo = client.get(f"/api/conversations/{cid}").json()
    run_id = next(e["runId"] for e in events if e["type"] == "run_created")
    card = _confirm_and_finish(client, run_id)
    client.delete(f"/api/rules/{made.json()['id']}")

    assert convo["metadata"]["context"]["asked"] == "show me the logs", "at once, templated"
    assert card["status"] == "completed", card
    assert "2 entries" in _said(client, cid)


def test_a_fact_missing_at_the_head_fails_the_node_not_the_turn(client: httpx.Client) -> None:
    rule = {
        "name": "tiers",
        "trigger": "message.received",
        "conditions": {
            "conditions": [{"field": "message.content", "operator": "contains", "value": "tier"}]
        },
        "actions": [{"type": "message.send", "params": {"content": "Tier {{context.tier}}"}}],
    }
    made = client.post("/api/rules", json=rule)
    assert made.status_code == 201, made.text
    cid = new_conversation(client)
    events = turn(client, cid, "which tier am I on?")
    run_id = next(e["runId"] for e in events if e["type"] == "run_created")
    card = poll_until(client, f"/api/runs/{run_id}", _ended)
    client.delete(f"/api/rules/{made.json()['id']}")

    (node,) = _tasks(card).values()
    assert events[-1]["type"] == "done" and "error" not in {e["type"] for e in events}
    assert card["status"] == "failed" and "context.tier" in node["error"]


def test_the_parallel_example_runs_its_actions_side_by_side(
    client: httpx.Client, stand: Stand
) -> None:
    base = f"http://127.0.0.1:{stand.port}"
    fork = example(
        "parallel",
        {"url": f"{base}/api/logs/recent", "resultKey": "recent"},
        {"url": f"{base}/api/logs/errors", "resultKey": "errors"},
    )
    graph = _graph(client, [fork])
    cid = new_conversation(client)
    before = len(stand.requests)
    card = _confirm_and_finish(client, _run(client, graph["id"], cid, {}))

    tasks = _tasks(card)
    assert card["status"] == "completed", card
    assert tasks["parallel_1"]["parameters"]["timeout"] == 5000
    assert {tasks[n]["dependsOn"][0] for n in ("recent", "errors")} == {tasks["parallel_1"]["id"]}
    assert tasks["recent"]["result"]["total"] == 2 and tasks["errors"]["status"] == "completed"
    paths = sorted(path for _, path, _ in stand.requests[before:])
    assert paths == ["/api/logs/errors", "/api/logs/recent"]
