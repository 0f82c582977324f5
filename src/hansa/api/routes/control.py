"""Control as events (seed 001): ``stream.pause|resume|preempt|cancel|handoff`` in one route,
mapped onto the same operations as their own routes."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import ConfigDict, Field, model_validator

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import conversations as models
from hansa.api.models.base import answers
from hansa.domain.base import Wire
from hansa.engine import runs
from hansa.engine.handoffs import service
from hansa.engine.runtime.services import Services

router = APIRouter(prefix="/api", tags=["control"])

ControlEvent = Literal[
    "stream.pause", "stream.resume", "stream.preempt", "stream.cancel", "stream.handoff"
]
_NEEDS: dict[str, str] = {
    "stream.pause": "runId",
    "stream.resume": "runId",
    "stream.cancel": "runId",
    "stream.preempt": "taskId",
    "stream.handoff": "conversationId",
}


def _needs_in_schema(schema: dict[str, Any]) -> None:
    """State ``_NEEDS`` in the description: each event requires its target, not null."""
    schema["allOf"] = [
        {
            "if": {"properties": {"event": {"const": event}}},
            "then": {"required": [field], "properties": {field: {"type": "string"}}},
        }
        for event, field in _NEEDS.items()
    ]


class Control(Wire):
    """``POST /api/control``: one control event and what it acts on."""

    model_config = ConfigDict(json_schema_extra=_needs_in_schema)

    event: ControlEvent
    run_id: str | None = Field(default=None, max_length=36)
    task_id: str | None = Field(default=None, max_length=36)
    conversation_id: str | None = Field(default=None, max_length=36)
    reason: str = Field(default="the user asked for a person", min_length=1, max_length=500)

    @model_validator(mode="after")
    def _target(self) -> Control:
        needed = _NEEDS[self.event]
        given = {"runId": self.run_id, "taskId": self.task_id}.get(needed, self.conversation_id)
        if given is None:
            raise ValueError(f"{self.event} needs {needed}")
        return self


async def apply(services: Services, tenant: str, body: Control) -> models.Controlled:
    """Carry out one control event; the answer says what it acted on and its status now."""
    match body.event:
        case "stream.pause" | "stream.resume" | "stream.cancel":
            assert body.run_id is not None
            step = {
                "stream.pause": runs.pause,
                "stream.resume": runs.resume,
                "stream.cancel": runs.cancel,
            }[body.event]
            await step(services, tenant, body.run_id)
            shown = await runs.view(services, tenant, body.run_id)
            return models.RunControlled(
                event=body.event, run_id=body.run_id, status=shown.current.status
            )
        case "stream.preempt":
            assert body.task_id is not None
            task = await runs.preempt(services, tenant, body.task_id)
            return models.TaskControlled(event=body.event, task_id=task.id, status=task.status)
        case "stream.handoff":
            assert body.conversation_id is not None
            opened, _ = await service.request(
                services, tenant, body.conversation_id, service.Ask(reason=body.reason)
            )
            return models.HandoffControlled(
                event=body.event, handoff_id=opened.id, status=opened.status
            )
    raise errors.InvalidInput(f"unknown control event {body.event}")


@router.post(
    "/control",
    operation_id="sendControlEvent",
    responses=answers(None, 404, 409),
)
async def control(body: Control, services: ServicesDep, tenant: TenantDep) -> models.Controlled:
    """Pause, resume or cancel a run, preempt a task, hand a conversation to a person."""
    return await apply(services, tenant, body)
