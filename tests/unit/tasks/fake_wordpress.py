"""A fake WordPress site with WooCommerce, served for real over HTTP on 127.0.0.1.

It keeps pages and products in memory, checks HTTP Basic credentials (the
application password for ``wp/v2``, the consumer key and secret for ``wc/v3``)
and answers the routes the connectors use with WordPress-shaped JSON, errors
included (``{"code", "message", "data": {"status"}}``); under ``/blog/`` it answers
every request with an HTML home page, like a site address that is not the root.
``serve()`` runs it with
uvicorn in a background thread and shuts it down cleanly.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from hansa.tasks.connectors.outbound import OutboundPolicy

Handler = Callable[[Request], Awaitable[JSONResponse]]

PAGE_STATUSES = {"publish", "future", "draft", "pending", "private"}
PRODUCT_STATUSES = {"publish", "draft", "pending", "private"}
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


@dataclass
class FakeSite:
    """The site's state; tests read and steer it directly."""

    username: str = "editor"
    app_password: str = "abcd EFGH ijkl MNOP"
    consumer_key: str = "ck_test"
    consumer_secret: str = "cs_test"
    pages: dict[int, dict[str, Any]] = field(default_factory=dict)
    products: dict[int, dict[str, Any]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    """``"METHOD /path"`` of every request, in order."""
    fail_with: int | None = None
    """When set, every request answers with this status."""
    fail_message: str = "There has been a critical error."
    """The ``message`` of those answers."""
    delay: float = 0.0
    """Seconds to wait before answering."""
    base_url: str = ""
    next_id: int = 1

    def new_id(self) -> int:
        """A fresh id shared by pages and products, like WordPress posts."""
        self.next_id += 1
        return self.next_id - 1


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message, "data": {"status": status}}, status)


def _credentials(request: Request) -> tuple[str, str] | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    user, _, password = base64.b64decode(token).decode().partition(":")
    return user, password


def _guarded(site: FakeSite, shop: bool, handler: Handler) -> Handler:
    async def endpoint(request: Request) -> JSONResponse:
        site.requests.append(f"{request.method} {request.url.path}")
        if site.delay:
            await asyncio.sleep(site.delay)
        if site.fail_with is not None:
            return _error(site.fail_with, "internal_server_error", site.fail_message)
        given = _credentials(request)
        if shop:
            if given != (site.consumer_key, site.consumer_secret):
                return _error(
                    401, "woocommerce_rest_authentication_error", "Consumer secret is invalid."
                )
        elif given is None or (given[0], given[1].replace(" ", "")) != (
            site.username,
            site.app_password.replace(" ", ""),
        ):
            return _error(
                401,
                "incorrect_password",
                "The provided password is an invalid application password.",
            )
        return await handler(request)

    return endpoint


def _page(
    site: FakeSite, page_id: int, body: dict[str, Any], old: dict[str, Any]
) -> dict[str, Any]:
    title = body.get("title", old.get("title", {}).get("raw", ""))
    content = body.get("content", old.get("content", {}).get("raw", ""))
    slug = body.get("slug", old.get("slug", ""))
    return {
        "id": page_id,
        "slug": slug,
        "status": body.get("status", old.get("status", "draft")),
        "link": f"{site.base_url}/{slug}/" if slug else f"{site.base_url}/?page_id={page_id}",
        "title": {"raw": title, "rendered": title},
        "content": {"raw": content, "rendered": f"{content}\n", "protected": False},
    }


