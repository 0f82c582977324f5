"""Projects that reach outside systems, through the real server: secrets stay write-only
(the canary), one outbound guard holds for every connector (review H1), and a GET webhook
that could leak what a run found waits for consent (review M7)."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet

from harness import Server, events_until, new_conversation, run_done, running_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "tasks"))
from fake_wordpress import FakeSite, serve  # noqa: E402

CANARY = "canary-7f3c9e1b"
"""Every secret below contains it; no answer, event, log line or stored byte may."""
WP_PASSWORD = f"{CANARY}-wp"
SHOP_SECRET = f"cs_{CANARY}-shop"
HOOK_TOKEN = f"{CANARY}-hook"
QUERY_KEY = f"{CANARY}-query"


class _Listener(ThreadingHTTPServer):
    """A local HTTP server that records every request and answers ``{"ok": true}``."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.requests: list[tuple[str, str, dict[str, str]]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Recorder(BaseHTTPRequestHandler):
    server: _Listener

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.server.requests.append((self.command, self.path, dict(self.headers)))
        body = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer  # noqa: N815


@pytest.fixture(scope="module")
def listeners() -> Iterator[dict[str, _Listener]]:
    started = {name: _Listener() for name in ("hook", "internal")}
    threads = [threading.Thread(target=s.serve_forever, args=(0.01,)) for s in started.values()]
    for thread in threads:
        thread.start()
    yield started
    for server in started.values():
        server.shutdown()
        server.server_close()
    for thread in threads:
        thread.join()


@pytest.fixture(scope="module")
def site() -> Iterator[FakeSite]:
    with serve(FakeSite(app_password=WP_PASSWORD, consumer_secret=SHOP_SECRET)) as live:
        yield live


@pytest.fixture(scope="module")
def guarded(
    tmp_path_factory: pytest.TempPathFactory, site: FakeSite, listeners: dict[str, _Listener]
) -> Iterator[Server]:
    """The server: the fake site and the hook listener are admitted, "internal" is not."""
    admitted = [site.base_url, listeners["hook"].url]
    env = {
        "HANSA_OUTBOUND_ALLOW": ",".join(url.removeprefix("http://") for url in admitted),
        "HANSA_SECRET_KEY": Fernet.generate_key().decode(),
    }
    with running_server(tmp_path_factory.mktemp("outside"), env=env) as server:
        yield server


def _site_config(site: FakeSite) -> dict[str, Any]:
    return {
        "wordpress": {
            "baseUrl": site.base_url,
            "username": site.username,
            "appPassword": WP_PASSWORD,
        },
        "woocommerce": {
            "baseUrl": site.base_url,
            "consumerKey": site.consumer_key,
            "consumerSecret": SHOP_SECRET,
        },
    }


def _run(client: httpx.Client, cid: str, pid: str | None, tasks: list[dict[str, Any]]) -> Any:
    body = {"conversationId": cid, "projectId": pid, "title": "Outside", "tasks": tasks}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    return response


def _task(group: str, task_type: str, params: dict[str, Any], agent: str, **extra: Any) -> dict:
    return {
        "stepGroup": group,
        "taskType": task_type,
        "parameters": params,
        "createdByAgentId": agent,
        **extra,
    }


