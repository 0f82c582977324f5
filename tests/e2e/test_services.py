"""Named services (issue 31 item 4): a tenant configures a service once (/api/services: base
URL through the outbound guard, credentials sealed and never shown, the methods graphs and
rules may call without a person), and graphs and rules name it. A call by an allowed method
runs unattended and carries the service's credentials; any other still waits for a person;
a service nobody configured is refused when the graph or rule is saved."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from apikeys import bearer, create_key
from cryptography.fernet import Fernet

from harness import Server, new_conversation, poll_until, post, running_server

TOKEN = "Bearer CANARY-SERVICE-TOKEN"
LISTENER = "the listener's address"


class Listener:
    """The service: a local HTTP server that notes every request (method, path, headers,
    body) and answers ``{"total": 2}``."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.arrived = threading.Condition()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def _note(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                with listener.arrived:
                    listener.seen.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": json.loads(raw) if raw else None,
                        }
                    )
                    listener.arrived.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"total": 2}')

            do_GET = do_POST = do_PUT = do_DELETE = _note  # noqa: N815 (http.server's names)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, listener: Listener) -> Iterator[Server]:
    env = {
        "HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{listener.port}",
        "HANSA_SECRET_KEY": Fernet.generate_key().decode(),
    }
    with running_server(tmp_path_factory.mktemp("services"), env=env) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _service(client: httpx.Client, listener: Listener, name: str, **extra: Any) -> Any:
    body = {
        "name": name,
        "baseUrl": f"http://127.0.0.1:{listener.port}/api",
        "headers": {"Authorization": TOKEN, "Accept": "application/json"},
        **extra,
    }
    made = client.post("/api/services", json=body)
    assert made.status_code == 201, made.text
    return made.json()


def _error(response: httpx.Response, status: int = 422) -> Any:
    assert response.status_code == status, response.text
    return response.json()["error"]


def _run_of(client: httpx.Client, components: list[Any], edges: list[Any] | None = None) -> str:
    cid = new_conversation(client)
    graph = client.post(
        "/api/graphs", json={"name": "svc", "components": components, "edges": edges or []}
    )
    assert graph.status_code == 201, graph.text
    run = client.post(
        f"/api/graphs/{graph.json()['id']}/runs",
        json={"conversationId": cid, "inputs": {"message": {"content": "disk full"}}},
    )
    assert run.status_code == 201, run.text
    return str(run.json()["id"])


def _call(node: str, **config: Any) -> dict[str, Any]:
    """A ``service.call`` node."""
    return {"id": node, "type": "service.call", "config": config}


def _settled(client: httpx.Client, run_id: str) -> Any:
    """The run's card once it has ended or a node waits for a person."""

    def settled(card: Any) -> bool:
        tasks = [t for g in card["groups"] for t in g["tasks"]]
        waiting = any(t["status"] == "awaiting_confirmation" for t in tasks)
        return waiting or card["status"] in ("completed", "failed", "cancelled")

    return poll_until(client, f"/api/runs/{run_id}", settled)


def _nodes(card: Any) -> dict[str, Any]:
    return {t["nodeId"]: t for g in card["groups"] for t in g["tasks"]}


def _calls_to(listener: Listener, path: str) -> list[dict[str, Any]]:
    return [r for r in listener.seen if r["path"] == path]


