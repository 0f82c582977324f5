"""The Agent Protocol / LangGraph store at ``/ap/store``, driven by ``langgraph-sdk``'s own
async client against the real server with API keys: put, get, update, search (prefix,
filter, query), namespaces, delete, ``ttl``, tenants apart, and the limits' 422s, on SQLite,
and the same round trip on PostgreSQL (expiry itself, and the tenant's limit of items, are
tested on a clock in tests/unit/store/test_memory_items.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from apikeys import create_key, hansa
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError
from langgraph_sdk.schema import SearchItemsResponse

from harness import Server, running_server

pytestmark = pytest.mark.anyio


class Keyed:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.acme = create_key(server, "acme")
        self.globex = create_key(server, "globex")

    def raw(self, key: str) -> httpx.AsyncClient:
        """A plain client, for what the SDK refuses before sending."""
        return httpx.AsyncClient(base_url=f"{self.server.url}/ap", headers={"X-Api-Key": key})


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keyed]:
    with running_server(tmp_path_factory.mktemp("ap-store")) as server:
        yield Keyed(server)


@pytest.fixture
async def store(keyed: Keyed) -> AsyncIterator[LangGraphClient]:
    async with get_client(url=f"{keyed.server.url}/ap", api_key=keyed.acme) as client:
        yield client


def _when(stamp: Any) -> datetime:
    return datetime.fromisoformat(str(stamp))


def _keys(found: SearchItemsResponse) -> list[str]:
    return [i["key"] for i in found["items"]]


async def test_put_get_update_and_delete(store: LangGraphClient) -> None:
    ns = ["users", "ada"]
    await store.store.put_item(ns, "prefs", {"theme": "dark"})
    first = await store.store.get_item(ns, "prefs")
    await store.store.put_item(ns, "prefs", {"theme": "light", "lang": "fr"}, index=False)
    second = await store.store.get_item(ns, "prefs")
    await store.store.delete_item(ns, "prefs")
    with pytest.raises(NotFoundError) as missing:
        await store.store.get_item(ns, "prefs")
    await store.store.delete_item(ns, "prefs")  # not there: 204 too

    assert first["namespace"] == ns and first["key"] == "prefs"
    assert first["value"] == {"theme": "dark"}
    assert first["created_at"] == first["updated_at"]
    assert second["value"] == {"theme": "light", "lang": "fr"}
    assert second["created_at"] == first["created_at"]
    assert _when(second["updated_at"]) > _when(first["updated_at"])
    assert missing.value.response.json()["error"]["code"] == "not_found"


async def test_search_by_prefix_filter_and_query(store: LangGraphClient) -> None:
    put = store.store.put_item
    await put(["docs", "ada"], "d1", {"title": "Water Softeners", "author": "Ada", "n": 1})
    await put(["docs", "ada", "drafts"], "d2", {"title": "Salt or not", "author": "Ada"})
    await put(["docs", "bob"], "d3", {"title": "Softener prices", "author": "Bob", "n": 1.0})
    await put(["docsx"], "d4", {"title": "Not under docs", "author": "Ada"})
    await put(["docs", "ada"], "d1", {"title": "Water Softeners", "author": "Ada", "n": 1})

    everything = await store.store.search_items(["docs"])
    ada = await store.store.search_items(["docs", "ada"])
    by_filter = await store.store.search_items(["docs"], filter={"author": "Ada"})
    by_number = await store.store.search_items(["docs"], filter={"n": 1})
    by_query = await store.store.search_items(["docs"], query="SOFTENER water")
    paged = await store.store.search_items(["docs"], limit=1, offset=1)
    nothing = await store.store.search_items(["docs"], query="softener", filter={"n": 2})

    assert _keys(everything) == ["d1", "d3", "d2"], "most recently updated first"
    assert everything["items"][0]["namespace"] == ["docs", "ada"]
    assert _keys(ada) == ["d1", "d2"]
    assert _keys(by_filter) == ["d1", "d2"]
    assert _keys(by_number) == ["d1", "d3"], "1 equals 1.0"
    assert _keys(by_query) == ["d1"]
    assert _keys(paged) == ["d3"]
    assert nothing == {"items": []}


async def test_list_namespaces(store: LangGraphClient) -> None:
    for ns in (["mem", "ada", "notes"], ["mem", "ada", "prefs"], ["mem", "bob", "notes"]):
        await store.store.put_item(ns, "k", {"x": 1})

    under = await store.store.list_namespaces(prefix=["mem"])
    notes = await store.store.list_namespaces(prefix=["mem"], suffix=["notes"])
    people = await store.store.list_namespaces(prefix=["mem"], max_depth=2)
    page = await store.store.list_namespaces(prefix=["mem"], limit=1, offset=2)

    assert under == {
        "namespaces": [["mem", "ada", "notes"], ["mem", "ada", "prefs"], ["mem", "bob", "notes"]]
    }
    assert notes["namespaces"] == [["mem", "ada", "notes"], ["mem", "bob", "notes"]]
    assert people["namespaces"] == [["mem", "ada"], ["mem", "bob"]]
    assert page["namespaces"] == [["mem", "bob", "notes"]]


async def test_an_item_with_a_ttl_is_kept_until_it_expires(store: LangGraphClient) -> None:
    await store.store.put_item(["ttl"], "brief", {"x": 1}, ttl=5)
    found = await store.store.get_item(["ttl"], "brief", refresh_ttl=True)
    searched = await store.store.search_items(["ttl"], refresh_ttl=False)

    assert found["value"] == {"x": 1}
    assert _keys(searched) == ["brief"]


async def test_another_tenant_sees_nothing(keyed: Keyed, store: LangGraphClient) -> None:
    await store.store.put_item(["private"], "k", {"secret": "acme"})
    async with get_client(url=f"{keyed.server.url}/ap", api_key=keyed.globex) as other:
        with pytest.raises(NotFoundError):
            await other.store.get_item(["private"], "k")
        searched = await other.store.search_items([])
        listed = await other.store.list_namespaces()
        await other.store.put_item(["private"], "k", {"secret": "globex"})
        await other.store.delete_item(["private"], "k")

    assert searched == {"items": []} and listed == {"namespaces": []}
    assert (await store.store.get_item(["private"], "k"))["value"] == {"secret": "acme"}


async def _refused(call: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
    with pytest.raises(UnprocessableEntityError) as refused:
        await call()
    error: dict[str, Any] = refused.value.response.json()["error"]
    return error


async def test_the_sdks_calls_past_the_limits_are_422(store: LangGraphClient) -> None:
    s = store.store
    too_big = {"text": "x" * (64 * 1024)}
    cases: dict[str, Callable[[], Awaitable[Any]]] = {
        "namespace": lambda: s.put_item([f"l{i}" for i in range(11)], "k", {}),
        "namespace.0": lambda: s.put_item(["x" * 101], "k", {}),
        "key": lambda: s.put_item(["ok"], "k" * 201, {}),
        "value": lambda: s.put_item(["ok"], "k", too_big),
        "ttl": lambda: s.put_item(["ok"], "k", {}, ttl=0),
        "limit": lambda: s.search_items(["ok"], limit=101),
        "offset": lambda: s.search_items(["ok"], offset=-1),
        "filter": lambda: s.search_items(["ok"], filter={"n": {"$gt": 1}}),
        "max_depth": lambda: s.list_namespaces(max_depth=0),
    }
    for field, call in cases.items():
        error = await _refused(call)
        assert error["code"] == "validation_error", (field, error)
        assert field in [e["field"] for e in error["details"]["errors"]], (field, error)
    big_page = await _refused(lambda: s.list_namespaces(limit=1001))
    assert big_page["details"]["errors"][0]["field"] == "limit"
    with pytest.raises(NotFoundError):
        await s.get_item(["ok"], "k")  # nothing was written


async def test_what_the_sdk_refuses_itself_is_422_from_the_server_too(keyed: Keyed) -> None:
    async with keyed.raw(keyed.acme) as raw:
        dotted = await raw.put("/store/items", json={"namespace": ["a.b"], "key": "k", "value": {}})
        empty = await raw.put("/store/items", json={"namespace": [], "key": "k", "value": {}})
        a_list = await raw.put("/store/items", json={"namespace": ["a"], "key": "k", "value": [1]})
        not_json = await raw.put(
            "/store/items",
            content=b'{"namespace": ["a"], "key": "k", "value": {"x": NaN}}',
            headers={"Content-Type": "application/json"},
        )
        gap = await raw.get("/store/items", params={"namespace": "a..b", "key": "k"})
        deep = await raw.get("/store/items", params={"namespace": ".".join("x" * 11), "key": "k"})
        no_key = await raw.get("/store/items", params={"namespace": "a"})
        deleted = await raw.request("DELETE", "/store/items", json={"namespace": ["a"], "key": ""})

    for answer in (dotted, empty, a_list, not_json, gap, deep, no_key, deleted):
        assert answer.status_code == 422, answer.text
    assert dotted.json()["error"]["details"]["errors"][0]["field"] == "namespace.0"
    for joined in (gap, deep):  # the query's pattern: 1 to 10 labels, none empty
        assert joined.json()["error"]["details"]["errors"][0]["field"] == "namespace"
    assert no_key.json()["error"]["details"]["errors"][0]["field"] == "key"


def _pg_key(pg_url: str, tenant: str) -> str:
    made = hansa("keys", "create", "--tenant", tenant, "--role", "admin", "--database-url", pg_url)
    assert made.returncode == 0, made.stdout + made.stderr
    return made.stdout.strip().splitlines()[-1]


async def test_the_store_on_postgresql(api: Server, pg_url: str) -> None:
    acme, globex = _pg_key(pg_url, "acme"), _pg_key(pg_url, "globex")
    async with (
        get_client(url=f"{api.url}/ap", api_key=acme) as mine,
        get_client(url=f"{api.url}/ap", api_key=globex) as theirs,
    ):
        await mine.store.put_item(["users", "ada"], "prefs", {"theme": "dark", "n": 1})
        first = await mine.store.get_item(["users", "ada"], "prefs")
        await mine.store.put_item(["users", "ada"], "prefs", {"theme": "Light", "n": 1.0}, ttl=5)
        second = await mine.store.get_item(["users", "ada"], "prefs")
        await mine.store.put_item(["users", "ada-b"], "other", {"theme": "dark"})
        found = await mine.store.search_items(["users", "ada"], filter={"n": 1}, query="LIGHT")
        listed = await mine.store.list_namespaces(prefix=["users"], max_depth=2)
        hidden = await theirs.store.search_items([])
        await mine.store.delete_item(["users", "ada"], "prefs")
        with pytest.raises(NotFoundError):
            await mine.store.get_item(["users", "ada"], "prefs")

    assert second["value"] == {"theme": "Light", "n": 1.0}
    assert second["created_at"] == first["created_at"]
    assert _when(second["updated_at"]) > _when(first["created_at"])
    assert _keys(found) == ["prefs"]
    assert listed["namespaces"] == [["users", "ada"], ["users", "ada-b"]]
    assert hidden == {"items": []}
