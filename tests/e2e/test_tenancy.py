"""Tenancy over the real server (security review C1): tenant B's key, on every route of the
app's OpenAPI description and every WebSocket route, with the ids of tenant A's objects,
gets 404 (or 401/403) and nothing of A's; and A's objects are as they were afterwards.

The routes come from ``GET /openapi.json`` and the app's WebSocket routes, so a route added
later is walked too: a path parameter of a new name is tried with every id of A's, and a
body this module cannot build a valid example of fails the test, saying which route needs
an entry in ``BODIES``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from apikeys import client, create_key, get_as
from fastapi.routing import APIWebSocketRoute
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from hansa.api.app import create_app
from hansa.settings import Settings
from harness import Server, events_until, new_conversation, post, running_server, waits

PUBLIC = {"/healthz", "/api/session"}
"""Routes that answer without a principal (signing in is tried with a key, not ids)."""


@dataclass
class TenantA:
    """What tenant A made, by the name of the parameter or field that refers to it."""

    key: str
    ids: dict[str, str]
    markers: set[str] = field(default_factory=set)
    """Text only A's objects contain: none may appear in an answer to B."""


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.url}: {response.text}"
    return response.json()


def _make_tenant_a(server: Server, key: str) -> TenantA:
    marker = "zq-acme-only"
    with client(server, key) as a:
        pid = _ok(a.post("/api/projects", json={"name": f"{marker} site"}), 201)["id"]
        cid = new_conversation(a, title=f"{marker} chat", projectId=pid)
        posted = post(a, cid, f"{marker} please improve our SEO traffic")
        events_until(a, cid, lambda e: e["type"] == "done" and e["turnId"] == posted["turnId"])
        body = {"conversationId": cid, "title": f"{marker} run", "tasks": waits("A")}
        run = _ok(a.post("/api/runs", json=body), 201)
        page = _ok(
            a.post(
                "/api/assistant/execute",
                json={
                    "conversationId": cid,
                    "createdByAgentId": "webEngineer",
                    "taskType": "create_page",
                    "parameters": {"title": f"{marker} page", "slug": "a", "contentHtml": "<p/>"},
                },
            )
        )["details"]
        product = _ok(
            a.post(
                "/api/assistant/execute",
                json={
                    "conversationId": cid,
                    "createdByAgentId": "ecommerceSpecialist",
                    "taskType": "create_product",
                    "parameters": {"name": f"{marker} product", "price": "9.00"},
                },
            )
        )["details"]
        rule = _ok(a.post("/api/rules", json=_rule_body(f"{marker} rule")), 201)
        held = new_conversation(a, title=f"{marker} held")
        handoff = _ok(a.post(f"/api/conversations/{held}/handoff", json={"reason": marker}), 201)
        agent = {"id": "acmeBot", "displayName": f"{marker} bot", "capabilities": ["wait"]}
        _ok(a.post("/api/agents", json=agent), 201)
        token = _ok(a.post("/api/agents/acmeBot/tokens"), 201)
    ids = {
        "conversation_id": cid,
        "thread_id": cid,  # the Agent Protocol's name for a conversation
        "run_id": run["id"],
        "task_id": run["groups"][0]["tasks"][0]["id"],
        "project_id": pid,
        "rule_id": rule["id"],
        "handoff_id": handoff["id"],
        "page_id": page["pageId"],
        "product_id": product["productId"],
        "key_id": token["id"],
        "agent_id": "acmeBot",
        "assistant_id": "acmeBot",  # the Agent Protocol's name for an agent
        "turn_id": posted["turnId"],
        "message_id": posted["messageId"],
        "version": "987654321",  # a rolling summary's version (A has none: 404 to B all the same)
    }
    return TenantA(key=key, ids=ids, markers={marker, key, token["key"]})


def _rule_body(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "trigger": "message.received",
        "conditions": {
            "logic": "and",
            "conditions": [{"field": "message.content", "operator": "words", "value": ["zzz"]}],
        },
        "actions": [{"type": "context.update", "params": {"set": {"topic": "x"}}}],
    }


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, TenantA, str]]:
    """A server, what tenant ``acme`` made, and an admin key of tenant ``globex``."""
    # the walk sends more requests in a minute than the default rate allows one key
    roomy = {"HANSA_RATE_LIMIT_PER_MINUTE": "5000"}
    with running_server(tmp_path_factory.mktemp("tenancy"), env=roomy) as server:
        a = _make_tenant_a(server, create_key(server, "acme", "admin"))
        yield server, a, create_key(server, "globex", "admin")


# --- Building requests from the OpenAPI description -------------------------------------

_FIELD_IDS = {
    "conversationId": "conversation_id",
    "runId": "run_id",
    "taskId": "task_id",
    "projectId": "project_id",
    "ruleId": "rule_id",
    "handoffId": "handoff_id",
    "turnId": "turn_id",
    "pageId": "page_id",
    "productId": "product_id",
    "keyId": "key_id",
    "messageId": "message_id",
}
"""Body and query fields that refer to an object: filled with A's object of that kind."""


