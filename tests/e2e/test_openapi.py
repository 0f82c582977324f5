"""The API's description (``/openapi.json``) and its pages, on the real server.

The description must be truthful: every operation tagged and named, every error the shared
``ErrorBody``, one schema per event type; and what the server really answers along a
user's path (projects, conversations, a turn and its events, a run, keys, rules…) must
match the documented schema of its operation and status, with no undocumented field.
``/docs`` and ``/redoc`` load their scripts and styles from Hansa itself (offline).
"""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from typing import Any

import httpx
import jsonschema_rs
import pytest

from harness import Server, events_until, new_conversation, run_done, stream, waits

EVENT_TYPES = (
    "session routing status thinking text_delta draft_superseded message plan run_created "
    "run_status task_created task_updated task_status tool_call tool_result operation "
    "entity_patch context_usage summary_updated agent_state handoff handoff_status "
    "rule_evaluated assistant.intent.claim assistant.intent.defer assistant.action.observe "
    "assistant.action.respond error done session_step session_status"
).split()
"""docs/api.md's event types, and the agent sessions'."""

TAGS = {
    "health", "identity", "keys", "agents", "projects", "conversations", "events", "chat",
    "turns", "claims", "control", "agent state", "handoffs", "runs", "tasks", "rules",
    "graphs", "sessions", "usage", "workspace", "openai", "ag-ui", "schedules", "webhooks",
    "agent-protocol", "services",
}  # fmt: skip


@pytest.fixture(scope="module")
def spec(server: Server) -> dict[str, Any]:
    with server.client() as client:
        response = client.get("/openapi.json")
    assert response.status_code == 200
    found: dict[str, Any] = response.json()
    return found


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, ops in spec["paths"].items()
        for method, op in ops.items()
    ]


def test_every_operation_is_tagged_and_named(spec: dict[str, Any]) -> None:
    ops = _operations(spec)
    assert len(ops) >= 80
    ids = [op.get("operationId") for _, _, op in ops]
    assert all(ids) and len(set(ids)) == len(ids), "operationIds are unique"
    assert all(re.fullmatch(r"[a-z][A-Za-z]+", i) for i in ids), ids
    assert {"createRun", "listRuns", "getRun", "approveRun", "getTask", "confirmTask",
            "createConversation", "postMessage", "streamConversationEvents", "assistantChat",
            "assistantExecute", "listAgentSessions", "acceptHandoff", "createKey",
            "healthz"} <= set(ids)  # fmt: skip
    for method, path, op in ops:
        assert op.get("tags") and set(op["tags"]) <= TAGS, f"{method} {path}: {op.get('tags')}"
    assert {t["name"] for t in spec["tags"]} == TAGS


