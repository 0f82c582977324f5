"""What the provider adapters share: tool names the wire accepts, arguments parsed, and when
an error answer says to try again."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from hansa import errors
from hansa.models.base import ToolDefinition


def retry_after(exc: Any) -> float | None:
    """The seconds an SDK's status error's ``Retry-After`` header asks to wait (a number of
    seconds; an HTTP date or no header: None)."""
    try:
        value = exc.response.headers.get("retry-after")
        return max(0.0, float(value)) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


_NOT_ON_WIRE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_WIRE_NAME = 64


def _encoded(name: str) -> str:
    return _NOT_ON_WIRE.sub("_", name)[:_MAX_WIRE_NAME]


class ToolNames:
    """Tool names as OpenAI and Anthropic accept them (``[A-Za-z0-9_-]{1,64}``), and back.

    Task names such as ``webhook.call`` are sent as ``webhook_call``; a call of
    ``webhook_call`` comes back as ``webhook.call``. Two tools that would share a
    name on the wire are refused.
    """

    def __init__(self, tools: Iterable[ToolDefinition]) -> None:
        self._wire: dict[str, str] = {}
        self._name: dict[str, str] = {}
        for tool in tools:
            wire = _encoded(tool.name)
            if wire in self._name:
                raise errors.ConfigError(
                    f"the tools {self._name[wire]!r} and {tool.name!r} share the name {wire!r}"
                    " a model provider sees; rename one"
                )
            self._wire[tool.name] = wire
            self._name[wire] = tool.name

    def wire(self, name: str) -> str:
        """``name`` as sent to the provider (also for tools not offered in this call)."""
        return self._wire.get(name) or _encoded(name)

    def name(self, wire: str) -> str:
        """The tool's own name for ``wire``; an unknown name is kept as the model said it."""
        return self._name.get(wire, wire)


def parsed_arguments(raw: str, tool: str) -> dict[str, Any]:
    """A tool call's arguments sent as JSON text, as a dict; empty text is no arguments.

    Raises:
        errors.ProviderError: The text is not a JSON object.
    """
    if not raw.strip():
        return {}
    try:
        arguments = json.loads(raw)
    except ValueError as exc:
        raise errors.ProviderError(
            f"the model's arguments for the tool {tool!r} are not JSON: {raw[:200]!r}"
        ) from exc
    if not isinstance(arguments, dict):
        raise errors.ProviderError(
            f"the model's arguments for the tool {tool!r} are not a JSON object: {raw[:200]!r}"
        )
    return arguments