def _tasks_of(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    card = client.get(f"/api/runs/{run_id}").json()
    return [t for g in card["groups"] for t in g["tasks"]]


def test_secrets_never_come_back_and_are_sealed_at_rest(
    guarded: Server, site: FakeSite, listeners: dict[str, _Listener]
) -> None:
    hook = listeners["hook"]
    seen: list[str] = []

    def keep(response: httpx.Response) -> None:  # every answer but the streams (read below)
        if "event-stream" not in response.headers.get("content-type", ""):
            seen.append(response.read().decode())

    with guarded.client(event_hooks={"response": [keep]}) as client:
        created = client.post(
            "/api/projects",
            json={"name": "Canary", "cmsPlatform": "wordpress", "config": _site_config(site)},
        )
        pid = created.json()["id"]
        patched = client.patch(  # the panel sends back what it read: the masks keep the secrets
            f"/api/projects/{pid}",
            json={"name": "Canary 2", "config": created.json()["config"]},
        )
        cid = new_conversation(client, projectId=pid)
        run = _run(
            client,
            cid,
            pid,
            [
                _task(
                    "A",
                    "create_page",
                    {"title": "Services", "slug": "services", "contentHtml": "<p>x</p>"},
                    "webEngineer",
                ),
                _task(
                    "A",
                    "create_product",
                    {"name": "Softener", "price": "9.00"},
                    "ecommerceSpecialist",
                ),
                _task(
                    "B",
                    "webhook.call",
                    {
                        "url": f"{hook.url}/hook?api_key={QUERY_KEY}",
                        "method": "POST",
                        "headers": {"Authorization": f"Bearer {HOOK_TOKEN}"},
                        "body": {"event": "published"},
                    },
                    "notificationAgent",
                ),
            ],
        ).json()
        client.post(f"/api/runs/{run['id']}/approve")
        waiting = events_until(
            client, cid, lambda e: e["data"].get("status") == "awaiting_confirmation"
        )
        (webhook,) = [t for t in _tasks_of(client, run["id"]) if t["taskType"] == "webhook.call"]
        client.post(
            f"/api/tasks/{webhook['id']}/confirm",
            json={"parametersHash": webhook["parametersHash"]},
        )
        events = events_until(client, cid, run_done(run["id"]), after=waiting[-1]["seq"])
        everything = events_until(client, cid, lambda e: e["seq"] == events[-1]["seq"])
        for path in (
            "/api/projects",
            f"/api/projects/{pid}",
            f"/api/runs/{run['id']}",
            f"/api/tasks/{webhook['id']}",
            f"/api/conversations/{cid}",
            f"/api/conversations/{cid}/messages",
            f"/api/conversations/{cid}/timeline",
        ):
            assert client.get(path).status_code == 200
        finished = {t["taskType"]: t for t in _tasks_of(client, run["id"])}

    assert created.status_code == 201 and patched.status_code == 200
    assert created.json()["config"]["wordpress"]["appPassword"] == "***"
    assert patched.json()["config"]["woocommerce"]["consumerSecret"] == "***"
    statuses = {kind: t["status"] for kind, t in finished.items()}
    assert statuses == {
        "create_page": "completed",
        "create_product": "completed",
        "webhook.call": "completed",
    }, "the sealed secrets were opened for the connectors, and the masks kept them"
    assert len(site.pages) == 1 and len(site.products) == 1
    page = finished["create_page"]
    assert page["result"]["pageId"] == str(next(iter(site.pages)))
    assert page["result"]["url"].startswith(site.base_url), "the page is on the site"
    method, path, headers = hook.requests[-1]
    assert headers["Authorization"] == f"Bearer {HOOK_TOKEN}" and QUERY_KEY in path
    assert webhook["parameters"]["headers"]["Authorization"] == "***"
    assert webhook["parameters"]["url"].endswith("api_key=***")

    assert len(seen) >= 12
    for body in seen:
        assert CANARY not in body, body
    assert CANARY not in json.dumps(everything)
    assert CANARY not in guarded.log_path.read_text(errors="replace")
    stored = b"".join(
        p.read_bytes() for p in guarded.db_path.parent.glob(f"{guarded.db_path.name}*")
    )
    for secret in (WP_PASSWORD, SHOP_SECRET, HOOK_TOKEN):
        assert secret.encode() not in stored, f"{secret} is stored in clear"


def test_a_site_the_guard_does_not_admit_is_never_called(
    guarded: Server, listeners: dict[str, _Listener]
) -> None:
    internal = listeners["internal"]
    with guarded.client() as client:
        repro = client.post(  # review H1: the base URL steered path and query
            "/api/projects",
            json={
                "name": "SSRF",
                "config": {
                    "wordpress": {
                        "baseUrl": f"{internal.url}/internal/admin?x=",
                        "username": "admin",
                        "appPassword": "pw",
                    }
                },
            },
        )
        config = {"wordpress": {"baseUrl": internal.url, "username": "admin", "appPassword": "pw"}}
        pid = client.post("/api/projects", json={"name": "SSRF", "config": config}).json()["id"]
        cid = new_conversation(client, projectId=pid)
        done = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "projectId": pid,
                "createdByAgentId": "webEngineer",
                "taskType": "create_page",
                "parameters": {"title": "Home", "slug": "home", "contentHtml": "<p>x</p>"},
            },
        ).json()
        patched = client.patch(
            f"/api/projects/{pid}",
            json={
                "config": {
                    "wordpress": {"baseUrl": "https://elsewhere.example", "appPassword": "***"}
                }
            },
        )
    assert repro.status_code == 422
    assert repro.json()["error"]["details"]["field"] == "config.wordpress.baseUrl"
    assert done["status"] == "failed"
    assert done["details"]["error"]["code"] == "outbound_denied"
    assert "HANSA_OUTBOUND_ALLOW" in done["details"]["error"]["message"]
    assert internal.requests == [], "nothing was sent to the internal listener"
    assert patched.status_code == 422, "a stored password never follows a new address"


