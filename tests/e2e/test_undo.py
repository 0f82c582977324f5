"""The law of no return has a mechanism, and Hans reads results back (issue 16 items 3, 7):
undo and rollback through the real server, and a "WordPress" that says yes and keeps
nothing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from harness import Server, events_until, execute_task, new_conversation, run_done, running_server


class _Forgetful(ThreadingHTTPServer):
    """Poses as WordPress: a page is "created" (201) and never stored (GET answers 404)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Answer)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Answer(BaseHTTPRequestHandler):
    server: _Forgetful

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith("/wp-json/wp/v2/pages?"):
            self._send(200, [])  # nothing on that address: create it
        else:
            self._send(404, {"code": "rest_post_invalid_id", "message": "Invalid post ID."})

    def do_POST(self) -> None:  # noqa: N802
        sent = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        page = {
            "id": 41,
            "slug": sent["slug"],
            "status": sent.get("status", "draft"),
            "link": f"{self.server.url}/{sent['slug']}/",
            "title": {"raw": sent["title"]},
            "content": {"raw": sent["content"]},
        }
        self._send(201, page)


@pytest.fixture(scope="module")
def forgetful() -> Iterator[_Forgetful]:
    site = _Forgetful()
    thread = threading.Thread(target=site.serve_forever, args=(0.01,))
    thread.start()
    yield site
    site.shutdown()
    site.server_close()
    thread.join()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, forgetful: _Forgetful) -> Iterator[Server]:
    env = {"HANSA_OUTBOUND_ALLOW": forgetful.url.removeprefix("http://")}
    with running_server(tmp_path_factory.mktemp("undo"), env=env) as s:
        yield s


def _task(group: str, task_type: str, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "stepGroup": group,
        "taskType": task_type,
        "parameters": params,
        "createdByAgentId": "webEngineer",
        **extra,
    }


def _run_to_end(client: httpx.Client, cid: str, title: str, tasks: list[Any], **extra: Any) -> Any:
    body = {"conversationId": cid, "title": title, "tasks": tasks, **extra}
    created = client.post("/api/runs", json=body)
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert client.post(f"/api/runs/{run_id}/approve").status_code == 200
    events_until(client, cid, run_done(run_id))
    return client.get(f"/api/runs/{run_id}").json()


def _tasks(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for g in card["groups"] for t in g["tasks"]]


def _messages(client: httpx.Client, cid: str, kind: str) -> list[str]:
    found = client.get(f"/api/conversations/{cid}/messages").json()
    return [m["content"] for m in found if m["kind"] == kind]


def _page(slug: str, title: str) -> dict[str, str]:
    return {"title": title, "slug": slug, "contentHtml": f"<h1>{title}</h1><p>Offers.</p>"}