def build_app(site: FakeSite) -> Starlette:
    """The Starlette app answering as ``site``."""

    async def pages(request: Request) -> JSONResponse:
        if request.method == "GET":
            slug = request.query_params.get("slug")
            # ?search= matches words of the title or content, ignoring case, as WordPress does
            search = request.query_params.get("search", "").casefold()
            return JSONResponse(
                [
                    p
                    for p in site.pages.values()
                    if slug in (None, p["slug"])
                    and search in f"{p['title']['raw']} {p['content']['raw']}".casefold()
                ]
            )
        body = await request.json()
        if body.get("status", "draft") not in PAGE_STATUSES:
            return _error(400, "rest_invalid_param", "Invalid parameter(s): status")
        page_id = site.new_id()
        site.pages[page_id] = _page(site, page_id, body, {})
        return JSONResponse(site.pages[page_id], 201)

    async def page(request: Request) -> JSONResponse:
        page_id: int = request.path_params["id"]
        if page_id not in site.pages:
            return _error(404, "rest_post_invalid_id", "Invalid post ID.")
        if request.method == "DELETE":
            if request.query_params.get("force") != "true":
                return _error(400, "fake_needs_force", "This fake deletes for good only.")
            return JSONResponse({"deleted": True, "previous": site.pages.pop(page_id)})
        if request.method == "POST":
            site.pages[page_id] = _page(site, page_id, await request.json(), site.pages[page_id])
        return JSONResponse(site.pages[page_id])

    async def products(request: Request) -> JSONResponse:
        if request.method == "GET":
            sku = request.query_params.get("sku")
            return JSONResponse([p for p in site.products.values() if sku in (None, p["sku"])])
        body = await request.json()
        if body.get("status", "publish") not in PRODUCT_STATUSES:
            return _error(400, "rest_invalid_param", "Invalid parameter(s): status")
        if body.get("sku") and any(p["sku"] == body["sku"] for p in site.products.values()):
            return _error(400, "product_invalid_sku", "Invalid or duplicated SKU.")
        product_id = site.new_id()
        site.products[product_id] = {
            "id": product_id,
            "name": body.get("name", ""),
            "sku": body.get("sku", ""),
            "status": body.get("status", "publish"),
            "regular_price": body.get("regular_price", ""),
            "description": body.get("description", ""),
            "permalink": f"{site.base_url}/product/{product_id}/",
        }
        return JSONResponse(site.products[product_id], 201)

    async def product(request: Request) -> JSONResponse:
        product_id: int = request.path_params["id"]
        if product_id not in site.products:
            return _error(404, "woocommerce_rest_product_invalid_id", "Invalid ID.")
        if request.method == "DELETE":
            if request.query_params.get("force") != "true":
                return _error(400, "fake_needs_force", "This fake deletes for good only.")
            return JSONResponse(site.products.pop(product_id))
        return JSONResponse(site.products[product_id])

    async def home_page(request: Request) -> HTMLResponse:
        return HTMLResponse("<html><body>Welcome to my blog</body></html>")

    async def no_route(request: Request) -> JSONResponse:
        return _error(
            404, "rest_no_route", "No route was found matching the URL and request method."
        )

    return Starlette(
        routes=[
            Route("/wp-json/wp/v2/pages", _guarded(site, False, pages), methods=["GET", "POST"]),
            Route(
                "/wp-json/wp/v2/pages/{id:int}", _guarded(site, False, page), methods=ALL_METHODS
            ),
            Route(
                "/wp-json/wc/v3/products", _guarded(site, True, products), methods=["GET", "POST"]
            ),
            Route(
                "/wp-json/wc/v3/products/{id:int}",
                _guarded(site, True, product),
                methods=ALL_METHODS,
            ),
            Route("/blog/{path:path}", home_page, methods=ALL_METHODS),
            Route("/{path:path}", no_route, methods=ALL_METHODS),
        ]
    )


@contextmanager
def serve(site: FakeSite | None = None) -> Iterator[FakeSite]:
    """Serve ``site`` (a new one by default) on a free local port, with ``base_url`` set."""
    site = site or FakeSite()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # connections queue in the backlog until uvicorn accepts them: no readiness wait
    site.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(build_app(site), log_level="warning", lifespan="off", loop="asyncio")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="fake-wordpress")
    thread.start()
    try:
        yield site
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive(), "the fake WordPress server did not stop"


def closed_port_url() -> str:
    """The address of a local port nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def allowing(*urls: str) -> OutboundPolicy:
    """The outbound guard admitting these local addresses, as ``HANSA_OUTBOUND_ALLOW`` would."""
    allow = ",".join(url.split("://", 1)[1].split("/", 1)[0] for url in urls)
    return OutboundPolicy.parse(allow)
