"""Local mode ends for good with the first key (security review 2026-11-27, M5): revoking
every key over HTTP must not turn a loopback server (behind a same-host proxy, the
internet) into an open admin; only the operator's ``hansa keys reset-local`` does."""

from __future__ import annotations

from pathlib import Path

from apikeys import bearer, client, create_key, error_code, hansa

from harness import running_server


def test_revoking_every_key_does_not_bring_local_mode_back(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        db = f"sqlite:///{server.db_path}"
        admin = create_key(server, "tc", "admin")
        with client(server, admin) as c:
            member = c.post("/api/keys", json={"role": "member", "name": "m"})
            assert member.status_code == 201, member.text
            for key in reversed(c.get("/api/keys").json()):  # its own key last
                revoked = c.delete(f"/api/keys/{key['id']}")
                assert revoked.status_code == 204, revoked.text
        with client(server, None) as anon:
            me = anon.get("/api/me")
            assert me.status_code == 401, me.text
            assert error_code(me) == "unauthenticated"
            made = anon.post("/api/keys", json={"role": "admin", "name": "x"})
            assert made.status_code == 401, "no key may be made without one"
            assert anon.post("/mcp", json={}).status_code == 401
            # the operator's command, and only it, reopens the server
            reset = hansa("keys", "reset-local", "--database-url", db)
            assert reset.returncode == 0, reset.stdout + reset.stderr
            me = anon.get("/api/me")
            assert me.status_code == 200, me.text
            assert me.json()["principal"]["kind"] == "local"


def test_reset_local_refuses_while_a_key_is_live(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        key = create_key(server, "acme", "admin")
        refused = hansa("keys", "reset-local", "--database-url", f"sqlite:///{server.db_path}")
        assert refused.returncode == 1
        assert "still live" in refused.stdout
        with client(server, None) as anon:
            assert anon.get("/api/me").status_code == 401
        with server.client(headers=bearer(key)) as keyed:
            assert keyed.get("/api/me").status_code == 200
