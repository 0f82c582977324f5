"""Log lines: readable or JSON, with the ids bound where they were logged."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Iterator

import pytest

from hansa import logs


def _record(msg: str, *args: object, exc: bool = False, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("hansa.test", logging.WARNING, __file__, 1, msg, args, None)
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            record.exc_info = sys.exc_info()
    record.__dict__.update(extra)
    return record


def test_json_has_the_message_the_bound_ids_and_the_extra_fields() -> None:
    with logs.bound(request_id="r1", turn_id="t1"):
        line = logs.JsonFormatter().format(_record("GET %s %d", "/x", 200, status=200))
    out = json.loads(line)
    assert out["message"] == "GET /x 200" and out["level"] == "warning"
    assert out["logger"] == "hansa.test" and out["ts"].endswith("+00:00")
    assert (out["request_id"], out["turn_id"], out["status"]) == ("r1", "t1", 200)
    assert "\n" not in line


def test_json_carries_an_exception_in_one_line() -> None:
    line = logs.JsonFormatter().format(_record("failed", exc=True))
    assert "\n" not in line
    assert "ValueError: boom" in json.loads(line)["exc"]


def test_text_puts_the_ids_on_the_message_line() -> None:
    fmt = logs.TextFormatter()
    assert fmt.format(_record("plain")).endswith("WARNING hansa.test: plain")
    with logs.bound(request_id="r1"):
        text = fmt.format(_record("failed", exc=True))
    first, *rest = text.splitlines()
    assert first.endswith("hansa.test: failed request_id=r1")
    assert rest and "ValueError: boom" in rest[-1]


def test_binding_nests_unbinds_with_none_and_ends_with_its_block() -> None:
    with logs.bound(request_id="r1", job_id="j1"):
        with logs.bound(request_id=None, turn_id="t1"):
            assert dict(logs.ids()) == {"job_id": "j1", "turn_id": "t1"}
        assert dict(logs.ids()) == {"request_id": "r1", "job_id": "j1"}
    assert dict(logs.ids()) == {}


def test_tasks_inherit_the_ids_and_keep_their_own_to_themselves() -> None:
    async def job() -> dict[str, str]:
        with logs.bound(turn_id="t2"):
            await asyncio.sleep(0)
            return dict(logs.ids())

    async def main() -> tuple[dict[str, str], dict[str, str]]:
        with logs.bound(request_id="r1"):
            inner = await asyncio.create_task(job())
            return inner, dict(logs.ids())

    inner, outer = asyncio.run(main())
    assert inner == {"request_id": "r1", "turn_id": "t2"} and outer == {"request_id": "r1"}


@pytest.fixture
def _root_restored() -> Iterator[None]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    yield
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


@pytest.mark.usefixtures("_root_restored")
def test_configure_installs_one_handler_with_the_chosen_format() -> None:
    logs.configure("json", "warning")
    root = logging.getLogger()
    (handler,) = root.handlers
    assert isinstance(handler.formatter, logs.JsonFormatter)
    assert root.level == logging.WARNING
    assert logging.getLogger("uvicorn.error").propagate