def bodies(a: TenantA) -> dict[tuple[str, str], dict[str, Any]]:
    """Bodies the schema alone does not make valid (patterns, semantics)."""
    cid = a.ids["conversation_id"]
    return {
        ("POST", "/api/agents"): {"id": "globexBot", "displayName": "G"},
        ("POST", "/api/runs"): {"conversationId": cid, "title": "t", "tasks": waits("A")},
        ("POST", "/api/assistant/execute"): {
            "conversationId": cid,
            "createdByAgentId": "schedulerAgent",
            "taskType": "wait",
            "parameters": {"seconds": 0},
        },
        ("POST", "/api/assistant/chat"): {
            "conversationId": cid,
            "messages": [{"role": "user", "content": "hi"}],
        },
        ("POST", "/api/tasks/{task_id}/confirm"): {"parametersHash": "0" * 64},
        ("POST", "/api/rules"): {**_rule_body("b rule"), "projectId": a.ids["project_id"]},
        ("POST", "/api/rules/test"): {"trigger": "message.received", "facts": {}},
        ("POST", "/api/control"): {"event": "stream.cancel", "runId": a.ids["run_id"]},
        **{
            ("POST", f"/ap/threads/{{thread_id}}/runs{tail}"): {
                "assistant_id": "chief",
                "input": {"messages": [{"role": "user", "content": "hi"}]},
            }
            for tail in ("", "/wait", "/stream")
        },
        ("POST", "/ap/threads/{thread_id}/state"): {"values": {"tier": "gold"}},
        **{
            ("POST", path): {
                "assistant_id": "chief",
                "schedule": "0 9 * * *",
                "input": {"messages": [{"role": "user", "content": "hi"}]},
            }
            for path in ("/ap/runs/crons", "/ap/threads/{thread_id}/runs/crons")
        },
    }


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def example(spec: dict[str, Any], schema: dict[str, Any], a: TenantA, name: str = "") -> Any:
    """A small valid instance of ``schema``, A's ids in every field that refers to one."""
    schema = _resolve(spec, schema)
    if name in _FIELD_IDS:
        return a.ids[_FIELD_IDS[name]]
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for options in (schema.get("anyOf"), schema.get("oneOf"), schema.get("allOf")):
        if options:
            chosen = next((o for o in options if o.get("type") != "null"), options[0])
            return example(spec, chosen, a, name)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        wanted = set(schema.get("required", [])) | {k for k in props if k in _FIELD_IDS}
        return {k: example(spec, props[k], a, k) for k in props if k in wanted}
    if kind == "array":
        return [example(spec, schema["items"], a) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return {}


@dataclass(frozen=True)
class Attempt:
    """One request of B's: a route, its concrete path, query and body."""

    method: str
    template: str
    path: str
    query: dict[str, str]
    body: Any
    has_path_ids: bool

    def sent(self) -> str:
        return json.dumps([self.path, self.query, self.body])


def attempts(spec: dict[str, Any], a: TenantA) -> list[Attempt]:
    """Every operation of the description, once per id of A's its path may name."""
    overrides = bodies(a)
    out: list[Attempt] = []
    for template, operations in spec["paths"].items():
        if template in PUBLIC:
            continue
        names = re.findall(r"\{(\w+)\}", template)
        for method, op in operations.items():
            method = method.upper()
            query = {
                p["name"]: a.ids[_FIELD_IDS[p["name"]]]
                for p in op.get("parameters", [])
                if p["in"] == "query" and p["name"] in _FIELD_IDS
            }
            body = None
            if "requestBody" in op:
                schema = op["requestBody"]["content"]["application/json"]["schema"]
                body = overrides.get((method, template)) or example(spec, schema, a)
            for values in _path_values(names, a):
                path = template
                for n, v in zip(names, values, strict=True):
                    path = path.replace("{" + n + "}", v)
                out.append(Attempt(method, template, path, query, body, bool(names)))
    return out


def _path_values(names: list[str], a: TenantA) -> list[tuple[str, ...]]:
    if not names:
        return [()]
    known = [a.ids.get(n) for n in names]
    if all(v is not None for v in known):
        return [tuple(v for v in known if v is not None)]
    # a parameter of a name this module does not know (a route added later): every id of A's
    return [tuple(a.ids.get(n) or v for n in names) for v in sorted(set(a.ids.values()))]


def websocket_routes() -> list[str]:
    """The app's WebSocket routes (not in the OpenAPI description)."""
    app = create_app(Settings(database_url="sqlite:///:memory:"))
    found: list[str] = []

    def walk(routes: list[Any]) -> None:
        for route in routes:
            if isinstance(route, APIWebSocketRoute):
                found.append(route.path)
            inner = getattr(route, "original_router", None)
            if inner is not None:
                walk(inner.routes)

    walk(list(app.routes))
    return found


# --- The walk ---------------------------------------------------------------------------


def _send(c: httpx.Client, attempt: Attempt) -> tuple[int, str]:
    kwargs: dict[str, Any] = {"params": attempt.query}
    if attempt.body is not None:
        kwargs["json"] = attempt.body
    with c.stream(attempt.method, attempt.path, timeout=30, **kwargs) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response.status_code, ""  # a stream B should never have got: see below
        return response.status_code, response.read().decode()


def _leaks(a: TenantA, attempt: Attempt, text: str) -> list[str]:
    """A's markers, and A's ids that B did not send itself (an error may echo what it got)."""
    sent = attempt.sent()
    ids = {v for v in a.ids.values() if v not in sent}
    return sorted(m for m in a.markers | ids if m in text)


def test_tenant_b_reaches_nothing_of_tenant_a_on_any_route(
    tenants: tuple[Server, TenantA, str],
) -> None:
    server, a, b_key = tenants
    spec = get_as(server, None, "/openapi.json").json()
    tried = attempts(spec, a)
    problems: list[str] = []
    with client(server, b_key) as b:
        for attempt in tried:
            status, text = _send(b, attempt)
            where = f"{attempt.method} {attempt.template}"
            if status == 422 and attempt.has_path_ids:
                problems.append(f"{where}: 422 {text[:200]} (add a body to bodies())")
                continue
            if attempt.has_path_ids and status not in (401, 403, 404):
                problems.append(f"{where}: {status} for an id of another tenant")
            if not attempt.has_path_ids and attempt.body is not None and status < 300:
                if any(v in attempt.sent() for v in a.ids.values()) and where in MUST_REFUSE:
                    problems.append(f"{where}: {status} with A's ids in the body")
            leaked = _leaks(a, attempt, text)
            if leaked:
                problems.append(f"{where}: answered with A's {leaked}")
    assert not problems, "\n".join(problems)
    walked = {(t.method, t.template) for t in tried}
    assert len(walked) >= 45 and ("DELETE", "/api/keys/{key_id}") in walked


MUST_REFUSE = {
    "POST /api/conversations",
    "POST /api/runs",
    "POST /api/assistant/execute",
    "POST /api/assistant/chat",
    "POST /api/control",
    "POST /api/rules",
}
"""Routes whose body names A's objects: they must refuse (the rest must only leak nothing)."""


def test_tenant_b_cannot_open_tenant_as_websockets(tenants: tuple[Server, TenantA, str]) -> None:
    server, a, b_key = tenants
    routes = websocket_routes()
    assert routes, "the app has WebSocket routes"
    for template in routes:
        path = template.replace("{conversation_id}", a.ids["conversation_id"])
        url = server.url.replace("http://", "ws://") + path
        with pytest.raises(InvalidStatus) as refused:
            with connect(
                url, open_timeout=10, additional_headers={"Authorization": f"Bearer {b_key}"}
            ):
                pass
        assert refused.value.response.status_code in (403, 404), template


def test_tenant_as_objects_are_as_they_were(tenants: tuple[Server, TenantA, str]) -> None:
    server, a, b_key = tenants
    test_tenant_b_reaches_nothing_of_tenant_a_on_any_route(tenants)  # B tried everything
    ids = a.ids
    with client(server, a.key) as c:
        run = _ok(c.get(f"/api/runs/{ids['run_id']}"))
        handoff = _ok(c.get(f"/api/handoffs/{ids['handoff_id']}"))
        rule = _ok(c.get(f"/api/rules/{ids['rule_id']}"))
        project = _ok(c.get(f"/api/projects/{ids['project_id']}"))
        convo = _ok(c.get(f"/api/conversations/{ids['conversation_id']}"))
        keys = _ok(c.get("/api/keys"))
    assert run["status"] == "awaiting_approval"
    assert handoff["status"] == "pending"
    assert rule["enabled"] is True and rule["name"].endswith("rule")
    assert project["name"].endswith("site") and convo["title"].endswith("chat")
    assert all(k["revokedAt"] is None for k in keys), "B revoked none of A's keys"


def test_idempotency_keys_do_not_cross_tenants(tenants: tuple[Server, TenantA, str]) -> None:
    server, a, b_key = tenants
    headers = {"Idempotency-Key": "same-key-for-both"}
    body = {"title": "idempotent"}
    with client(server, a.key) as ca, client(server, b_key) as cb:
        first = _ok(ca.post("/api/conversations", json=body, headers=headers), 201)
        other = _ok(cb.post("/api/conversations", json=body, headers=headers), 201)
        b_sees = [c["id"] for c in _ok(cb.get("/api/conversations"))]
    assert other["id"] != first["id"], "B got its own conversation, not A's answer replayed"
    assert first["id"] not in b_sees
