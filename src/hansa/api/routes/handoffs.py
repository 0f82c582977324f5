"""Human handoff (seed 001): the queue, a person accepting, writing, resolving, returning."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import Field

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import conversations as models
from hansa.api.models.base import answers
from hansa.domain import handoff
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


@router.post(
    "/conversations/{conversation_id}/handoff",
    status_code=201,
    responses={
        **answers(None, 409),
        201: {"description": "A new handoff"},
        **answers(models.HandoffOut, description="The open handoff: a person has it already"),
    },
)
async def request_handoff(
    conversation_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    response: Response,
    body: HandoffAsk | None = None,
) -> models.HandoffOut:
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
    return models.HandoffOut.of(opened)


@router.get("/handoffs")
async def list_handoffs(
    services: ServicesDep,
    tenant: TenantDep,
    status: handoff.Status | None = None,
    priority: handoff.Priority | None = None,
) -> list[models.HandoffOut]:
    """The queue: by priority (urgent first), then age (oldest first)."""
    found = await services.db.read(
        handoffs.queue, tenant, status.value if status else None, priority
    )
    return [models.HandoffOut.of(h) for h in found]


@router.get("/handoffs/{handoff_id}")
async def get_handoff(
    handoff_id: str, services: ServicesDep, tenant: TenantDep
) -> models.HandoffOut:
    """One handoff, with its snapshot."""
    return models.HandoffOut.of(await services.db.read(handoffs.get, tenant, handoff_id))


@router.post(
    "/handoffs/{handoff_id}/accept",
    operation_id="acceptHandoff",
    responses=answers(None, 409),
)
async def accept(
    handoff_id: str, body: Accept, services: ServicesDep, tenant: TenantDep
) -> models.HandoffOut:
    """A person takes the conversation (``agent_active``)."""
    return models.HandoffOut.of(await service.accept(services, tenant, handoff_id, body.assignee))


@router.post(
    "/handoffs/{handoff_id}/messages",
    status_code=201,
    operation_id="postHandoffMessage",
    responses=answers(None, 409),
)
async def human_message(
    handoff_id: str, body: HumanMessage, services: ServicesDep, tenant: TenantDep
) -> models.Message:
    """The person writes in the conversation (author ``human``)."""
    said = await service.say(services, tenant, handoff_id, body.content)
    return said


@router.post(
    "/handoffs/{handoff_id}/resolve",
    operation_id="resolveHandoff",
    responses=answers(None, 409),
)
async def resolve(handoff_id: str, services: ServicesDep, tenant: TenantDep) -> models.HandoffOut:
    """The matter is closed (``resolved``)."""
    return models.HandoffOut.of(await service.resolve(services, tenant, handoff_id))


@router.post(
    "/handoffs/{handoff_id}/return",
    operation_id="returnHandoff",
    responses=answers(None, 409),
)
async def give_back(handoff_id: str, services: ServicesDep, tenant: TenantDep) -> models.HandoffOut:
    """The assistants take over again (``idle``); runs the handoff paused resume."""
    return models.HandoffOut.of(await service.give_back(services, tenant, handoff_id))
