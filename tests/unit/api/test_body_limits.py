import json
import time
from typing import Any

import pytest

from hansa.api.errors import BodyLimit, json_problem


def _nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def _code(body: bytes, max_depth: int = 32) -> str | None:
    refused = json_problem(body, max_depth)
    return None if refused is None else refused.code


@pytest.mark.parametrize("depth", [0, 1, 31, 32, 33, 100, 500])
def test_json_may_nest_up_to_the_limit(depth: int) -> None:
    body = json.dumps(_nested(depth)).encode()
    assert _code(body) == (None if depth <= 32 else "json_too_deep")


def test_brackets_in_strings_do_not_count_and_siblings_do_not_add_up() -> None:
    tricky = {"a": '[[[{{{"\\', "b": "]]]" * 50, "c": [[1]] * 200, "d": ['\\"[' * 40]}
    assert _code(json.dumps(tricky).encode()) is None
    assert _code(json.dumps({"s": "[" * 40, "deep": _nested(33)}).encode()) == "json_too_deep"
    assert _code(json.dumps(_nested(20, leaf=_nested(13))).encode()) == "json_too_deep"


def test_nul_characters_are_refused_wherever_they_are_escaped() -> None:
    assert _code(json.dumps({"content": "a\u0000b"}).encode()) == "nul_character"
    assert _code(json.dumps({"a\u0000": 1}).encode()) == "nul_character"
    assert _code(b'{"content": "a\\\\\\u0000"}') == "nul_character"  # \\ then \u0000
    assert _code(b'{"content": "a\\\\u0000"}') is None, "a quoted backslash, then text"
    assert _code(b'{"content": "a\x00"}') == "nul_character"


def test_brackets_that_can_never_balance_are_malformed() -> None:
    assert _code(b"[" * 30 + b"]" * 31 + b"[" * 10) == "malformed_json"
    assert _code(b"[" * 40) == "json_too_deep"


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 500_000 + b"]" * 500_000,
        b"[[]" * 330_000,
        b"[]" * 500_000,
        b"[}" * 500_000,
        b'"' + b'\\"' * 500_000,
        b'"a"' * 340_000,
        b"\\" * 1_000_000,
        b'"' + b"\\\\u0000" * 130_000 + b'"',
    ],
    ids=["deep", "stairs", "pairs", "mismatched", "open quote", "quotes", "backslashes", "nuls"],
)
def test_checking_a_mebibyte_stays_linear_whatever_it_holds(body: bytes) -> None:
    # a bound on complexity, not a speed target: each check runs at C speed, once over the
    # body (about 10 ms here); a check that went back over the body per character would
    # take minutes, so a bound 100 times the expected time fails it and not a busy machine
    started = time.perf_counter()
    json_problem(body, 32)
    assert time.perf_counter() - started < 1.0


async def _call(
    path: str, body: bytes, content_type: bytes | None = b"application/json", query: bytes = b""
) -> tuple[int, dict[str, Any], bool]:
    handled = False

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal handled
        while (await receive()).get("more_body"):
            pass
        handled = True  # a handler would run now, with the whole body
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    chunks = [body[i : i + 1000] for i in range(0, len(body), 1000)] or [b""]
    queue = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [] if content_type is None else [(b"content-type", content_type)]
    scope = {"type": "http", "path": path, "query_string": query, "headers": headers}
    await BodyLimit(app, max_bytes=1 << 20, max_depth=32)(scope, receive, send)
    answer = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(answer), handled


@pytest.mark.anyio
async def test_the_body_limit_refuses_before_any_handler_runs() -> None:
    deep = json.dumps({"parameters": _nested(500)}).encode()
    status, answer, handled = await _call("/api/runs", deep)
    assert (status, answer["error"]["code"], handled) == (400, "json_too_deep", False)
    status, answer, handled = await _call("/api/runs", deep, content_type=None)
    assert (status, handled) == (400, False), "FastAPI reads a body without a type as JSON"
    status, _, handled = await _call("/upload", deep, content_type=b"text/plain")
    assert (status, handled) == (200, True), "only JSON is checked"
    status, answer, handled = await _call("/api/runs", b'{"title": "a\\u0000"}')
    assert (status, answer["error"]["code"], handled) == (400, "nul_character", False)
    status, answer, handled = await _call("/api/x", b"", query=b"after=%00")
    assert (status, answer["error"]["code"], handled) == (400, "nul_character", False)
    status, answer, handled = await _call("/api/x\x00y", b"")
    assert (status, answer["error"]["code"], handled) == (400, "nul_character", False)
    status, _, handled = await _call("/api/runs", json.dumps(_nested(32)).encode())
    assert (status, handled) == (200, True)
