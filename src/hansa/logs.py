"""Logs: one line per record, readable by default or JSON, carrying the ids of the work.

The ids of what a line is about (the HTTP request, the job, its turn, run and
conversation) live in one context variable: the API's request middleware and the
worker's job wrapper bind them, and every line logged inside inherits them, in the
tasks it starts too. ``configure`` (called by ``hansa serve`` and ``hansa worker``)
installs one handler on the root logger with the chosen formatter.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal

Format = Literal["text", "json"]
"""``text``: a readable line; ``json``: one JSON object per line."""

_ids: ContextVar[Mapping[str, str]] = ContextVar("hansa_log_ids", default=MappingProxyType({}))

_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
"""Attributes every record has; any other one came from ``extra=`` and is logged as a field.
uvicorn's ``color_message`` (its message again, with terminal colour codes) is not one."""


def ids() -> Mapping[str, str]:
    """The ids bound in the current context."""
    return _ids.get()


@contextmanager
def bound(**new: str | None) -> Iterator[None]:
    """Add ids (``request_id``, ``turn_id``…) to every line logged inside; ``None`` unbinds."""
    merged = {**_ids.get(), **new}
    token = _ids.set({k: v for k, v in merged.items() if v is not None})
    try:
        yield
    finally:
        _ids.reset(token)


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``message``, the bound ids,
    the record's ``extra`` fields and, for an exception, ``exc``."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(_ids.get())
        line.update(_fields(record))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``2025-01-02 03:04:05,678 INFO hansa.access: GET /healthz 200 0.4 ms request_id=…``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The record as a readable line, the bound ids after the message."""
        bound_ids = _ids.get()
        text = super().format(record)
        if not bound_ids:
            return text
        first, newline, rest = text.partition("\n")  # keep ids on the message's own line
        tail = " ".join(f"{k}={v}" for k, v in bound_ids.items())
        return f"{first} {tail}{newline}{rest}"


def formatter(fmt: Format) -> logging.Formatter:
    """The formatter for ``fmt``."""
    return JsonFormatter() if fmt == "json" else TextFormatter()


QUIET = ("httpx", "httpcore", "openai", "anthropic")
"""Libraries whose info lines name whole outbound URLs, query strings and all (where a
connector's key may sit): their warnings and errors only."""


def configure(fmt: Format = "text", level: str = "info") -> None:
    """Send every log line to stderr in ``fmt``, from ``level`` up (uvicorn's too)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uvicorn_log = logging.getLogger(name)
        uvicorn_log.handlers = []
        uvicorn_log.propagate = True
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
