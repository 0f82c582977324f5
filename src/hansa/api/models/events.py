"""The events of the live streams, as OpenAPI schemas: one per event type.

An event on SSE (``data:``), on a WebSocket (a text frame) and in storage is the envelope
``{seq, type, conversationId, turnId, runId, taskId, agentId, createdAt, data}``; ``data`` is
the payload of ``domain/event.py`` without its ``type`` tag. ``schemas()`` gives, for each
payload class ``XxxData``, its data schema (``XxxData``) and its envelope (``XxxEvent``, with
``type`` fixed), ``Event`` (any of them, by ``type``), and the WebSocket's own frames.
"""

from __future__ import annotations

import typing
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import models_json_schema

from hansa.domain import event
from hansa.domain.base import Wire
from hansa.domain.handoff import Status as HandoffStatus
from hansa.domain.run import RunStatus, TaskStatus

REF = "#/components/schemas/{model}"


def payload_classes() -> list[type[BaseModel]]:
    """Every payload class of the event union, in its order."""
    union = typing.get_args(event.Payload)[0]
    return list(typing.get_args(union))


def event_type(cls: type[BaseModel]) -> str:
    """The ``type`` tag of a payload class."""
    tag: str = cls.model_fields["type"].default
    return tag


def envelope_name(cls: type[BaseModel]) -> str:
    """``TextDeltaData`` -> ``TextDeltaEvent``."""
    return cls.__name__.removesuffix("Data") + "Event"


class WebSocketMessage(Wire):
    """Client -> server: a message, taken as ``POST /api/conversations/{id}/messages``."""

    type: Literal["message"]
    content: str
    active_agent_id: str | None = None
    project_context: dict[str, Any] | None = None
    multitask_strategy: Literal["enqueue", "reject", "interrupt"] = "enqueue"


class WebSocketControlRequest(Wire):
    """Client -> server: a control event, taken as ``POST /api/control`` (``stream.handoff``
    acts on the socket's conversation when it names none)."""

    type: Literal[
        "stream.pause", "stream.resume", "stream.preempt", "stream.cancel", "stream.handoff"
    ]
    run_id: str | None = None
    task_id: str | None = None
    conversation_id: str | None = None
    reason: str | None = None


class WebSocketAccepted(Wire):
    """Server -> client: the message was stored and its turn started."""

    type: Literal["accepted"]
    message_id: str
    turn_id: str | None


class WebSocketControl(Wire):
    """Server -> client: a control event was carried out (as ``POST /api/control`` answers)."""

    type: Literal["control"]
    event: str
    status: RunStatus | TaskStatus | HandoffStatus
    run_id: str | None = None
    task_id: str | None = None
    handoff_id: str | None = None


class WebSocketErrorInfo(Wire):
    """Why a frame was refused."""

    code: str
    message: str
    retry_after: int | None = Field(default=None)
    """Seconds, for ``rate_limited``."""


class WebSocketError(Wire):
    """Server -> client: a frame was refused; the socket stays open."""

    type: Literal["error"]
    error: WebSocketErrorInfo


_FRAMES: list[type[BaseModel]] = [
    WebSocketMessage,
    WebSocketControlRequest,
    WebSocketAccepted,
    WebSocketControl,
    WebSocketError,
]


def _nullable(kind: str) -> dict[str, Any]:
    return {"anyOf": [{"type": kind}, {"type": "null"}]}


def _envelope(cls: type[BaseModel]) -> dict[str, Any]:
    tag = event_type(cls)
    return {
        "title": envelope_name(cls),
        "description": f"Event `{tag}`: {(cls.__doc__ or '').strip()}",
        "type": "object",
        "properties": {
            "seq": {"type": "integer", "description": "Per conversation, gap-free, from 1."},
            "type": {"type": "string", "const": tag},
            "conversationId": {"type": "string"},
            "turnId": _nullable("string"),
            "runId": _nullable("string"),
            "taskId": _nullable("string"),
            "agentId": _nullable("string"),
            "createdAt": {"type": "string", "format": "date-time"},
            "data": {"$ref": REF.format(model=cls.__name__)},
        },
        "required": [
            "seq",
            "type",
            "conversationId",
            "turnId",
            "runId",
            "taskId",
            "agentId",
            "createdAt",
            "data",
        ],
    }


def schemas() -> dict[str, dict[str, Any]]:
    """The components: each payload's data and envelope, ``Event``, the WebSocket frames
    and what they refer to (enums, nested models)."""
    payloads = payload_classes()
    _, top = models_json_schema(
        [(cls, "serialization") for cls in [*payloads, *_FRAMES]], ref_template=REF
    )
    out: dict[str, dict[str, Any]] = dict(top.get("$defs", {}))
    for cls in payloads:
        data = out[cls.__name__]
        data["properties"].pop("type", None)  # the tag is the envelope's
        data["required"] = [name for name in data.get("required", []) if name != "type"]
        if not data["required"]:
            del data["required"]
        out[envelope_name(cls)] = _envelope(cls)
    out["Event"] = {
        "title": "Event",
        "description": "Any event of a conversation's stream, told apart by `type`.",
        "oneOf": [{"$ref": REF.format(model=envelope_name(cls))} for cls in payloads],
        "discriminator": {
            "propertyName": "type",
            "mapping": {event_type(c): REF.format(model=envelope_name(c)) for c in payloads},
        },
    }
    return out


def stream_answer(*envelopes: str) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of an SSE route: ``text/event-stream`` whose ``data`` lines are the
    named event schemas (``Event``: any)."""
    refs = [{"$ref": REF.format(model=name)} for name in envelopes or ("Event",)]
    data = refs[0] if len(refs) == 1 else {"oneOf": refs}
    names = ", ".join(f"`{name}`" for name in envelopes or ("Event",))
    return {
        200: {
            "description": "Server-Sent Events, replayed from the cursor then followed live: "
            f"`id` the event's seq, `event` its type, `data` the event as JSON ({names}).",
            "content": {
                "text/event-stream": {
                    "schema": {
                        "type": "object",
                        "description": "One event of the stream (its lines `id`, `event`, "
                        "`data`); keep-alive comments carry none.",
                        "properties": {
                            "id": {"type": "string", "pattern": "^[0-9]+$"},
                            "event": {"type": "string"},
                            "data": {
                                "type": "string",
                                "contentMediaType": "application/json",
                                "contentSchema": data,
                            },
                        },
                        "required": ["id", "event", "data"],
                    }
                }
            },
        }
    }
