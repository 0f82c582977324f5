"""The panel on a server with keys (security review C1, M6), in a real browser: it asks for
a key once, the server keeps it in an HttpOnly, SameSite=Strict cookie, and a page of
another origin can neither write with that cookie nor frame the panel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apikeys import bearer, create_key
from playwright.sync_api import Browser, Page, expect

from harness import Server, running_server

KEY_DIALOG = "This Hansa server needs an API key"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    """A server with an admin key of tenant ``acme``: the panel needs a key."""
    with running_server(tmp_path_factory.mktemp("keyed")) as s:
        yield s, create_key(s, "acme", "admin")


@pytest.fixture
def page(browser: Browser, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page whose script errors fail the test (the 401s before signing in are expected)."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.screenshot(path=str(artifacts / f"{request.node.name}.png"))
    context.close()
    assert not errors, errors


def _waiting_run(server: Server, key: str) -> str:
    """A run awaiting approval (its approve is a POST with no body: no preflight)."""
    with server.client(headers=bearer(key)) as c:
        cid = c.post("/api/conversations", json={}).json()["id"]
        tasks = [
            {
                "stepGroup": "A",
                "taskType": "wait",
                "parameters": {"seconds": 0},
                "createdByAgentId": "schedulerAgent",
            }
        ]
        made = c.post("/api/runs", json={"conversationId": cid, "title": "t", "tasks": tasks})
        return str(made.json()["id"])


def _run_status(server: Server, key: str, run_id: str) -> str:
    with server.client(headers=bearer(key)) as c:
        return str(c.get(f"/api/runs/{run_id}").json()["status"])


def test_the_panel_asks_for_a_key_once_and_keeps_it_in_an_http_only_cookie(
    page: Page, keyed: tuple[Server, str]
) -> None:
    server, key = keyed
    page.goto(server.url + "/")
    dialog = page.get_by_role("dialog", name=KEY_DIALOG)
    expect(dialog).to_be_visible()
    page.get_by_label("API key", exact=True).fill("hk_not-a-key")
    page.get_by_role("button", name="Sign in").click()
    expect(dialog.get_by_role("alert")).to_have_text("That key is not valid (unknown or revoked).")

    page.get_by_label("API key", exact=True).fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(".agent[data-agent='chief'][aria-checked='true']")
    expect(page.locator("#tenant")).to_have_text("acme")
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "hansa_session"]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert "hansa_session" not in page.evaluate("document.cookie"), "no script can read it"

    page.reload()
    page.wait_for_selector(".agent[data-agent='chief'][aria-checked='true']")
    expect(page.get_by_role("dialog", name=KEY_DIALOG)).to_have_count(0)
    box = page.get_by_label("Message", exact=True)
    box.fill("hello from a signed-in panel")
    box.press("Enter")
    page.locator(".msg-assistant[data-id]").filter(has_text="hello from").first.wait_for()


def _attacker(target: str, approve: str) -> str:
    """A page on another origin of the same site (127.0.0.1, another port): the browser
    sends the panel's SameSite=Strict cookie with its requests all the same."""
    return f"""<!doctype html><title>evil</title>
<iframe id="framed" src="{target}/" onload="document.body.dataset.framed = 1"></iframe>
<script>
fetch("{target}{approve}", {{method: "POST", mode: "no-cors", credentials: "include"}})
  .finally(() => document.title = "sent");
</script>"""


def test_another_origin_can_neither_write_with_the_cookie_nor_frame_the_panel(
    page: Page, keyed: tuple[Server, str], page_elsewhere: Any
) -> None:
    server, key = keyed
    page.goto(server.url + "/")  # sign the browser in, as the first test did
    page.get_by_label("API key", exact=True).fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(".agent[data-agent='chief'][aria-checked='true']")
    run_id = _waiting_run(server, key)
    with page_elsewhere(_attacker(server.url, f"/api/runs/{run_id}/approve")) as port:
        page.goto(f"http://127.0.0.1:{port}/")
        expect(page).to_have_title("sent")
        page.wait_for_selector("body[data-framed]", state="attached")
        (framed,) = [f for f in page.frames if f is not page.main_frame]
    assert _run_status(server, key, run_id) == "awaiting_approval", (
        "the cross-site POST did nothing"
    )
    assert not framed.url.startswith(server.url), f"the panel was framed: {framed.url}"
