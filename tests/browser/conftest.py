"""Browser tests: the real server (scripted model) driven through Debian's Chromium.

Each module gets its own server; a module may set ``MODEL`` to a callable that takes a
temporary directory and returns the ``--model`` value (e.g. a slow scripted model), and
``SERVER_ENV`` to the environment the server gets beside the usual.
Every test saves a screenshot of its final state under ``test-artifacts/``.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Locator,
    Page,
    Playwright,
    sync_playwright,
)

from harness import Server, free_port, running_server

CHROMIUM = Path(os.environ.get("HANSA_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# The panel asks for GET /api/tenant and falls back to "default" while it does not exist.
_TOLERATED_URL = re.compile(r"/api/tenant$")
# Requests that fail while a test has taken the network away on purpose.
_TOLERATED_TEXT = re.compile(r"net::ERR_INTERNET_DISCONNECTED")


# Module scope, not session: while Playwright's sync API is running it keeps an event
# loop running in this thread, which would break the async tests that come after.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):  # CI installs it (.ci/run): never skip silently there
            pytest.fail(f"no Chromium at {CHROMIUM}: .ci/run installs Debian's chromium")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set HANSA_CHROMIUM)")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("server")
    model: Callable[[Path], str] = getattr(request.module, "MODEL", lambda _: "scripted")
    env: dict[str, str] = getattr(request.module, "SERVER_ENV", {})
    with running_server(tmp, model(tmp), env=env) as s:
        yield s


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest, artifacts: Path) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(15_000)
    page = context.new_page()
    problems: list[str] = []

    def on_console(msg: ConsoleMessage) -> None:
        url = msg.location.get("url", "")
        if msg.type != "error" or _TOLERATED_URL.search(url) or _TOLERATED_TEXT.search(msg.text):
            return
        problems.append(f"console: {msg.text} ({url})")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    yield page
    page.screenshot(path=str(artifacts / f"{_slug(request.node.name)}.png"))
    context.close()
    assert not problems, problems


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


class Panel:
    """What a user does with the panel, in a few verbs."""

    def __init__(self, page: Page, server: Server) -> None:
        self.page = page
        self.server = server

    def open(self, conversation_id: str | None = None) -> None:
        """Load the panel (on a conversation if given) and wait until the agents are shown."""
        self.page.goto(self.server.url + "/" + (f"#c={conversation_id}" if conversation_id else ""))
        self.page.wait_for_selector(".agent[data-agent='chief'][aria-checked='true']")

    def send(self, text: str) -> None:
        """Type a message and press Enter, as a user would."""
        box = self.page.get_by_label("Message", exact=True)
        box.fill(text)
        box.press("Enter")

    def conversation_id(self) -> str:
        """The conversation the panel shows (kept in the URL hash)."""
        # not wait_for_function: Playwright evals its predicate, which the panel's CSP refuses
        self.page.wait_for_url(re.compile(r"#c="))
        return str(self.page.evaluate("location.hash.slice(3)"))

    def answer(self, containing: str) -> Locator:
        """The finished assistant message whose text contains ``containing``."""
        found = self.page.locator(".msg-assistant[data-id]").filter(has_text=containing)
        found.first.wait_for()
        return found.first


@pytest.fixture
def panel(page: Page, server: Server) -> Panel:
    return Panel(page, server)


class Api:
    """The HTTP API for test setup; every call must succeed."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def get(self, path: str) -> Any:
        response = self.client.get(path)
        assert response.status_code < 400, response.text
        return response.json()

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.client.post(path, json=body or {})
        assert response.status_code < 400, response.text
        return response.json()


@pytest.fixture
def api(server: Server) -> Iterator[Api]:
    with server.client() as client:
        yield Api(client)


@pytest.fixture
def aquaverter(api: Api) -> Any:
    """The seed's project: WordPress, not connected, drafting its changes in the workspace."""
    body = {
        "name": "Aquaverter",
        "domain": "aquaverter.ca",
        "cmsPlatform": "wordpress",
        "config": {"workspaceDrafts": True},
    }
    return api.post("/api/projects", body)


@contextmanager
def _page_elsewhere(html: str, port: int | None = None) -> Iterator[int]:
    """Serve ``html`` at ``/`` of ``http://127.0.0.1:<port>`` (also reached as ``localhost``):
    a page of another origin than the server's, for cross-origin tests; yields the port."""
    body = html.encode()

    class _Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    served = ThreadingHTTPServer(("127.0.0.1", port or free_port()), _Page)
    thread = threading.Thread(target=served.serve_forever, name="page elsewhere", daemon=True)
    thread.start()
    try:
        yield served.server_address[1]
    finally:
        served.shutdown()
        served.server_close()


PageElsewhere = Callable[..., AbstractContextManager[int]]
"""``page_elsewhere(html, port=None)``: see ``_page_elsewhere``."""


@pytest.fixture
def page_elsewhere() -> PageElsewhere:
    """Serve a page of another origin than the server's (``_page_elsewhere``)."""
    return _page_elsewhere
