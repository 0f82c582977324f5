"""The ``/ap`` store has a per-tenant byte quota (security review 2026-11-27, L8): a tenant
could keep 10,000 items of 64 KiB (about 640 MiB), each filtered search a scan of them.
Here the quota is 1 MiB: past it a put is 422 and stores nothing, another tenant keeps its
own quota, and a search over the tenant's whole store stays quick."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from apikeys import bearer, create_key

from harness import running_server

BIG = "x" * (60 * 1024)


def _put(c: httpx.Client, key: str, text: str = BIG) -> int:
    body = {"namespace": ["notes"], "key": key, "value": {"text": text}}
    return c.put("/ap/store/items", json=body).status_code


def test_a_tenant_keeps_at_most_its_quota_of_store_values(tmp_path: Path) -> None:
    env = {"HANSA_AP_STORE_MAX_BYTES_PER_TENANT": str(1024 * 1024)}
    with running_server(tmp_path, env=env) as server:
        a, b = create_key(server, "ta", "member"), create_key(server, "tb", "member")
        with server.client(headers=bearer(a)) as c, server.client(headers=bearer(b)) as other:
            puts = [_put(c, f"k{i}") for i in range(20)]
            stored = puts.count(204)
            refused = c.put(
                "/ap/store/items",
                json={"namespace": ["notes"], "key": "more", "value": {"text": BIG}},
            )
            missing = c.get("/ap/store/items", params={"namespace": "notes", "key": "more"})
            smaller = _put(c, "k0", "short")  # an item may shrink, and make room
            then = _put(c, "more")
            theirs = _put(other, "k0")
            started = time.perf_counter()
            found = c.post(
                "/ap/store/items/search",
                json={"namespace_prefix": ["notes"], "query": "nothing-matches", "limit": 10},
            )
            took = time.perf_counter() - started
    assert stored == 17 and puts[:17] == [204] * 17 and set(puts[17:]) == {422}, puts
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"]["limitBytes"] == 1024 * 1024
    assert missing.status_code == 404, "a refused put stores nothing"
    assert (smaller, then, theirs) == (204, 204, 204)
    assert found.status_code == 200 and found.json()["items"] == []
    assert took < 0.5, f"a search of the whole store took {took:.2f} s"
