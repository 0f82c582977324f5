"""The browser rules of local mode: loopback listening addresses, loopback Host names, and
Origin against Host."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import HTTPConnection

from hansa.api import auth
from hansa.domain.principal import OriginDenied


def _conn(method: str = "POST", server: Any = ("127.0.0.1", 8000), **headers: str) -> Any:
    scope = {
        "type": "http",
        "method": method,
        "path": "/api/x",
        "query_string": b"",
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
        "server": server,
    }
    return HTTPConnection(scope)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("[::1]", True), ("127.0.0.2", True)]
    + [("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("example.com", False)],
)
def test_which_listening_addresses_are_loopback(host: str, loopback: bool) -> None:
    assert auth.is_loopback(host) is loopback


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LOCALHOST"])
def test_loopback_hosts_are_answered(host: str) -> None:
    auth.check_host(_conn(host=host))


@pytest.mark.parametrize("host", ["attacker.example:8000", "127.0.0.1.nip.io", "10.0.0.5:8000"])
def test_other_hosts_are_refused(host: str) -> None:
    with pytest.raises(OriginDenied):
        auth.check_host(_conn(host=host))


def test_the_servers_own_name_is_answered_when_it_reports_one() -> None:
    auth.check_host(_conn(host="hansa.test", server=("hansa.test", 80)))
    with pytest.raises(OriginDenied):
        auth.check_host(_conn(host="hansa.test", server=("127.0.0.1", 8000)))


@pytest.mark.parametrize(
    ("origin", "host", "same"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://localhost", "localhost:80", True),
        ("https://hansa.example", "hansa.example", True),
        ("http://127.0.0.1:9000", "127.0.0.1:8000", False),
        ("http://localhost:8000", "127.0.0.1:8000", False),
        ("null", "127.0.0.1:8000", False),
        ("file://", "127.0.0.1:8000", False),
    ],
)
def test_same_origin_compares_origin_with_host(origin: str, host: str, same: bool) -> None:
    assert auth.same_origin(_conn(host=host), origin) is same


def test_only_writes_are_checked_and_a_cookie_needs_an_origin() -> None:
    auth.check_origin(_conn("GET", host="a:1", origin="http://evil.example"), required=True)
    auth.check_origin(_conn("POST", host="a:1"), required=False)
    with pytest.raises(OriginDenied):
        auth.check_origin(_conn("POST", host="a:1"), required=True)
    with pytest.raises(OriginDenied):
        auth.check_origin(_conn("DELETE", host="a:1", origin="http://evil.example"), required=False)


def test_a_listed_origin_may_write_and_others_may_not() -> None:
    listed = frozenset({"http://localhost:3000"})
    app = _conn("POST", host="127.0.0.1:8000", origin="http://localhost:3000")
    auth.check_origin(app, required=True, listed=listed)
    with pytest.raises(OriginDenied, match="HANSA_CORS_ORIGINS"):
        auth.check_origin(
            _conn("POST", host="127.0.0.1:8000", origin="http://localhost:3001"),
            required=False,
            listed=listed,
        )
    with pytest.raises(OriginDenied):
        auth.check_origin(app, required=False)
