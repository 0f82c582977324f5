"""Another tenant's ids stay unknown ids on the paths the review found (security review
2026-11-27, L2 and L3): ``POST /ap/threads/{id}/runs`` with ``if_not_exists: create`` told
whether another tenant's conversation existed (409 "taken", else 200), and another tenant's
``projectId`` was accepted on ``POST /api/runs`` and ``/api/assistant/execute``."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from apikeys import bearer, create_key

from harness import Server, new_conversation, running_server, waits

RUN = {
    "assistant_id": "chief",
    "input": {"messages": [{"role": "user", "content": "Hi"}]},
    "if_not_exists": "create",
}


def _counts(server: Server) -> dict[str, int]:
    tables = ("assistant_conversations", "assistant_messages", "assistant_runs", "assistant_tasks")
    with sqlite3.connect(f"file:{server.db_path}?mode=ro", uri=True) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_another_tenants_ids_are_unknown_ids(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        a_admin, b = create_key(server, "ta", "admin"), create_key(server, "tb", "member")
        with server.client(headers=bearer(a_admin)) as a:
            a_conversation = new_conversation(a)  # an id Hansa issued
            a_thread = str(uuid.uuid4())  # an id A's client chose
            assert a.post("/ap/threads", json={"thread_id": a_thread}).status_code == 200
            a_project = a.post("/api/projects", json={"name": "A's"}).json()["id"]
        with server.client(headers=bearer(b)) as c:
            b_conversation = new_conversation(c)
            before = _counts(server)
            issued = c.post(f"/ap/threads/{a_conversation}/runs", json=RUN)
            unknown_issued = c.post("/ap/threads/01M8E4XTHQWY6RBG8CJ2ZXZZZZ/runs", json=RUN)
            chosen = c.post(f"/ap/threads/{a_thread}/runs", json=RUN)
            run = c.post(
                "/api/runs",
                json={
                    "conversationId": b_conversation,
                    "projectId": a_project,
                    "title": "t",
                    "tasks": waits("A"),
                },
            )
            task_project = c.post(
                "/api/runs",
                json={
                    "conversationId": b_conversation,
                    "title": "t",
                    "tasks": [{**waits("A")[0], "projectId": a_project}],
                },
            )
            executed = c.post(
                "/api/assistant/execute",
                json={
                    "conversationId": b_conversation,
                    "projectId": a_project,
                    "createdByAgentId": "technicalLead",
                    "taskType": "create_ticket",
                    "parameters": {"title": "x"},
                },
            )
            after = _counts(server)
            fresh = c.post(f"/ap/threads/{uuid.uuid4()}/runs", json=RUN)
    # an id Hansa issued is never one a client may create: A's and an unknown one alike
    assert issued.status_code == unknown_issued.status_code == 422, issued.text
    assert issued.json()["error"] == unknown_issued.json()["error"]
    assert chosen.status_code == 404, chosen.text
    assert "is taken" not in chosen.text
    for refused in (run, task_project, executed):
        assert refused.status_code == 404, refused.text
        assert refused.json()["error"]["code"] == "not_found"
    assert after == before, "nothing was stored"
    assert fresh.status_code == 200, fresh.text