def test_a_service_is_stored_with_its_credentials_masked_and_sealed(
    server: Server, client: httpx.Client, listener: Listener
) -> None:
    made = _service(client, listener, "crm", unattendedMethods=["GET", "POST", "POST"])
    assert made["headers"] == {"Authorization": "***", "Accept": "application/json"}
    assert made["unattendedMethods"] == ["GET", "POST"]
    assert made["baseUrl"] == f"http://127.0.0.1:{listener.port}/api"
    listed = client.get("/api/services").json()
    assert "crm" in [s["name"] for s in listed]
    assert all(s["headers"].get("Authorization") in (None, "***") for s in listed)
    assert client.get("/api/services/crm").json()["headers"]["Authorization"] == "***"
    files = [server.db_path, server.db_path.with_name(server.db_path.name + "-wal")]
    raw = b"".join(f.read_bytes() for f in files if f.exists())
    assert b"CANARY-SERVICE-TOKEN" not in raw, "the credential is sealed at rest"

    patched = client.patch(
        "/api/services/crm",
        json={
            "headers": {"Authorization": "***", "Accept": "text/csv"},
            "unattendedMethods": ["GET"],
        },
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["headers"] == {"Authorization": "***", "Accept": "text/csv"}
    assert patched.json()["unattendedMethods"] == ["GET"]

    moved = f"http://127.0.0.1:{listener.port}/v2"
    stays = _error(client.patch("/api/services/crm", json={"baseUrl": moved}))
    assert stays["details"]["field"] == "headers", "credentials never follow a new address"
    kept_mask = client.patch(
        "/api/services/crm", json={"baseUrl": moved, "headers": {"Authorization": "***"}}
    )
    assert _error(kept_mask)["details"]["field"] == "headers.Authorization"
    assert client.get("/api/services/crm").json()["baseUrl"] == made["baseUrl"], "unchanged"
    resent = client.patch(
        "/api/services/crm", json={"baseUrl": moved, "headers": {"Authorization": "Bearer new"}}
    )
    assert resent.status_code == 200 and resent.json()["baseUrl"] == moved, resent.text
    for null in ({"baseUrl": None}, {"headers": None}):
        assert _error(client.patch("/api/services/crm", json=null))["details"]["field"] in (
            "baseUrl",
            "headers",
        )

    assert _error(
        client.post("/api/services", json={"name": "crm", "baseUrl": made["baseUrl"]}), 409
    )
    assert client.delete("/api/services/crm").status_code == 204
    assert _error(client.get("/api/services/crm"), 404)["code"] == "not_found"
    assert _error(client.delete("/api/services/crm"), 404)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"baseUrl": "http://127.0.0.1:9/api"}, "baseUrl"),  # loopback, not allow-listed
        ({"baseUrl": "http://10.1.2.3/api"}, "baseUrl"),  # private
        ({"baseUrl": "https://user:pw@example.com"}, "baseUrl"),
        ({"baseUrl": "ftp://example.com"}, "baseUrl"),
        ({"baseUrl": "https://example.com?key=1"}, "baseUrl"),
        ({"baseUrl": LISTENER, "headers": {"Bad Name": "x"}}, "headers.Bad Name"),
        ({"baseUrl": LISTENER, "headers": {"X-A": "a\r\nX-B: b"}}, "headers.X-A"),
        (
            {"baseUrl": LISTENER, "headers": {"Authorization": "***"}},
            "headers.Authorization",
        ),
    ],
)
def test_a_bad_service_is_refused_naming_its_field_and_nothing_is_stored(
    client: httpx.Client, listener: Listener, body: dict[str, Any], field: str
) -> None:
    if body["baseUrl"] == LISTENER:
        body = {**body, "baseUrl": f"http://127.0.0.1:{listener.port}"}
    error = _error(client.post("/api/services", json={"name": "broken", **body}))
    assert error["details"]["field"] == field, error
    assert _error(client.get("/api/services/broken"), 404)


def test_bad_fields_are_refused_by_the_schema(client: httpx.Client) -> None:
    for body in (
        {"name": "has space", "baseUrl": "https://example.com"},
        {"name": "ok", "baseUrl": "https://example.com", "unattendedMethods": ["TRACE"]},
        {"name": "ok"},
    ):
        response = client.post("/api/services", json=body)
        assert response.status_code == 422, (body, response.text)


def test_an_allowed_method_runs_unattended_with_the_services_credentials(
    client: httpx.Client, listener: Listener
) -> None:
    _service(client, listener, "logging", unattendedMethods=["POST"])
    body = {"text": "{{message.content}}", "limit": 10}
    components = [
        _call("logs", service="logging", method="POST", path="/logs/query", body=body),
        {"id": "say", "type": "message.send", "config": {"content": "{{logs.body.total}} found"}},
    ]
    card = _settled(client, _run_of(client, components, [{"from": "logs", "to": "say"}]))
    assert card["status"] == "completed", [(t["status"], t["error"]) for t in _nodes(card).values()]
    nodes = _nodes(card)
    assert nodes["logs"]["result"]["statusCode"] == 200
    assert nodes["say"]["result"]["text"] == "2 found"
    (request,) = _calls_to(listener, "/api/logs/query")
    assert request["method"] == "POST"
    assert request["headers"]["Authorization"] == TOKEN, "the service's credential arrives"
    assert request["body"] == {"text": "disk full", "limit": 10}


