"""A browser app on another origin (issue 33 item 1), in Chromium: a page served from an
origin ``HANSA_CORS_ORIGINS`` lists calls ``/v1`` with ``fetch`` (a JSON body and an
``Authorization`` header: the browser sends a preflight first) and reads the answer and
its ``X-Hansa-Conversation-Id``; the same page from an origin not listed is blocked by the
browser and posts nothing."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser

from harness import Server, free_port

APP_PORT = free_port()
SERVER_ENV = {"HANSA_CORS_ORIGINS": f"http://localhost:{APP_PORT}"}


def _app(target: str) -> str:
    """A page of a browser app that asks Hansa's chief through ``/v1``."""
    return f"""<!doctype html><title>app</title>
<script>
fetch("{target}/v1/chat/completions", {{
  method: "POST",
  headers: {{"Content-Type": "application/json", "Authorization": "Bearer sk-local"}},
  body: JSON.stringify({{model: "chief", messages: [{{role: "user", content: "Hi"}}]}}),
}}).then(async (r) => {{
  const answer = await r.json();
  document.body.dataset.conversation = r.headers.get("X-Hansa-Conversation-Id") || "";
  document.title = "answered " + r.status + " " + answer.choices.length;
}}).catch((e) => {{ document.title = "blocked"; }});
</script>"""


def _title_after_fetch(browser: Browser, url: str) -> tuple[str, str | None]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("document.title !== 'app'", timeout=30_000)
        return page.title(), page.evaluate("document.body.dataset.conversation || null")
    finally:
        context.close()


def test_a_listed_origins_page_calls_hansa_and_another_is_blocked(
    browser: Browser, server: Server, page_elsewhere: Any
) -> None:
    with server.client() as c:
        before = len(c.get("/api/conversations").json())
    with page_elsewhere(_app(server.url), APP_PORT):
        listed = _title_after_fetch(browser, f"http://localhost:{APP_PORT}/")
    with page_elsewhere(_app(server.url)) as other_port:
        other = _title_after_fetch(browser, f"http://localhost:{other_port}/")
    with server.client() as c:
        after = c.get("/api/conversations").json()

    assert listed[0] == "answered 200 1", listed
    assert listed[1] in {conversation["id"] for conversation in after}
    assert other == ("blocked", None)
    assert len(after) == before + 1, "the blocked page's preflight stopped its POST"
