"""The API's pages render in a real browser that may reach nothing but Hansa: Swagger UI
and ReDoc come from Hansa itself, and they read its OpenAPI 3.1 description."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, Route, expect

from harness import Server


def _offline(page: Page, server: Server) -> list[str]:
    """Refuse every request that is not to the server; the refused URLs."""
    refused: list[str] = []

    def only_hansa(route: Route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    page.route("**/*", only_hansa)
    return refused


def test_swagger_ui_renders_offline(page: Page, server: Server) -> None:
    refused = _offline(page, server)
    page.goto(server.url + "/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Hansa", timeout=30_000)
    expect(page.locator("#operations-runs-createRun")).to_be_visible()
    expect(page.locator(".opblock-tag-section").first).to_be_visible()
    assert page.locator("text=Unable to render this definition").count() == 0
    assert not refused, refused


def test_redoc_renders_offline(browser: Browser, server: Server) -> None:
    context = browser.new_context()  # its own: the logo it cannot load logs a console error
    try:
        page = context.new_page()
        refused = _offline(page, server)
        page.goto(server.url + "/redoc")
        expect(page.locator("h1").first).to_contain_text("Hansa", timeout=30_000)
        expect(page.get_by_text("ErrorBody").first).to_be_attached()
        # ReDoc's script links its maker's logo ("API docs by Redocly"): the one thing missing
        assert all(url.endswith("/logo-mini.svg") for url in refused), refused
    finally:
        context.close()