def test_a_run_rolls_back_newest_first_and_its_page_is_gone(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        card = _run_to_end(
            client,
            cid,
            "Spring sale page",
            [
                _task("A", "create_page", _page("spring-sale", "Spring sale"), ref="page"),
                _task(
                    "B",
                    "update_content_block",
                    {"pageId": "{{page.pageId}}", "html": "<h1>Spring sale</h1><p>New.</p>"},
                ),
                _task("B", "run_audit", {"pageId": "{{page.pageId}}"}, createdByAgentId="chief"),
            ],
        )
        create, update, audit = _tasks(card)
        page_url = f"/api/workspace/pages/{create['result']['pageId']}"
        assert card["status"] == "completed"
        assert client.get(page_url).status_code == 200
        assert card["undoableTaskIds"] == [update["id"], create["id"]], "newest first"

        rolled = client.post(f"/api/runs/{card['id']}/rollback")
        again = client.post(f"/api/runs/{card['id']}/rollback")
        gone = client.get(page_url)
        events = events_until(
            client,
            cid,
            lambda ev: ev["type"] == "message" and ev["data"]["content"].startswith("I rolled"),
        )

    assert rolled.status_code == 200, rolled.text
    after = rolled.json()
    assert after["status"] == "rolled_back"
    statuses = {t["id"]: t["status"] for t in _tasks(after)}
    assert statuses == {create["id"]: "undone", update["id"]: "undone", audit["id"]: "completed"}
    assert after["undoableTaskIds"] == []
    assert gone.status_code == 404, "a created page, undone, is gone"
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_undoable"
    undone = [e for e in events if e["type"] == "task_status" and e["data"]["status"] == "undone"]
    assert [e["taskId"] for e in undone] == [update["id"], create["id"]], "newest first"
    assert undone[0]["data"]["previous"] == "completed"
    assert "previousHtml" in undone[0]["data"]["result"], "what the undo restored"
    chips = [e["data"]["text"] for e in events if e["type"] == "status"]
    assert "Web Engineer Nico undid: create page: Spring sale" in chips
    summary = [
        e["data"]["content"]
        for e in events
        if e["type"] == "message" and e["data"]["kind"] == "assistant"
    ]
    assert summary and summary[-1].startswith("I rolled back “Spring sale page”")


def test_one_step_undone_then_refused_and_an_irreversible_step_has_no_undo(
    server: Server,
) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        body = {
            "conversationId": cid,
            "createdByAgentId": "webEngineer",
            "taskType": "create_page",
            "parameters": _page("autumn", "Autumn offers"),
        }
        created = client.post("/api/assistant/execute", json=body).json()
        assert created["status"] == "completed", created
        undone = client.post(f"/api/tasks/{created['taskId']}/undo")
        twice = client.post(f"/api/tasks/{created['taskId']}/undo")
        gone = client.get(f"/api/workspace/pages/{created['details']['pageId']}")

        other = execute_task(client, cid, "webEngineer", "create_page", _page("old", "Old"))
        deleting = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "webEngineer",
                "taskType": "delete_page",
                "parameters": {"pageId": other["pageId"]},
            },
        ).json()
        assert deleting["status"] == "awaiting_confirmation"
        hashed = {"parametersHash": deleting["parametersHash"]}
        assert client.post(f"/api/tasks/{deleting['taskId']}/confirm", json=hashed).is_success
        events_until(client, cid, run_done(deleting["runId"]))
        refused = client.post(f"/api/tasks/{deleting['taskId']}/undo")
        chips = _messages(client, cid, "status")

    assert undone.status_code == 200, undone.text
    assert undone.json()["status"] == "undone"
    assert undone.json()["result"]["undone"]["deleted"] is True
    assert gone.status_code == 404
    assert twice.status_code == 409 and "undone already" in twice.json()["error"]["message"]
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "not_undoable"
    assert "cannot be undone" in refused.json()["error"]["message"]
    assert "Web Engineer Nico undid: create page: Autumn offers" in chips


NO_PAGE = "01JNOPAGE0000000000000000Z"
"""A page id of the workspace's shape that names no page."""


def test_a_failed_run_offers_the_undo_and_rolls_back(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        card = _run_to_end(
            client,
            cid,
            "Two pages",
            [
                _task("A", "create_page", _page("first", "First")),
                _task("B", "update_content_block", {"pageId": NO_PAGE, "html": "<p>x</p>"}),
            ],
        )
        final = _messages(client, cid, "assistant")[-1]
        rolled = client.post(f"/api/runs/{card['id']}/rollback")

    assert card["status"] == "failed"
    assert "press Undo on the run card" in final
    assert rolled.status_code == 200, rolled.text
    assert rolled.json()["status"] == "rolled_back"
    assert [t["status"] for t in _tasks(rolled.json())] == ["undone", "failed"]


def test_a_site_that_keeps_nothing_is_caught_by_the_review(
    server: Server, forgetful: _Forgetful
) -> None:
    config = {"wordpress": {"baseUrl": forgetful.url, "username": "ed", "appPassword": "pw"}}
    with server.client() as client:
        pid = client.post("/api/projects", json={"name": "Liar", "config": config}).json()["id"]
        cid = new_conversation(client, projectId=pid)
        lied = _run_to_end(
            client,
            cid,
            "Summer page",
            [_task("A", "create_page", _page("summer", "Summer"))],
            projectId=pid,
        )
        told = _messages(client, cid, "assistant")[-1]
        honest_cid = new_conversation(client)
        honest = _run_to_end(
            client,
            honest_cid,
            "Winter page",
            [_task("A", "create_page", _page("winter", "Winter"))],
        )
        fine = _messages(client, honest_cid, "assistant")[-1]

    (task,) = _tasks(lied)
    assert task["status"] == "completed", "the connector said yes"
    validation = lied["metadata"]["validation"]
    assert validation["checked"] == 1
    (found,) = validation["discrepancies"]
    assert found["taskId"] == task["id"]
    assert "is not there when read back" in found["problem"]
    assert told.startswith("Finished, but not as planned: Summer page")
    assert f"- create page: Summer: {found['problem']}" in told.splitlines()
    assert honest["metadata"]["validation"] == {"checked": 1, "discrepancies": []}
    assert fine.startswith("Done: Winter page")