def test_every_error_is_the_error_body(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    assert schemas["ErrorBody"]["required"] == ["error"]
    assert set(schemas["ErrorInfo"]["required"]) == {"code", "message", "details"}
    for method, path, op in _operations(spec):
        errors = {s: r for s, r in op["responses"].items() if s[0] in "45"}
        assert {"400", "413", "503"} <= set(errors), f"{method} {path}"
        if path.startswith("/api/"):
            assert {"403", "429"} <= set(errors), f"{method} {path}"
        for status, response in errors.items():
            schema = response["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, f"{method} {path}"
            assert response["description"], f"{method} {path} {status}"
    assert "401" in spec["paths"]["/api/runs"]["get"]["responses"]
    assert spec["paths"]["/api/runs"]["get"]["security"] == [{"bearerKey": []}]
    assert "409" in spec["paths"]["/api/runs/{run_id}/approve"]["post"]["responses"]
    assert "404" in spec["paths"]["/api/runs/{run_id}"]["get"]["responses"]


def test_every_success_is_typed(spec: dict[str, Any]) -> None:
    for method, path, op in _operations(spec):
        for status, response in op["responses"].items():
            if not status.startswith("2") or status == "204":
                continue
            content = response["content"]
            schema = next(iter(content.values()))["schema"]
            if schema.get("type") == "integer":  # the Agent Protocol's counts are bare
                assert path.endswith("/count"), f"{method} {path} {status}: {schema}"
            elif "application/json" in content:
                assert schema not in ({}, {"type": "object", "additionalProperties": True})
                typed_map = isinstance(schema.get("additionalProperties"), dict) and (
                    "$ref" in schema["additionalProperties"]
                )  # a map whose values are a model (LangGraph's subgraphs by namespace)
                assert "$ref" in schema or "items" in schema or "anyOf" in schema or typed_map, (
                    f"{method} {path} {status}: {schema}"
                )


def test_every_event_type_has_a_schema(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    mapping = schemas["Event"]["discriminator"]["mapping"]
    assert set(EVENT_TYPES) <= set(mapping)
    for tag, ref in mapping.items():
        envelope = schemas[ref.rsplit("/", 1)[1]]
        assert envelope["properties"]["type"]["const"] == tag
        data = envelope["properties"]["data"]["$ref"].rsplit("/", 1)[1]
        assert data in schemas and "type" not in schemas[data].get("properties", {})
    for frame in ("WebSocketMessage", "WebSocketControlRequest", "WebSocketAccepted",
                  "WebSocketControl", "WebSocketError"):  # fmt: skip
        assert frame in schemas
    sse = spec["paths"]["/api/conversations/{conversation_id}/events"]["get"]["responses"]
    event = sse["200"]["content"]["text/event-stream"]["schema"]
    assert event["properties"]["data"]["contentSchema"] == {"$ref": "#/components/schemas/Event"}


class _Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_load_only_what_hansa_serves(server: Server, page: str) -> None:
    with server.client() as client:
        response = client.get(page)
        assert response.status_code == 200
        parser = _Assets()
        parser.feed(response.text)
        assert parser.urls, "the page loads its script and style"
        for url in parser.urls:
            assert url.startswith("/") and not url.startswith("//"), url
            assert client.get(url).status_code == 200, url
        assert "cdn" not in response.text.lower() and "https://" not in response.text
        assert client.get("/openapi.json").status_code == 200


def _strict(schema: Any) -> Any:
    """``schema`` with every object's properties closed: an undocumented field fails."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


class Checked:
    """A client whose every JSON answer is validated against the description."""

    def __init__(self, client: httpx.Client, spec: dict[str, Any]) -> None:
        self.client = client
        self.spec = spec
        self.components = _strict(copy.deepcopy(spec["components"]))
        self.checked: set[tuple[str, str, int]] = set()
        self.templates = [
            (re.compile("^" + re.sub(r"\{[^/]+\}", "[^/]+", path) + "$"), path)
            for path in spec["paths"]
        ]

    def __call__(self, method: str, url: str, **kwargs: Any) -> Any:
        response = self.client.request(method, url, **kwargs)
        self.validate(method, url, response.status_code, response.json())
        return response

    def validate(self, method: str, url: str, status: int, body: Any) -> None:
        path = url.split("?")[0]
        template = next(t for regex, t in self.templates if regex.match(path))
        operation = self.spec["paths"][template][method.lower()]
        documented = operation["responses"].get(str(status))
        assert documented, f"{method} {template}: {status} is not documented"
        schema = documented["content"]["application/json"]["schema"]
        self.check(schema, body, f"{method} {template} {status}")
        self.checked.add((method, template, status))

    def check(self, schema: dict[str, Any], body: Any, where: str) -> None:
        validator = jsonschema_rs.validator_for(
            {**_strict(schema), "components": self.components}, validate_formats=True
        )
        problems = [f"{e.instance_path}: {e.message}" for e in validator.iter_errors(body)]
        assert not problems, f"{where}: {problems[:5]}\n{json.dumps(body)[:2000]}"


def test_what_the_server_answers_is_what_it_describes(server: Server, spec: dict[str, Any]) -> None:
    with server.client() as client:
        call = Checked(client, spec)
        for path in ("/healthz", "/readyz", "/api/me", "/api/tenant", "/api/agents",
                     "/api/task-types", "/api/keys", "/api/rules", "/api/graphs",
                     "/api/handoffs", "/api/agent-sessions", "/api/usage",
                     "/api/llm-calls", "/api/conversations", "/api/projects"):  # fmt: skip
            assert call("GET", path).status_code == 200, path
        project = call("POST", "/api/projects", json={"name": "Docs", "domain": "d.example"})
        pid = project.json()["id"]
        call("PATCH", f"/api/projects/{pid}", json={"config": {"llm": {}}})
        call("GET", f"/api/projects/{pid}")
        cid = new_conversation(client, projectId=pid, title="Described")
        call("GET", f"/api/conversations/{cid}")
        call("PATCH", f"/api/conversations/{cid}", json={"context": {"tier": "gold"}})
        posted = call("POST", f"/api/conversations/{cid}/messages", json={"content": "Hello"})
        events = stream(client, cid, turn_id=posted.json()["turnId"], until_done=False)
        for ev in events:
            call.check({"$ref": "#/components/schemas/Event"}, ev, f"event {ev['type']}")
        call("GET", f"/api/conversations/{cid}/messages")
        call("GET", f"/api/conversations/{cid}/timeline")
        call("GET", f"/api/conversations/{cid}/agent-state")
        run = call("POST", "/api/runs", json={"conversationId": cid, "title": "Waits",
                                              "tasks": waits("A", "B")})  # fmt: skip
        rid = run.json()["id"]
        call("POST", f"/api/runs/{rid}/approve")
        finished = events_until(client, cid, run_done(rid), after=events[-1]["seq"])
        for ev in finished:
            call.check({"$ref": "#/components/schemas/Event"}, ev, f"event {ev['type']}")
        card = call("GET", f"/api/runs/{rid}").json()
        call("GET", f"/api/tasks/{card['groups'][0]['tasks'][0]['id']}")
        call("GET", f"/api/runs/{rid}/logs")
        call("GET", f"/api/runs?conversationId={cid}")
        call("POST", f"/api/runs/{rid}/cancel")
        call("GET", "/api/runs/nope")  # 404
        call("POST", "/api/runs", json={"conversationId": cid})  # 422
        rule = call("POST", "/api/rules", json={
            "name": "greet", "trigger": "message.received",
            "actions": [{"type": "context.update", "params": {"set": {"seen": True}}}],
        }).json()  # fmt: skip
        call("GET", f"/api/rules/{rule['id']}")
        call("GET", f"/api/rules/{rule['id']}/firings")
        call("POST", "/api/rules/test", json={"trigger": "message.received", "facts": {}})
        handoff = call("POST", f"/api/conversations/{cid}/handoff", json={"reason": "help"})
        hid = handoff.json()["id"]
        call("POST", f"/api/handoffs/{hid}/accept", json={"assignee": "Ada"})
        call("POST", f"/api/handoffs/{hid}/messages", json={"content": "I am here."})
        call("POST", f"/api/handoffs/{hid}/return")
        call("POST", "/api/control", json={"event": "stream.handoff", "conversationId": cid})
        call("GET", "/api/usage?since=2000-01-01T00:00:00Z")
        # last: once a key exists, local mode is over and every request needs one
        key = call("POST", "/api/keys", json={"role": "admin", "name": "docs"}).json()
        assert key["key"].startswith("hk_")
        call("GET", "/api/keys", headers={"Authorization": f"Bearer {key['key']}"})
        call("GET", "/api/me")  # 401
    assert len(call.checked) >= 40
