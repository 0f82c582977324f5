"""The WordPress and WooCommerce connectors behind the outbound guard (SSRF corpus).

The fake site is real and local; each test admits it (or not) exactly as
``HANSA_OUTBOUND_ALLOW`` would, and checks what reached it.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors.outbound import OutboundPolicy
from hansa.tasks.connectors.woocommerce import WooCommerceShop
from hansa.tasks.connectors.wordpress import WordPressCms

sys.path.insert(0, str(Path(__file__).parent))
from fake_wordpress import FakeSite, allowing, serve  # noqa: E402

pytestmark = pytest.mark.anyio

Reach = Callable[[str, FakeSite, OutboundPolicy], Awaitable[Any]]


async def _wordpress(base_url: str, site: FakeSite, policy: OutboundPolicy) -> Any:
    async with WordPressCms(
        base_url, site.username, site.app_password, policy=policy, timeout=2
    ) as cms:
        return await cms.get_page("1")


async def _woocommerce(base_url: str, site: FakeSite, policy: OutboundPolicy) -> Any:
    async with WooCommerceShop(
        base_url, site.consumer_key, site.consumer_secret, policy=policy, timeout=2
    ) as shop:
        return await shop.get_product("1")


CONNECTORS = pytest.mark.parametrize("reach", [_wordpress, _woocommerce], ids=["wp", "woo"])


@pytest.fixture
def site() -> Iterator[FakeSite]:
    with serve() as running:
        running.pages[1] = {"id": 1, "title": "x", "slug": "x", "content": "x", "status": "draft"}
        running.products[1] = {"id": 1, "name": "Mug", "sku": "s", "status": "draft"}
        yield running


def _port(site: FakeSite) -> int:
    return int(site.base_url.rsplit(":", 1)[1])


async def _refused(reach: Reach, base_url: str, site: FakeSite, policy: OutboundPolicy) -> str:
    with pytest.raises(TaskFailed) as caught:
        await reach(base_url, site, policy)
    assert site.requests == [], "nothing reached the site"
    return caught.value.code


@CONNECTORS
@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LOCALHOST.",
        "app.localhost",
        "127.0.0.1",
        "[::ffff:127.0.0.1]",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "[::1]",
        "0.0.0.0",
    ],
)
async def test_a_loopback_site_in_any_spelling_is_refused(
    reach: Reach, site: FakeSite, host: str
) -> None:
    other = OutboundPolicy(allow=frozenset({("127.0.0.1", _port(site) + 1)}))
    assert await _refused(reach, f"http://{host}:{_port(site)}", site, other) == "outbound_denied"


@CONNECTORS
@pytest.mark.parametrize(
    "base_url",
    [
        "http://169.254.169.254",
        "http://[fe80::1]",
        "http://10.0.0.1",
        "http://192.168.1.1:8080",
        "http://[fd00::1]",
        "http://100.64.0.1",
        "http://[::ffff:169.254.169.254]",
        "https://169.254.169.254/latest",
    ],
)
async def test_metadata_and_private_sites_are_refused(
    reach: Reach, site: FakeSite, base_url: str
) -> None:
    assert await _refused(reach, base_url, site, OutboundPolicy()) == "outbound_denied"


@CONNECTORS
async def test_the_allow_list_admits_the_site(reach: Reach, site: FakeSite) -> None:
    assert await reach(site.base_url, site, allowing(site.base_url))
    assert len(site.requests) == 1


@CONNECTORS
async def test_credentials_go_over_plain_http_only_to_a_listed_target(
    reach: Reach, site: FakeSite
) -> None:
    with pytest.raises(TaskFailed) as caught:
        await reach("http://shop.example.com", site, OutboundPolicy())
    assert caught.value.code == "outbound_denied"
    assert "over plain http" in caught.value.message


@CONNECTORS
@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:1/internal/admin?x=",
        "http://127.0.0.1:1/#frag",
        "http://admin:pw@127.0.0.1:1",
        "ftp://127.0.0.1:1",
        "127.0.0.1:1",
        "http://127.0.0.1:1/a/../../etc",
    ],
)
async def test_a_site_address_that_could_steer_the_request_is_refused(
    reach: Reach, site: FakeSite, base_url: str
) -> None:
    code = await _refused(
        reach, base_url, site, OutboundPolicy(allow=frozenset({("127.0.0.1", 1)}))
    )
    assert code == "connector_config"


class _Redirect(BaseHTTPRequestHandler):
    target = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(302)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()


@CONNECTORS
async def test_a_redirect_is_not_followed(reach: Reach, site: FakeSite) -> None:
    handler = type("Redirect", (_Redirect,), {"target": site.base_url})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,))
    thread.start()
    bouncer = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        code = await _refused(reach, bouncer, site, allowing(bouncer, site.base_url))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert code == "connector_config"


@CONNECTORS
async def test_a_large_answer_is_cut_off(reach: Reach, site: FakeSite) -> None:
    site.pages[1]["content"] = "x" * 5000
    site.products[1]["description"] = "x" * 5000
    capped = OutboundPolicy(allow=allowing(site.base_url).allow, max_response_bytes=1000)
    with pytest.raises(TaskFailed) as caught:
        await reach(site.base_url, site, capped)
    assert caught.value.code == "response_too_large"


@CONNECTORS
async def test_proxies_from_the_environment_are_ignored(
    reach: Reach, site: FakeSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        proxy = f"http://127.0.0.1:{closed.getsockname()[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert await reach(site.base_url, site, allowing(site.base_url))
    assert len(site.requests) == 1, "the site was called directly"


@CONNECTORS
async def test_the_sites_error_text_is_a_short_clean_excerpt(reach: Reach, site: FakeSite) -> None:
    site.fail_with = 400
    site.fail_message = (
        "<b>Bad</b> request: internal-secret-token=XYZ123 from the internal service\x07 "
        + "padding " * 100
    )
    with pytest.raises(TaskFailed) as caught:
        await reach(site.base_url, site, allowing(site.base_url))
    message = caught.value.message
    assert caught.value.code == "rejected"
    assert "Bad request" in message
    assert "XYZ123" not in message and "<b>" not in message and "\x07" not in message
    assert len(message) < 220
