"""A credential goes to its target alone: on a redirect to another origin every header that
may carry one is dropped (a named service's ``X-Api-Key`` as well as ``Authorization``),
and plain ones (``Accept``, ``Idempotency-Key``) go on; a redirect within the origin keeps
them all."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hansa.tasks.connectors.outbound import OutboundPolicy, call

pytestmark = pytest.mark.anyio

SENT = {
    "Authorization": "Bearer CANARY-A",
    "X-Api-Key": "CANARY-B",
    "X-Auth-Key": "CANARY-C",
    "Accept": "application/json",
}


class _Site(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[dict[str, str]] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Site

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.server.seen.append(
            {"path": self.path, **{k.lower(): v for k, v in self.headers.items()}}
        )
        path, _, query = self.path.partition("?")
        if path == "/moved":
            self.send_response(307)
            self.send_header("Location", query.removeprefix("to="))
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def sites() -> Iterator[tuple[_Site, _Site]]:
    started = [_Site(), _Site()]
    threads = [threading.Thread(target=s.serve_forever, args=(0.01,)) for s in started]
    for t in threads:
        t.start()
    yield started[0], started[1]
    for s, t in zip(started, threads, strict=True):
        s.shutdown()
        s.server_close()
        t.join()


def _policy(*sites: _Site) -> OutboundPolicy:
    return OutboundPolicy(allow=frozenset(("127.0.0.1", s.server_address[1]) for s in sites))


async def test_credentials_are_dropped_on_a_redirect_to_another_origin(
    sites: tuple[_Site, _Site],
) -> None:
    service, elsewhere = sites
    url = f"{service.base}/moved?to={elsewhere.base}/landing"
    await call(
        _policy(service, elsewhere), url=url, method="GET", headers=SENT, idempotency_key="k-1"
    )
    assert service.seen[0]["x-api-key"] == "CANARY-B", "the service itself gets them"
    (landed,) = elsewhere.seen
    assert not {"authorization", "x-api-key", "x-auth-key"} & set(landed)
    assert landed["accept"] == "application/json" and landed["idempotency-key"] == "k-1"


async def test_a_redirect_within_the_origin_keeps_them(sites: tuple[_Site, _Site]) -> None:
    service, _ = sites
    url = f"{service.base}/moved?to=/landing"
    await call(_policy(service), url=url, method="GET", headers=SENT, idempotency_key="k-2")
    landed = service.seen[-1]
    assert landed["path"] == "/landing"
    assert (landed["authorization"], landed["x-api-key"]) == ("Bearer CANARY-A", "CANARY-B")
