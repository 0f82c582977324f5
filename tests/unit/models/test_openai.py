from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from typing import IO

import httpx
import pytest

from hansa import errors
from hansa.models.base import (
    ChatMessage,
    ModelResponse,
    ModelSettings,
    RequestParams,
    StreamItem,
    TextDelta,
    Usage,
)
from hansa.models.local import gguf_path
from hansa.models.openai import OpenAIModel

MESSAGES = [
    ChatMessage("system", "You are a helpful assistant. Answer briefly."),
    ChatMessage("user", "Name three colours of the rainbow."),
]
SETTINGS = ModelSettings(temperature=0.0, max_tokens=48)
READY_DEADLINE_S = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_until_ready(url: str, server: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    deadline = time.monotonic() + READY_DEADLINE_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            pytest.fail(f"llama_cpp.server exited with {server.returncode}:\n{log.read().decode()}")
        try:
            if httpx.get(f"{url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)  # polling a subprocess's readiness; nothing to await
    log.seek(0)
    pytest.fail(f"llama_cpp.server not ready in {READY_DEADLINE_S} s:\n{log.read().decode()}")


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """A real llama_cpp.server serving SmolLM2 on a free port, as an OpenAI endpoint."""
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf_path()),
        "--model_alias",
        "smollm2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
    ]
    with tempfile.NamedTemporaryFile() as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}/v1"
            _wait_until_ready(url, server, log)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@pytest.fixture
async def model(server_url: str) -> AsyncIterator[OpenAIModel]:
    """An OpenAIModel pointed at the local server; no retries, so errors show at once."""
    model = OpenAIModel("smollm2", base_url=server_url, max_retries=0, timeout=60.0)
    try:
        yield model
    finally:
        await model.aclose()


@pytest.mark.slow
@pytest.mark.anyio
async def test_request_returns_text_and_usage(model: OpenAIModel) -> None:
    reply = await model.request(MESSAGES, SETTINGS, RequestParams())

    assert reply.text.strip()
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.model == "smollm2"


@pytest.mark.slow
@pytest.mark.anyio
async def test_stream_deltas_concatenate_to_the_final_text(model: OpenAIModel) -> None:
    items: list[StreamItem] = [
        item async for item in model.stream(MESSAGES, SETTINGS, RequestParams())
    ]

    *deltas, final = items
    assert deltas and all(isinstance(d, TextDelta) for d in deltas)
    assert isinstance(final, ModelResponse)
    assert final.text.strip()
    assert final.text == "".join(d.text for d in deltas if isinstance(d, TextDelta))
    # llama_cpp.server ignores stream_options.include_usage: the counts fall back to zero.
    assert final.usage == Usage()


@pytest.mark.slow
@pytest.mark.anyio
async def test_http_error_status_becomes_provider_http_error(model: OpenAIModel) -> None:
    # llama_cpp.server knows response_format "json_object" only, and fails on "json_schema".
    schema = {"type": "object", "properties": {"agent": {"type": "string"}}}

    with pytest.raises(errors.ProviderHTTPError) as info:
        await model.request(MESSAGES, SETTINGS, RequestParams(output_schema=schema))

    assert info.value.status == 500
    assert "json_schema" in info.value.body


@pytest.mark.anyio
async def test_closed_port_is_a_provider_error() -> None:
    model = OpenAIModel("smollm2", base_url=f"http://127.0.0.1:{_free_port()}/v1", max_retries=0)
    try:
        with pytest.raises(errors.ProviderError, match="cannot reach") as info:
            await model.request(MESSAGES, SETTINGS, RequestParams())
        with pytest.raises(errors.ProviderError, match="cannot reach"):
            async for _ in model.stream(MESSAGES, SETTINGS, RequestParams()):
                pytest.fail("no item expected")
    finally:
        await model.aclose()

    assert not isinstance(info.value, errors.ProviderHTTPError)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt-4o-mini", 0.15 + 0.60),
        ("gpt-4o", 2.50 + 10.00),
        ("gpt-4o-2024-08-06", 2.50 + 10.00),
        ("gpt-4.1-mini", 0.40 + 1.60),
        ("smollm2", 0.0),
    ],
)
def test_cost_of_a_million_tokens_each_way(name: str, expected: float) -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)

    assert OpenAIModel(name, api_key="k").cost_usd(usage) == pytest.approx(expected)
