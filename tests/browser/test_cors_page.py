"""A browser app on another origin (issue 33 item 1), in Chromium: a page served from an
origin ``HANSA_CORS_ORIGINS`` lists calls ``/v1`` with ``fetch`` (a JSON body and an
``Authorization`` header: the browser sends a preflight first) and reads the answer and
its ``X-Hansa-Conversation-Id``; the same page from an origin not listed is blocked by the
browser and posts nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import Browser

from harness import Server, free_port

APP_PORT = free_port()
SERVER_ENV = {"HANSA_CORS_ORIGINS": f"http://localhost:{APP_PORT}"}


class _App(BaseHTTPRequestHandler):
    """A page of a browser app that asks Hansa's chief through ``/v1``."""

    target = ""

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
        body = f"""<!doctype html><title>app</title>
<script>
fetch("{self.target}/v1/chat/completions", {{
  method: "POST",
  headers: {{"Content-Type": "application/json", "Authorization": "Bearer sk-local"}},
  body: JSON.stringify({{model: "chief", messages: [{{role: "user", content: "Hi"}}]}}),
}}).then(async (r) => {{
  const answer = await r.json();
  document.body.dataset.conversation = r.headers.get("X-Hansa-Conversation-Id") || "";
  document.title = "answered " + r.status + " " + answer.choices.length;
}}).catch((e) => {{ document.title = "blocked"; }});
</script>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _serving(port: int, target: str) -> Iterator[None]:
    _App.target = target
    app = ThreadingHTTPServer(("127.0.0.1", port), _App)
    thread = threading.Thread(target=app.serve_forever, name="app page", daemon=True)
    thread.start()
    try:
        yield
    finally:
        app.shutdown()
        app.server_close()


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
    browser: Browser, server: Server
) -> None:
    with server.client() as c:
        before = len(c.get("/api/conversations").json())
    with _serving(APP_PORT, server.url):
        listed = _title_after_fetch(browser, f"http://localhost:{APP_PORT}/")
    other_port = free_port()
    with _serving(other_port, server.url):
        other = _title_after_fetch(browser, f"http://localhost:{other_port}/")
    with server.client() as c:
        after = c.get("/api/conversations").json()

    assert listed[0] == "answered 200 1", listed
    assert listed[1] in {conversation["id"] for conversation in after}
    assert other == ("blocked", None)
    assert len(after) == before + 1, "the blocked page's preflight stopped its POST"
