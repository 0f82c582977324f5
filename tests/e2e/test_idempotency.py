"""Idempotency-Key on POSTs: same key and body -> same response (work done once)."""

from __future__ import annotations

from harness import Server, new_conversation


def test_same_key_same_body_answers_the_same_once(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        headers = {"Idempotency-Key": "retry-42"}
        body = {"content": "Please improve our SEO traffic"}
        first = client.post(f"/api/conversations/{cid}/messages", json=body, headers=headers)
        before = server.row_counts()
        second = client.post(f"/api/conversations/{cid}/messages", json=body, headers=headers)
        after = server.row_counts()
        other = client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "something else"},
            headers=headers,
        )
        created = client.post("/api/projects", json={"name": "P"}, headers={"Idempotency-Key": "p"})
        again = client.post("/api/projects", json={"name": "P"}, headers={"Idempotency-Key": "p"})
        projects = client.get("/api/projects").json()
    assert first.status_code == 202 and second.status_code == 202
    assert second.json() == first.json()
    assert second.headers.get("idempotent-replayed") == "true"
    assert after["assistant_turns"] == before["assistant_turns"], "the work was done once"
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert again.json()["id"] == created.json()["id"]
    assert [p["id"] for p in projects].count(created.json()["id"]) == 1
    assert len([p for p in projects if p["name"] == "P"]) == 1


def test_a_refused_request_is_refused_again_without_side_effects(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        headers = {"Idempotency-Key": "empty-1"}
        first = client.post(
            f"/api/conversations/{cid}/messages", json={"content": ""}, headers=headers
        )
        second = client.post(
            f"/api/conversations/{cid}/messages", json={"content": ""}, headers=headers
        )
    assert first.status_code == second.status_code == 422
    assert first.json() == second.json()
