"""A tenant's project may not point its model at a file on the server (``local:``,
``scripted:``): that is the operator's to give, so only local mode may."""

from __future__ import annotations

from pathlib import Path

from apikeys import client, create_key

from harness import running_server


def test_only_the_operator_may_name_a_file_backed_model(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        with client(server, None) as local:  # local mode: the caller is the operator
            mine = local.post(
                "/api/projects",
                json={"name": "Own", "config": {"llm": {"model": "scripted"}}},
            )
        key = create_key(server, "acme")
        with client(server, key) as acme:
            refused = acme.post(
                "/api/projects",
                json={"name": "Peek", "config": {"llm": {"model": "scripted:/etc/passwd"}}},
            )
            remote = acme.post(
                "/api/projects",
                json={"name": "Remote", "config": {"llm": {"model": "openai:gpt-4o"}}},
            )
            patched = acme.patch(
                f"/api/projects/{remote.json()['id']}",
                json={"config": {"llm": {"model": "local:/srv/models/other.gguf"}}},
            )
            listed = [p["name"] for p in acme.get("/api/projects").json()]

    assert mine.status_code == 201
    assert refused.status_code == 422
    assert refused.json()["error"]["details"] == {"field": "config.llm.model"}
    assert remote.status_code == 201
    assert patched.status_code == 422
    assert listed == ["Remote"], "nothing was written by the refused requests"
