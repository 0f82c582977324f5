"""Identity over the real server (security review C1, M6): local mode and its browser rules,
API keys on HTTP, SSE and WebSocket, roles, the panel's session cookie, and the refusal to
listen beyond loopback without a key."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from apikeys import bearer, client, create_key, error_code, get_as, hansa
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from harness import Server, free_port, new_conversation, running_server, waits

EVIL = "http://evil.example"
PANEL_HEADERS = {
    "content-security-policy": "default-src 'self'; frame-ancestors 'none'; object-src 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with no key at all, on loopback: local mode (no test here makes a key)."""
    with running_server(tmp_path_factory.mktemp("local")) as s:
        yield s


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[Server, str]]:
    """A server whose database has an admin key of tenant ``acme``, and that key."""
    with running_server(tmp_path) as s:
        yield s, create_key(s, "acme", "admin")


def _ws_url(server: Server, cid: str, query: str = "") -> str:
    return server.url.replace("http://", "ws://") + f"/api/conversations/{cid}/ws{query}"


def _ws_status(url: str, **kwargs: Any) -> int:
    """101 when the WebSocket opens, else the status of the refused handshake."""
    try:
        with connect(url, open_timeout=10, **kwargs):
            return 101
    except InvalidStatus as exc:
        return int(exc.response.status_code)


def _run(c: httpx.Client, cid: str) -> str:
    made = c.post("/api/runs", json={"conversationId": cid, "title": "t", "tasks": waits("A")})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def test_local_mode_needs_no_key_and_is_the_default_tenant(local: Server) -> None:
    with local.client() as c:
        me = c.get("/api/me")
        assert c.get("/api/conversations").status_code == 200
    assert me.json() == {
        "tenantId": "default",
        "principal": {"kind": "local", "id": "local", "role": "admin"},
    }


def test_local_mode_answers_loopback_names_only(local: Server) -> None:
    port = local.url.rsplit(":", 1)[1]
    with local.client() as c:
        for host in (f"attacker.example:{port}", "attacker.example", f"10.0.0.5:{port}"):
            for path in ("/api/projects", "/"):
                refused = c.get(path, headers={"Host": host})
                assert refused.status_code == 403, (host, path, refused.text)
                assert error_code(refused) == "origin_denied"
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
            assert c.get("/api/projects", headers={"Host": host}).status_code == 200, host


def test_local_mode_refuses_writes_and_websockets_from_another_site(local: Server) -> None:
    with local.client() as c:
        cid = new_conversation(c)
        run_id = _run(c, cid)
        # the review's repro: a no-cors POST from a page the user visits
        cross = c.post(
            f"/api/runs/{run_id}/approve",
            headers={"Origin": EVIL, "Content-Type": "text/plain"},
            content="x",
        )
        sandboxed = c.post(f"/api/runs/{run_id}/cancel", headers={"Origin": "null"})
        status = c.get(f"/api/runs/{run_id}").json()["status"]
        own = c.post(f"/api/runs/{run_id}/cancel", headers={"Origin": local.url})
        reads = c.get(f"/api/runs/{run_id}", headers={"Origin": EVIL})
    assert cross.status_code == 403 and error_code(cross) == "origin_denied"
    assert sandboxed.status_code == 403 and error_code(sandboxed) == "origin_denied"
    assert status == "awaiting_approval", "the refused approve changed nothing"
    assert own.status_code == 200, own.text
    assert reads.status_code == 200, "reads are not state-changing (CORS keeps them unreadable)"
    assert _ws_status(_ws_url(local, cid), origin=EVIL) == 403
    assert _ws_status(_ws_url(local, cid), origin=local.url) == 101
    assert _ws_status(_ws_url(local, cid)) == 101, "no Origin (a script, the CLI) is allowed"


