"""Human handoff (seed 001): the queue, a person accepting, writing, resolving, returning."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import Field

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import conversations as models
from hansa.api.models.base import answers
from hansa.domain import handoff, secrets
from hansa.domain.base import Wire
from hansa.engine.handoffs import service
from hansa.store import handoffs

router = APIRouter(prefix="/api", tags=["handoffs"])


class HandoffAsk(Wire):
    """``POST /api/conversations/{id}/handoff``."""

    reason: str = Field(default="the user asked for a person", min_length=1, max_length=500)
    priority: handoff.Priority = "normal"
    metadata: dict[str, Any] = Field(default_factory=dict)


class Accept(Wire):
    """``POST /api/handoffs/{id}/accept``."""

    assignee: str = Field(min_length=1, max_length=200)


class HumanMessage(Wire):
    """``POST /api/handoffs/{id}/messages``."""

    content: str = Field(min_length=1, max_length=20_000)


def handoff_out(h: handoff.Handoff) -> dict[str, Any]:
    """A handoff as JSON (camelCase, as every model); the secrets of its snapshot (the plan
    in progress, the context) and metadata masked."""
    out: dict[str, Any] = h.model_dump(mode="json", by_alias=True)
    out["metadata"] = secrets.mask(out["metadata"])
    snapshot = out["snapshot"]  # its messages are the conversation's, shown as written
    for part in ("plan", "context"):
        if part in snapshot:
            snapshot[part] = secrets.mask(snapshot[part])
    return out


@router.post(
    "/conversations/{conversation_id}/handoff",
    status_code=201,
    response_model=None,
    responses={
        **answers(models.Handoff, 409, status=201, description="A new handoff"),
        **answers(models.Handoff, description="The open handoff: a person has it already"),
    },
)
async def request_handoff(
    conversation_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    response: Response,
    body: HandoffAsk | None = None,
) -> dict[str, Any]:
    """Hand the conversation to a person: 201 with the new handoff, or 200 with the open one
    when a person has it already."""
    ask = body or HandoffAsk()
    opened, new = await service.request(
        services,
        tenant,
        conversation_id,
        service.Ask(reason=ask.reason, priority=ask.priority, metadata=ask.metadata),
    )
    if not new:
        response.status_code = 200
    return handoff_out(opened)


@router.get("/handoffs", response_model=None, responses=answers(list[models.Handoff]))
async def list_handoffs(
    services: ServicesDep,
    tenant: TenantDep,
    status: handoff.Status | None = None,
    priority: handoff.Priority | None = None,
) -> list[dict[str, Any]]:
    """The queue: by priority (urgent first), then age (oldest first)."""
    found = await services.db.read(
        handoffs.queue, tenant, status.value if status else None, priority
    )
    return [handoff_out(h) for h in found]


@router.get("/handoffs/{handoff_id}", response_model=None, responses=answers(models.Handoff))
async def get_handoff(handoff_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """One handoff, with its snapshot."""
    return handoff_out(await services.db.read(handoffs.get, tenant, handoff_id))


@router.post(
    "/handoffs/{handoff_id}/accept",
    operation_id="acceptHandoff",
    response_model=None,
    responses=answers(models.Handoff, 409),
)
async def accept(
    handoff_id: str, body: Accept, services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
    """A person takes the conversation (``agent_active``)."""
    return handoff_out(await service.accept(services, tenant, handoff_id, body.assignee))


@router.post(
    "/handoffs/{handoff_id}/messages",
    status_code=201,
    operation_id="postHandoffMessage",
    response_model=None,
    responses=answers(models.Message, 409, status=201),
)
async def human_message(
    handoff_id: str, body: HumanMessage, services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
    """The person writes in the conversation (author ``human``)."""
    said = await service.say(services, tenant, handoff_id, body.content)
    return said.model_dump(mode="json", by_alias=True)


@router.post(
    "/handoffs/{handoff_id}/resolve",
    operation_id="resolveHandoff",
    response_model=None,
    responses=answers(models.Handoff, 409),
)
async def resolve(handoff_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """The matter is closed (``resolved``)."""
    return handoff_out(await service.resolve(services, tenant, handoff_id))


@router.post(
    "/handoffs/{handoff_id}/return",
    operation_id="returnHandoff",
    response_model=None,
    responses=answers(models.Handoff, 409),
)
async def give_back(handoff_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """The assistants take over again (``idle``); runs the handoff paused resume."""
    return handoff_out(await service.give_back(services, tenant, handoff_id))
