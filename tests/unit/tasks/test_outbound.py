"""webhook.call's outbound client against real local HTTP servers that count what reaches them."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors.outbound import OutboundClient, OutboundPolicy, call, stays_inside


class _Server(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hits: list[dict[str, object]] = []
        self.release = threading.Event()  # lets a slow handler finish at teardown

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client hanging up on purpose (response_too_large) is expected


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        received = self.rfile.read(length).decode() if length else ""
        hit = {
            "method": self.command,
            "path": self.path,
            "body": received,
            "key": self.headers.get("idempotency-key"),
            "host": self.headers.get("host"),
        }
        self.server.hits.append(hit)
        path, _, query = self.path.partition("?")
        if path in ("/redirect", "/redirect307"):
            self.send_response(302 if path == "/redirect" else 307)
            self.send_header("Location", query.removeprefix("to="))
            self.end_headers()
        elif path == "/slow":
            self.server.release.wait(5)
            self._send(200, b"late", "text/plain")
        elif path == "/big":  # no Content-Length: the client must count
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b"x" * 1000)
        elif path in ("/gzip-bomb", "/gzip-small"):  # compressed though identity was asked
            size = 20_000_000 if path == "/gzip-bomb" else 100
            data = gzip.compress(b'{"x": "' + b"A" * size + b'"}')
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif path == "/fail":
            self._send(503, b"down for maintenance", "text/plain; charset=utf-8")
        else:
            self._send(200, json.dumps(hit).encode(), "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer


@pytest.fixture
def start_server() -> Iterator[Callable[[], _Server]]:
    started: list[tuple[_Server, threading.Thread]] = []

    def start() -> _Server:
        server = _Server()
        thread = threading.Thread(target=server.serve_forever, args=(0.01,), name=f"{server.port}")
        thread.start()
        started.append((server, thread))
        return server

    yield start
    for server, thread in started:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def _policy(*servers: _Server, **limits: Any) -> OutboundPolicy:
    return OutboundPolicy(allow=frozenset(("127.0.0.1", s.port) for s in servers), **limits)


async def _refused(policy: OutboundPolicy, url: str, method: str = "GET") -> TaskFailed:
    with pytest.raises(TaskFailed) as caught:
        await call(policy, url=url, method=method, idempotency_key="k-1")
    return caught.value


@pytest.mark.anyio
async def test_an_allowed_local_server_is_called(start_server: Callable[[], _Server]) -> None:
    server = start_server()
    result = await call(
        _policy(server),
        url=f"{server.base}/hook",
        method="post",
        body={"order": 7},
        idempotency_key="task-42",
    )
    assert result["statusCode"] == 200
    assert result["headers"] == {"content-type": "application/json"}
    assert result["url"] == f"{server.base}/hook"
    assert result["body"]["key"] == "task-42"
    assert result["body"]["method"] == "POST"
    assert json.loads(result["body"]["body"]) == {"order": 7}
    assert len(server.hits) == 1


@pytest.mark.anyio
async def test_a_name_admitted_by_name_keeps_its_host_header(
    start_server: Callable[[], _Server],
) -> None:
    server = start_server()
    policy = OutboundPolicy.parse(f"LOCALHOST.:{server.port}")
    url = f"http://localhost:{server.port}/"
    result = await call(policy, url=url, method="GET", idempotency_key="k")
    assert result["body"]["host"] == f"localhost:{server.port}"


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
        "127.000.000.001",
        "[::1]",
        "[::127.0.0.1]",
        "0.0.0.0",
    ],
)
@pytest.mark.anyio
async def test_loopback_in_any_spelling_is_refused(
    start_server: Callable[[], _Server], host: str
) -> None:
    server = start_server()
    other = start_server()  # admitting another port must not admit this one
    failure = await _refused(_policy(other), f"http://{host}:{server.port}/")
    assert failure.code == "outbound_denied"
    assert not failure.retryable
    assert "loopback" in failure.message or "unspecified" in failure.message
    assert server.hits == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://192.168.1.1:8080/", "private"),
        ("http://[fd00::1]/", "private"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
    ],
)
@pytest.mark.anyio
async def test_internal_addresses_are_refused_before_connecting(url: str, reason: str) -> None:
    failure = await _refused(OutboundPolicy(timeout_seconds=2), url)
    assert failure.code == "outbound_denied"
    assert reason in failure.message


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/x", "file:///etc/passwd", "gopher://x/"])
@pytest.mark.anyio
async def test_other_schemes_are_refused(url: str) -> None:
    assert (await _refused(OutboundPolicy(), url)).code == "outbound_denied"


@pytest.mark.anyio
async def test_a_redirect_to_a_target_not_admitted_is_refused(
    start_server: Callable[[], _Server],
) -> None:
    allowed, forbidden = start_server(), start_server()
    url = f"{allowed.base}/redirect?to={forbidden.base}/steal"
    failure = await _refused(_policy(allowed), url, method="POST")
    assert failure.code == "outbound_denied"
    assert len(allowed.hits) == 1
    assert forbidden.hits == []


@pytest.mark.anyio
async def test_a_redirect_to_the_metadata_address_is_refused(
    start_server: Callable[[], _Server],
) -> None:
    server = start_server()
    url = f"{server.base}/redirect?to=http://169.254.169.254/latest/meta-data/"
    assert (await _refused(_policy(server), url)).code == "outbound_denied"


@pytest.mark.anyio
async def test_redirects_between_admitted_servers_are_followed(
    start_server: Callable[[], _Server],
) -> None:
    first, second = start_server(), start_server()
    result = await call(
        _policy(first, second),
        url=f"{first.base}/redirect307?to={second.base}/final",
        method="PUT",
        body="hello",
        idempotency_key="k-9",
    )
    assert result["statusCode"] == 200
    assert result["url"] == f"{second.base}/final"
    assert second.hits == [
        {
            "method": "PUT",
            "path": "/final",
            "body": "hello",
            "key": "k-9",
            "host": f"127.0.0.1:{second.port}",
        }
    ]
    found = await call(
        _policy(first, second),
        url=f"{first.base}/redirect?to=/after",
        method="POST",
        body={"a": 1},
        idempotency_key="k-10",
    )
    assert (found["body"]["method"], found["body"]["body"]) == ("GET", "")  # 302 turns into GET


@pytest.mark.anyio
async def test_endless_redirects_stop(start_server: Callable[[], _Server]) -> None:
    server = start_server()
    url = f"{server.base}/redirect?to=/redirect?to=/redirect?to=/redirect"
    failure = await _refused(_policy(server, max_redirects=2), url)
    assert failure.code == "too_many_redirects"
    assert len(server.hits) == 3


@pytest.mark.anyio
async def test_a_slow_server_times_out(start_server: Callable[[], _Server]) -> None:
    server = start_server()
    failure = await _refused(_policy(server, timeout_seconds=0.3), f"{server.base}/slow")
    assert (failure.code, failure.retryable) == ("timeout", True)


@pytest.mark.anyio
async def test_a_large_response_is_cut_off(start_server: Callable[[], _Server]) -> None:
    server = start_server()
    failure = await _refused(_policy(server, max_response_bytes=10_000), f"{server.base}/big")
    assert failure.code == "response_too_large"


@pytest.mark.anyio
async def test_a_compressed_answer_counts_what_it_decompresses_to(
    start_server: Callable[[], _Server],
) -> None:
    # security review 2026-11-27, M1: a few KB of gzip held 20 MB
    server = start_server()
    policy = _policy(server, max_response_bytes=100_000)
    failure = await _refused(policy, f"{server.base}/gzip-bomb")
    small = await call(policy, url=f"{server.base}/gzip-small", method="GET", idempotency_key="k")
    async with OutboundClient(policy, timeout=10) as connector:  # WordPress and WooCommerce
        with pytest.raises(TaskFailed) as by_connector:
            await connector.send("GET", f"{server.base}/gzip-bomb")
        reply = await connector.send("GET", f"{server.base}/gzip-small")
    assert failure.code == "response_too_large" and "decompressed" in failure.message
    assert small["body"] == {"x": "A" * 100}
    assert by_connector.value.code == "response_too_large"
    assert reply.json() == {"x": "A" * 100}


@pytest.mark.anyio
async def test_a_large_request_is_not_sent(start_server: Callable[[], _Server]) -> None:
    server = start_server()
    with pytest.raises(TaskFailed) as caught:
        await call(
            _policy(server, max_request_bytes=10),
            url=server.base,
            method="POST",
            body="x" * 11,
            idempotency_key="k",
        )
    assert caught.value.code == "request_too_large"
    assert server.hits == []


@pytest.mark.anyio
async def test_a_server_error_is_a_result(start_server: Callable[[], _Server]) -> None:
    server = start_server()
    result = await call(
        _policy(server), url=f"{server.base}/fail", method="GET", idempotency_key="k"
    )
    assert (result["statusCode"], result["body"]) == (503, "down for maintenance")


@pytest.mark.anyio
async def test_a_closed_port_is_a_retryable_connection_failure() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    policy = OutboundPolicy(allow=frozenset({("127.0.0.1", port)}))
    failure = await _refused(policy, f"http://127.0.0.1:{port}/")
    assert (failure.code, failure.retryable) == ("connection_failed", True)


@pytest.mark.anyio
async def test_an_unknown_method_is_refused() -> None:
    assert (await _refused(OutboundPolicy(), "http://example.com/", "TRACE")).code == "bad_method"


def test_the_allow_setting_is_parsed() -> None:
    policy = OutboundPolicy.parse("127.0.0.1:8080, localhost:9000,[::1]:81,")
    assert policy.allow == {("127.0.0.1", 8080), ("localhost", 9000), ("::1", 81)}
    assert OutboundPolicy.parse("").allow == frozenset()


@pytest.mark.parametrize("text", ["nohost", "h:99999", "h:0", ":80", "h:x", "::1:80", "a b:80"])
def test_bad_allow_entries_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="HANSA_OUTBOUND_ALLOW entry"):
        OutboundPolicy.parse(text)


@pytest.mark.anyio
async def test_a_name_that_resolves_to_loopback_is_refused(
    start_server: Callable[[], _Server],
) -> None:
    name = socket.gethostname()  # listed in /etc/hosts: resolved without DNS
    try:
        resolved = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        pytest.skip(f"{name} does not resolve here")
    if not any(ip.startswith("127.") for ip in resolved):
        pytest.skip(f"{name} resolves to {resolved}, not to loopback")
    server = start_server()
    failure = await _refused(OutboundPolicy(), f"http://{name}:{server.port}/")
    assert failure.code == "outbound_denied"
    assert "resolves to" in failure.message
    assert server.hits == []


@pytest.mark.parametrize("url", ["http://[::1", "http://exa mple.com/", "http:///path", "nonsense"])
@pytest.mark.anyio
async def test_broken_urls_are_refused(url: str) -> None:
    assert (await _refused(OutboundPolicy(), url)).code in ("bad_url", "outbound_denied")


@pytest.mark.anyio
async def test_credential_headers_go_over_plain_http_only_to_a_listed_target() -> None:
    with pytest.raises(TaskFailed) as caught:
        await call(
            OutboundPolicy(),
            url="http://hooks.example.com/ping",
            method="GET",
            headers={"X-Api-Key": "k"},
            idempotency_key="k",
        )
    assert caught.value.code == "outbound_denied"
    assert "over plain http" in caught.value.message


@pytest.mark.anyio
async def test_errors_never_quote_a_urls_credentials() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    policy = OutboundPolicy(allow=frozenset({("127.0.0.1", port)}))
    failure = await _refused(policy, f"http://127.0.0.1:{port}/hook?api_key=SECRET1")
    assert failure.code == "connection_failed"
    assert "SECRET1" not in failure.message and "api_key=***" in failure.message
    refused = await _refused(OutboundPolicy(), "ftp://u:SECRET2@example.com/?token=SECRET3")
    assert "SECRET2" not in refused.message and "SECRET3" not in refused.message


@pytest.mark.parametrize(
    ("url", "inside"),
    [
        ("https://hooks.example.com/x", False),
        ("https://93.184.215.14/x", False),
        ("https://listed.example.com/x", True),
        ("https://listed.example.com:8443/x", False),
        ("http://169.254.169.254/latest", True),
        ("http://127.0.0.1:9/", True),
        ("http://2130706433/", True),
        ("ftp://hooks.example.com/", True),
    ],
)
def test_what_stays_inside_the_vetted_targets(url: str, inside: bool) -> None:
    policy = OutboundPolicy.parse("listed.example.com:443")
    assert stays_inside(policy, url) is inside