def test_the_first_key_ends_local_mode_on_every_route(keyed: tuple[Server, str]) -> None:
    server, key = keyed
    with client(server, None) as anon, client(server, key) as admin:
        for path in ("/api/me", "/api/conversations", "/api/agents", "/api/task-types"):
            refused = anon.get(path)
            assert refused.status_code == 401, path
            assert error_code(refused) == "unauthenticated"
            assert refused.headers["www-authenticate"].startswith("Bearer")
        bad = anon.get("/api/me", headers=bearer("hk_" + "x" * 43))
        not_bearer = anon.get("/api/me", headers={"Authorization": f"Basic {key}"})
        assert anon.get("/healthz").status_code == 200 and anon.get("/").status_code == 200
        me = admin.get("/api/me").json()
        cid = new_conversation(admin)
        sse_refused = anon.get(f"/api/conversations/{cid}/events?until=done")
        with anon.stream(
            "GET", f"/api/conversations/{cid}/events", params={"access_token": key}
        ) as sse:
            sse_status = sse.status_code
    assert bad.status_code == 401 and not_bearer.status_code == 401
    assert me["tenantId"] == "acme"
    assert me["principal"]["kind"] == "user" and me["principal"]["role"] == "admin"
    assert sse_refused.status_code == 401 and sse_status == 200
    assert _ws_status(_ws_url(server, cid)) == 401
    assert _ws_status(_ws_url(server, cid, f"?access_token={key}")) == 101
    assert _ws_status(_ws_url(server, cid), additional_headers=bearer(key)) == 101


def _ws_refusal(url: str, key: str | None) -> tuple[int, dict[str, Any], str]:
    """The status, error and content type of a WebSocket handshake that must be refused."""
    with pytest.raises(InvalidStatus) as refused:
        with connect(url, open_timeout=10, additional_headers=bearer(key) if key else None):
            pass
    response = refused.value.response
    error = json.loads(response.body)["error"]
    return response.status_code, error, str(response.headers.get("content-type"))


def test_a_refused_websocket_answers_in_the_error_shape(keyed: tuple[Server, str]) -> None:
    server, key = keyed
    with client(server, key) as admin:
        cid = new_conversation(admin)
        made = admin.post("/api/agents", json={"id": "wsBot", "displayName": "WS bot"})
        assert made.status_code == 201, made.text
        token = admin.post("/api/agents/wsBot/tokens").json()["key"]
    role = _ws_refusal(_ws_url(server, cid), token)
    anonymous = _ws_refusal(_ws_url(server, cid), None)
    unknown = _ws_refusal(_ws_url(server, "01NOSUCHCONVERSATION0000000"), key)
    assert role[0] == 403 and role[2] == "application/json"
    assert role[1]["code"] == "forbidden" and role[1]["details"] == {"role": "agent"}
    assert "agent role may not use WEBSOCKET" in role[1]["message"]
    assert anonymous[0] == 401 and anonymous[1]["code"] == "unauthenticated"
    assert unknown[0] == 404 and unknown[1]["code"] == "not_found", "as over HTTP"


def test_admins_manage_keys_and_a_revoked_key_stops_at_once(keyed: tuple[Server, str]) -> None:
    server, key = keyed
    with client(server, key) as admin:
        made = admin.post("/api/keys", json={"role": "member", "name": "Ann"})
        assert made.status_code == 201, made.text
        member_key, member_id = made.json()["key"], made.json()["id"]
        listed = admin.get("/api/keys").json()
        assert get_as(server, member_key, "/api/me").json()["principal"]["role"] == "member"
        assert admin.delete(f"/api/keys/{member_id}").status_code == 204
        after = get_as(server, member_key, "/api/me")
        agent_role = admin.post("/api/keys", json={"role": "agent"})
    assert {k["role"] for k in listed} == {"admin", "member"}
    assert all("key" not in k and "tokenHash" not in k for k in listed), "no secret is listed"
    assert member_key not in json.dumps(listed)
    assert after.status_code == 401, "revoked: refused on the next request"
    assert agent_role.status_code == 422, "agent tokens come from POST /api/agents/{id}/tokens"


