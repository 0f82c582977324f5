"""A run's log as a person reads it: a read model over the event log, not a second log.

Every event of a run becomes one :class:`LogEntry` with a derived :class:`Level` and a short
line of text (``GET /api/runs/{id}/logs``). Levels, lowest first:

- ``error``: a task or the run ``failed``, a task ``ambiguous``, an ``error`` event;
- ``info``: the other status changes of the run and its tasks (created, edited, moved),
  messages, operations on workspace entities, status chips;
- ``debug``: everything else: thinking, tool calls and results, text deltas, ``done``…
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from hansa.domain import event, secrets
from hansa.domain.base import Wire
from hansa.domain.run import RunStatus, TaskStatus


class Level(StrEnum):
    """How much an entry matters; ``?level=`` keeps entries at this level and above."""

    DEBUG = "debug"
    INFO = "info"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """``debug`` < ``info`` < ``error``."""
        return _RANK[self]


_RANK = {Level.DEBUG: 0, Level.INFO: 1, Level.ERROR: 2}

_ERROR_TYPES = frozenset({"run_status", "task_status", "error"})
_INFO_TYPES = frozenset(
    {"run_created", "task_created", "task_updated", "message", "operation", "status"}
)

TYPES_AT_LEAST: dict[Level, frozenset[str] | None] = {
    Level.DEBUG: None,
    Level.INFO: _ERROR_TYPES | _INFO_TYPES,
    Level.ERROR: _ERROR_TYPES,
}
"""The event types that may reach each level (None: every type); a store narrows its query
with them, then keeps the events :func:`level_of` puts at the level or above."""

_FAILED_RUN = frozenset({RunStatus.FAILED})
_FAILED_TASK = frozenset({TaskStatus.FAILED, TaskStatus.AMBIGUOUS})

MESSAGE_CHARS = 200
"""An entry's ``message`` is at most this long (cut with an ellipsis)."""


class LogEntry(Wire):
    """One event of a run, as its log shows it."""

    seq: int
    """The event's place in its conversation's log (the paging cursor, ``?after=``)."""
    at: datetime
    level: Level
    type: str
    """The event's type (``task_status``, ``thinking``, ``tool_call``…)."""
    task_id: str | None
    node_id: str | None
    """The graph node of the event's task; None for a plan's step or a run-wide event."""
    agent_id: str | None
    message: str
    """A short line: ``task analyze: in_progress → completed``, ``run completed``."""
    data: dict[str, Any]
    """The event's data as the event stream shows it (secrets masked)."""


def level_of(payload: event.Payload) -> Level:
    """The level an event's payload is logged at."""
    match payload:
        case event.ErrorData():
            return Level.ERROR
        case event.RunStatusData(status=status):
            return Level.ERROR if status in _FAILED_RUN else Level.INFO
        case event.TaskStatusData(status=status):
            return Level.ERROR if status in _FAILED_TASK else Level.INFO
        case _ if payload.type in _INFO_TYPES:
            return Level.INFO
        case _:
            return Level.DEBUG


def at_least(payload: event.Payload, minimum: Level) -> bool:
    """Whether the payload is logged at ``minimum`` or above."""
    return level_of(payload).rank >= minimum.rank


def message_of(payload: event.Payload, task_label: str | None = None) -> str:
    """The entry's line of text; ``task_label`` names the event's task (its node id, else
    its task type)."""
    task = f"task {task_label}" if task_label else "task"
    return _cut(secrets.mask_text(_line(payload, task)))


def _line(payload: event.Payload, task: str) -> str:
    match payload:
        case event.RunCreatedData(title=title, status=status):
            return f"run created ({status.value}): {title}"
        case event.RunStatusData(status=status, previous=previous):
            return f"run {status.value}" + (f" (was {previous.value})" if previous else "")
        case event.TaskCreatedData(summary=summary):
            return f"{task} created: {summary}"
        case event.TaskUpdatedData(changed=changed):
            return f"{task} edited: {', '.join(changed)}"
        case event.TaskStatusData(status=status, previous=previous, result=result):
            moved = f"{previous.value} → {status.value}" if previous else status.value
            return f"{task}: {moved}{_failure(result)}"
        case event.ThinkingData(summary=summary):
            return summary
        case event.ToolCallData(name=name):
            return f"tool_call {name}"
        case event.ToolResultData(name=name, ok=ok, error=error):
            return f"tool_result {name}: " + ("ok" if ok else error.code if error else "failed")
        case event.TextDeltaData(delta=delta):
            return delta
        case event.MessageData(author=author, content=content):
            return f"{author}: {content}"
        case event.StatusData(text=text):
            return text
        case event.OperationData(name=name):
            return name
        case event.ErrorData(code=code, message=message):
            return f"error {code}: {message}"
        case event.EntityPatchData(entity=entity, entity_id=entity_id):
            return f"{entity} {entity_id} changed"
        case event.DoneData(status=status):
            return f"done ({status})"
        case _:
            return payload.type


def _failure(result: dict[str, Any] | None) -> str:
    error = (result or {}).get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return f" ({code})" if isinstance(code, str) else ""


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def entry(e: event.Event, node_id: str | None, task_label: str | None) -> LogEntry:
    """The log entry of one event; ``node_id`` and ``task_label`` are its task's."""
    return LogEntry(
        seq=e.seq,
        at=e.created_at,
        level=level_of(e.payload),
        type=e.type,
        task_id=e.task_id,
        node_id=node_id,
        agent_id=e.agent_id,
        message=message_of(e.payload, task_label),
        data=e.to_wire()["data"],
    )
