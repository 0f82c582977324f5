"""The process's MCP listings stay bounded: an edited server entry's old listing goes."""

from __future__ import annotations

from hansa.tasks.connectors.mcp_client import LISTINGS_KEPT, ToolCatalog, ToolFacts


def _tools(n: int) -> list[ToolFacts]:
    return [ToolFacts(f"tool{n}", "", {"type": "object"}, True, False)]


def test_past_the_bound_the_least_recently_listed_servers_are_forgotten() -> None:
    catalog = ToolCatalog()
    for n in range(LISTINGS_KEPT + 40):
        catalog.keep(f"fingerprint-{n}", _tools(n))

    assert len(catalog) == LISTINGS_KEPT
    assert catalog.known("fingerprint-0") is None
    assert catalog.known("fingerprint-39") is None
    newest = catalog.known(f"fingerprint-{LISTINGS_KEPT + 39}")
    assert newest is not None and list(newest) == [f"tool{LISTINGS_KEPT + 39}"]


def test_listing_a_server_again_makes_it_the_last_forgotten() -> None:
    catalog = ToolCatalog()
    for n in range(LISTINGS_KEPT):
        catalog.keep(f"fingerprint-{n}", _tools(n))

    catalog.keep("fingerprint-0", _tools(1000))  # listed again: now the newest
    catalog.keep("another", _tools(2000))  # one past the bound: the oldest goes

    assert len(catalog) == LISTINGS_KEPT
    again = catalog.known("fingerprint-0")
    assert again is not None and list(again) == ["tool1000"]
    assert catalog.known("fingerprint-1") is None