def test_a_method_the_service_does_not_allow_still_waits_for_a_person(
    client: httpx.Client, listener: Listener
) -> None:
    _service(client, listener, "tickets", unattendedMethods=["GET"])
    components = [_call("close", service="tickets", method="DELETE", path="/tickets/7")]
    card = _settled(client, _run_of(client, components))
    assert _nodes(card)["close"]["status"] == "awaiting_confirmation"
    assert not _calls_to(listener, "/api/tickets/7"), "nothing was sent"


def test_an_unknown_service_is_refused_when_a_graph_or_rule_is_saved(
    client: httpx.Client,
) -> None:
    node = {"service": "nowhere", "method": "GET", "path": "/x"}
    graph = client.post(
        "/api/graphs",
        json={"name": "g", "components": [_call("a", **node)]},
    )
    error = _error(graph)
    assert error["code"] == "invalid_graph"
    (problem,) = error["details"]["problems"]
    assert problem["code"] == "unknown_service"
    assert problem["field"] == "components[0].config.service"

    rule = client.post(
        "/api/rules",
        json={
            "name": "r",
            "trigger": "message.received",
            "conditions": {
                "logic": "and",
                "conditions": [{"field": "message.content", "operator": "exists"}],
            },
            "actions": [{"type": "service.call", "params": node}],
        },
    )
    error = _error(rule)
    assert error["details"]["field"] == "actions[0].params.service", error
    assert "nowhere" in error["message"]


def test_an_unattended_rule_calls_the_service_on_each_message(
    client: httpx.Client, listener: Listener
) -> None:
    _service(client, listener, "audit", unattendedMethods=["POST"])
    rule = client.post(
        "/api/rules",
        json={
            "name": "audit every refund",
            "trigger": "message.received",
            "conditions": {
                "logic": "and",
                "conditions": [
                    {"field": "message.content", "operator": "contains", "value": "refund"}
                ],
            },
            "actions": [
                {
                    "type": "service.call",
                    "params": {
                        "service": "audit",
                        "method": "POST",
                        "path": "/audit",
                        "body": {"said": "{{message.content}}"},
                    },
                }
            ],
        },
    )
    assert rule.status_code == 201, rule.text
    cid = new_conversation(client)
    post(client, cid, "I want a refund for order 7")
    with listener.arrived:
        listener.arrived.wait_for(lambda: bool(_calls_to(listener, "/api/audit")), timeout=30)
    (request,) = _calls_to(listener, "/api/audit")
    assert request["body"] == {"said": "I want a refund for order 7"}
    assert request["headers"]["Authorization"] == TOKEN
    client.delete(f"/api/rules/{rule.json()['id']}")


def test_a_tenant_has_at_most_its_settings_services(tmp_path: Path, listener: Listener) -> None:
    env = {
        "HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{listener.port}",
        "HANSA_MAX_SERVICES_PER_TENANT": "1",
    }
    with running_server(tmp_path, env=env) as s, s.client() as c:
        _service(c, listener, "first")
        over = c.post(
            "/api/services",
            json={"name": "second", "baseUrl": f"http://127.0.0.1:{listener.port}"},
        )
        refused = _error(over)
        assert refused["details"] == {"field": "name", "limit": 1}
        assert "HANSA_MAX_SERVICES_PER_TENANT" in refused["message"]
        assert [x["name"] for x in c.get("/api/services").json()] == ["first"]


def test_another_tenants_service_is_not_there(tmp_path: Path, listener: Listener) -> None:
    env = {"HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{listener.port}"}
    with running_server(tmp_path, env=env) as s:
        acme, globex = create_key(s, "acme"), create_key(s, "globex")
        with s.client(headers=bearer(acme)) as a, s.client(headers=bearer(globex)) as g:
            _service(a, listener, "billing", unattendedMethods=["POST"])
            assert _error(g.get("/api/services/billing"), 404)
            assert g.get("/api/services").json() == []
            assert _error(g.patch("/api/services/billing", json={"unattendedMethods": []}), 404)
            assert _error(g.delete("/api/services/billing"), 404)
            node = {"service": "billing", "method": "POST", "path": "/charge"}
            graph = g.post(
                "/api/graphs",
                json={
                    "name": "g",
                    "components": [_call("a", **node)],
                },
            )
            assert _error(graph)["details"]["problems"][0]["code"] == "unknown_service"
            assert a.get("/api/services/billing").json()["unattendedMethods"] == ["POST"]