def test_members_work_but_do_not_manage_keys_agents_or_projects(
    keyed: tuple[Server, str],
) -> None:
    server, key = keyed
    with client(server, key) as admin:
        pid = admin.post("/api/projects", json={"name": "Site"}).json()["id"]
        member_key = admin.post("/api/keys", json={"role": "member"}).json()["key"]
    with client(server, member_key) as member:
        cid = new_conversation(member)
        allowed = [
            member.get("/api/projects"),
            member.get(f"/api/conversations/{cid}"),
            member.post(f"/api/runs/{_run(member, cid)}/approve"),
        ]
        refused = [
            member.post("/api/keys", json={"role": "admin"}),
            member.get("/api/keys"),
            member.post("/api/agents", json={"id": "bot", "displayName": "Bot"}),
            member.post("/api/projects", json={"name": "Mine"}),
            member.patch(f"/api/projects/{pid}", json={"allowedTaskTypes": ["webhook.call"]}),
        ]
    assert [r.status_code for r in allowed] == [200, 200, 200]
    assert [r.status_code for r in refused] == [403] * 5
    assert {error_code(r) for r in refused} == {"forbidden"}


def test_the_session_cookie_is_http_only_strict_and_writes_need_our_origin(
    keyed: tuple[Server, str],
) -> None:
    server, key = keyed
    with client(server, None) as browser:
        wrong = browser.post("/api/session", json={"key": "hk_nope"})
        foreign = browser.post("/api/session", json={"key": key}, headers={"Origin": EVIL})
        opened = browser.post("/api/session", json={"key": key}, headers={"Origin": server.url})
        cookie = opened.headers["set-cookie"]
        me = browser.get("/api/me")
        no_origin = browser.post("/api/conversations", json={})
        cross = browser.post("/api/conversations", json={}, headers={"Origin": EVIL})
        same = browser.post("/api/conversations", json={}, headers={"Origin": server.url})
        ws_cross = _ws_status(
            _ws_url(server, same.json()["id"]),
            origin=EVIL,
            additional_headers={"Cookie": f"hansa_session={key}"},
        )
        closed = browser.delete("/api/session", headers={"Origin": server.url})
        after = browser.get("/api/me")
    assert wrong.status_code == 401 and foreign.status_code == 403
    assert opened.status_code == 200 and opened.json()["tenantId"] == "acme"
    attributes = {a.strip().lower() for a in cookie.split(";")}
    assert "httponly" in attributes and "samesite=strict" in attributes and "path=/" in attributes
    assert me.status_code == 200, "the cookie authenticates"
    assert no_origin.status_code == 403 and error_code(no_origin) == "origin_denied"
    assert cross.status_code == 403 and error_code(cross) == "origin_denied"
    assert same.status_code == 201, same.text
    assert ws_cross == 403
    assert closed.status_code == 204 and after.status_code == 401


def test_the_panel_is_sent_with_headers_that_forbid_framing(local: Server) -> None:
    with local.client() as c:
        index = c.get("/")
        module = c.get("/app.js")
        cid = new_conversation(c)
        page = c.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "webEngineer",
                "taskType": "create_page",
                "parameters": {"title": "About", "slug": "about", "contentHtml": "<p>hi</p>"},
            },
        )
        document = c.get(f"/api/workspace/pages/{page.json()['details']['pageId']}")
    for response in (index, module):
        assert response.status_code == 200
        for name, value in PANEL_HEADERS.items():
            assert response.headers[name] == value, name
    assert "<script>" not in index.text, "no inline script: the CSP would block it"
    assert document.headers["content-security-policy"].startswith("sandbox;")


def test_serve_refuses_a_network_address_until_a_key_exists(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'hansa.db'}"
    refused = subprocess.run(
        [sys.executable, "-m", "hansa", "serve", "--host", "0.0.0.0", "--port", str(free_port())]
        + ["--database-url", db, "--model", "scripted"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "without an API key" in refused.stdout and "hansa keys create" in refused.stdout
    made = hansa("keys", "create", "--tenant", "default", "--role", "admin", "--database-url", db)
    key = made.stdout.strip().splitlines()[-1]
    key_id = made.stdout.split("key ", 1)[1].split()[0]
    with running_server(tmp_path, extra_args=("--host", "0.0.0.0")) as server:
        with client(server, None) as anon:
            assert anon.get("/api/me").status_code == 401, "no local mode beyond loopback"
            assert get_as(server, key, "/api/me").status_code == 200
            assert hansa("keys", "revoke", key_id, "--database-url", db).returncode == 0
            assert anon.get("/api/me").status_code == 401, "still none with every key revoked"
            assert get_as(server, key, "/api/me").status_code == 401