def test_a_get_webhook_that_could_leak_waits_for_consent(
    guarded: Server, listeners: dict[str, _Listener]
) -> None:
    hook = listeners["hook"]
    before = len(hook.requests)
    with guarded.client() as client:
        cid = new_conversation(client)
        run = _run(
            client,
            cid,
            None,
            [
                _task(
                    "A",
                    "webhook.call",
                    {"url": f"{hook.url}/first", "method": "GET"},
                    "notificationAgent",
                    ref="first",
                ),
                _task(
                    "B",
                    "webhook.call",
                    {"url": f"{hook.url}/leak?d={{{{first.body.ok}}}}", "method": "GET"},
                    "notificationAgent",
                ),
                _task(
                    "B",
                    "webhook.call",
                    {"url": "https://hooks.example.com/ping", "method": "GET"},
                    "notificationAgent",
                ),
            ],
        ).json()
        proposed = _tasks_of(client, run["id"])
        client.post(f"/api/runs/{run['id']}/approve")
        events_until(
            client,
            cid,
            lambda e: e["type"] == "status" and "needs your confirmation" in e["data"]["text"],
        )
        tasks = _tasks_of(client, run["id"])
        client.post(f"/api/runs/{run['id']}/cancel")
    reversible = [t["isReversibleBySystem"] for t in proposed]
    assert reversible == [True, False, False], "a GET carrying a result, or to an unvetted host"
    assert [t["status"] for t in tasks] == [
        "completed",
        "awaiting_confirmation",
        "awaiting_confirmation",
    ]
    paths = [path for _, path, _ in hook.requests[before:]]
    assert paths == ["/first"], "the step carrying the first result sent nothing"


def test_start_up_warns_about_clear_secrets_and_seals_them_once_a_key_is_set(
    tmp_path: Path,
) -> None:
    config = {
        "wordpress": {"baseUrl": "https://s.example", "username": "ed", "appPassword": WP_PASSWORD}
    }
    with running_server(tmp_path) as first, first.client() as client:
        assert (
            client.post("/api/projects", json={"name": "Old", "config": config}).status_code == 201
        )
    with running_server(tmp_path) as again:
        pass
    key = {"HANSA_SECRET_KEY": Fernet.generate_key().decode()}
    with running_server(tmp_path, env=key) as sealed, sealed.client() as client:
        shown = client.get("/api/projects").json()[0]["config"]
    with sqlite3.connect(f"file:{sealed.db_path}?mode=ro", uri=True) as db:
        (stored,) = db.execute("SELECT config FROM projects").fetchone()

    warning = "1 project(s) store connector secrets in clear: set HANSA_SECRET_KEY"
    assert warning in again.log_path.read_text()
    assert warning not in sealed.log_path.read_text()
    assert WP_PASSWORD not in stored and "sealed:v1:" in stored, "start-up sealed it"
    assert shown["wordpress"]["appPassword"] == "***"
