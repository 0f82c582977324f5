"""Browsers on other origins (issue 33 item 1): ``HANSA_CORS_ORIGINS`` lists the origins
whose pages may call Hansa. Their preflights (``OPTIONS`` with ``Origin`` and
``Access-Control-Request-Method``, as a browser sends them, without any key) are answered
before authentication; their answers, refusals included, carry the CORS headers with
credentials; any other origin gets none, and local mode's Origin checks still refuse it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from apikeys import bearer, create_key, error_code

from harness import Server, free_port, running_server

APP = "http://localhost:3000"
OTHER = "http://evil.example"
ORIGINS = {"HANSA_CORS_ORIGINS": f"{APP}, https://app.example.com"}
PATHS = ("/v1/chat/completions", "/ag-ui/chief", "/ap/threads/search", "/mcp", "/api/conversations")


def _preflight(server: Server, path: str, origin: str) -> httpx.Response:
    return httpx.options(
        server.url + path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, x-api-key",
        },
    )


def _cors(response: httpx.Response) -> list[str]:
    """The CORS headers of an answer."""
    return [h for h in response.headers if h.startswith("access-control-")]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("cors-local"), env=ORIGINS) as s:
        yield s


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    with running_server(tmp_path_factory.mktemp("cors-keyed"), env=ORIGINS) as s:
        yield s, create_key(s, "acme")


@pytest.mark.parametrize("path", PATHS)
def test_a_listed_origins_preflight_is_answered_before_authentication(
    keyed: tuple[Server, str], path: str
) -> None:
    server, _ = keyed
    answer = _preflight(server, path, APP)

    assert answer.status_code == 200, answer.text
    assert answer.headers["access-control-allow-origin"] == APP
    assert answer.headers["access-control-allow-credentials"] == "true"
    assert "POST" in answer.headers["access-control-allow-methods"]
    allowed = answer.headers["access-control-allow-headers"].lower()
    assert {"authorization", "content-type", "x-api-key"} <= {h.strip() for h in allowed.split(",")}


@pytest.mark.parametrize("path", PATHS)
def test_another_origins_preflight_is_refused_without_cors_headers(
    keyed: tuple[Server, str], path: str
) -> None:
    server, _ = keyed
    answer = _preflight(server, path, OTHER)

    assert answer.status_code == 403 and error_code(answer) == "origin_denied"
    assert "HANSA_CORS_ORIGINS" in answer.json()["error"]["message"]
    assert not _cors(answer)


def test_a_listed_page_reads_answers_and_refusals_with_credentials(
    keyed: tuple[Server, str],
) -> None:
    server, key = keyed
    with server.client() as c:
        refused = c.get("/api/me", headers={"Origin": APP})
        me = c.get("/api/me", headers={"Origin": APP, **bearer(key)})
        made = c.post(
            "/v1/chat/completions",
            headers={"Origin": "https://app.example.com", **bearer(key)},
            json={"model": "chief", "messages": [{"role": "user", "content": "Hi"}]},
        )
        other = c.get("/api/me", headers={"Origin": OTHER, **bearer(key)})

    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == APP
    assert me.status_code == 200 and me.headers["access-control-allow-origin"] == APP
    assert me.headers["access-control-allow-credentials"] == "true"
    assert made.status_code == 200, made.text
    assert made.headers["access-control-allow-origin"] == "https://app.example.com"
    exposed = made.headers["access-control-expose-headers"].lower()
    assert "x-hansa-conversation-id" in exposed and "x-request-id" in exposed
    assert other.status_code == 200, "a bearer key is no browser's: the server answers"
    assert not _cors(other), "but no page of that origin may read it"


def test_local_mode_takes_a_listed_origins_writes_and_refuses_others(local: Server) -> None:
    with local.client() as c:
        listed = c.post("/api/conversations", json={}, headers={"Origin": APP})
        cross = c.post("/api/conversations", json={}, headers={"Origin": OTHER})
        preflight = _preflight(local, "/ag-ui/chief", APP)

    assert listed.status_code == 201, listed.text
    assert listed.headers["access-control-allow-origin"] == APP
    assert cross.status_code == 403 and error_code(cross) == "origin_denied"
    assert "access-control-allow-origin" not in cross.headers
    assert preflight.status_code == 200


def test_without_the_setting_a_preflight_says_what_to_set(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        answer = _preflight(server, "/v1/chat/completions", APP)
        with server.client() as c:
            cross = c.post("/api/conversations", json={}, headers={"Origin": APP})

    assert answer.status_code == 403 and error_code(answer) == "origin_denied"
    assert "HANSA_CORS_ORIGINS" in answer.json()["error"]["message"]
    assert not _cors(answer)
    assert cross.status_code == 403, "local mode's Origin check is unchanged"


@pytest.mark.parametrize("value", ["*", "http://app.example/path", "localhost:3000"])
def test_serve_refuses_an_origin_that_is_not_one(tmp_path: Path, value: str) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "hansa", "serve", "--port", str(free_port()), "--model"]
        + ["scripted", "--database-url", f"sqlite:///{tmp_path / 'h.db'}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HANSA_CORS_ORIGINS": value},
    )

    assert refused.returncode != 0
    assert "HANSA_CORS_ORIGINS" in refused.stdout + refused.stderr
