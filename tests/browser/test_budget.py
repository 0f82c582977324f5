"""The page-load budget: small assets, all served by Hansa; a long conversation renders whole.
(How fast it renders is a benchmark, ``bench/panel_first_render.py``, not a test.)"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

import hansa
from harness import new_conversation, post

STATIC = Path(hansa.__file__).resolve().parent / "web" / "static"
ASSET_BUDGET = 300 * 1024
TURNS = 100  # a user message and an answer each: 200 messages


def test_g_assets_fit_the_budget(page: Page, panel) -> None:
    files = [f for f in STATIC.iterdir() if f.is_file()]
    assert {f.name for f in files} >= {"index.html", "app.js", "style.css"}
    total = sum(f.stat().st_size for f in files)
    assert total < ASSET_BUDGET, f"the panel's assets are {total} bytes"

    # In the browser: everything comes from the server itself, nothing from a CDN, and what
    # the panel loads (all but the API) stays within the budget, uncompressed.
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    panel.open()
    expect(page.locator(".welcome")).to_be_visible()
    assert requested and all(u.startswith(panel.server.url + "/") for u in requested), requested
    loaded = page.evaluate(
        """() => [performance.getEntriesByType('navigation')[0],
                  ...performance.getEntriesByType('resource')]
            .filter(e => !new URL(e.name).pathname.startsWith('/api/'))
            .map(e => [new URL(e.name).pathname, e.decodedBodySize])"""
    )
    names = {path.rsplit("/", 1)[-1] or "index.html" for path, _ in loaded}
    # The browser fetches the page's icon on its own, and not always before this look: an
    # icon counts as used when the page links it, and its size from the disk.
    icons = set(
        page.evaluate(
            """() => [...document.querySelectorAll('link[rel~=icon]')]
                .map(link => new URL(link.href).pathname.split('/').pop())"""
        )
    )
    assert icons, "the panel links its icon"
    assert names | icons == {f.name for f in files}, names  # every asset is used
    icon_bytes = sum((STATIC / name).stat().st_size for name in icons - names)
    assert 0 < sum(size for _, size in loaded) + icon_bytes < ASSET_BUDGET, loaded


@pytest.fixture(scope="module")
def long_conversation(server: Any) -> str:
    with server.client() as client:
        cid = new_conversation(client)
        for i in range(TURNS):
            post(client, cid, f"Note number {i + 1} for the record")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            shown = [
                m
                for m in client.get(f"/api/conversations/{cid}/messages").json()
                if m["kind"] in ("user", "assistant")
            ]
            if len(shown) >= 2 * TURNS:
                break
            time.sleep(0.25)
        assert len(shown) == 2 * TURNS
        return cid


def test_g_a_long_conversation_renders_whole(page: Page, panel, long_conversation: str) -> None:
    panel.open(long_conversation)
    expect(page.locator(".msg[data-id]")).to_have_count(2 * TURNS)
    last = page.locator(".msg-assistant[data-id]").last
    expect(last).to_contain_text(f"Note number {TURNS} for the record")
    expect(last).to_be_in_viewport()
