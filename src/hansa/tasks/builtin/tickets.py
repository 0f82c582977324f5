"""Internal tickets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from hansa.tasks.base import Params, Result, TaskContext, TaskType
from hansa.tasks.registry import Register
from hansa.tasks.workspace import Workspace


class CreateTicket(Params):
    title: str = Field(min_length=1, max_length=200)
    description: str = ""
    priority: Literal["low", "normal", "high", "urgent"] = "normal"


async def _create(p: CreateTicket, ctx: TaskContext) -> Result:
    ws: Workspace = ctx.connector("workspace")
    ticket = await ws.create(
        "ticket",
        p.title,
        {"description": p.description, "priority": p.priority, "state": "open"},
        project_id=ctx.project_id,
        idempotency_key=ctx.idempotency_key,
    )
    await ctx.report("create", "ticket", p.title, "success", ticket.id, {"priority": p.priority})
    return {"ticketId": ticket.id, "title": p.title, "priority": p.priority}


async def _undo(p: CreateTicket, ctx: TaskContext) -> Result:
    ws: Workspace = ctx.connector("workspace")
    await ws.set_deleted(ctx.outputs["self"]["ticketId"], True)
    return {"ticketId": ctx.outputs["self"]["ticketId"], "deleted": True}


def _created(r: Mapping[str, Any]) -> str | None:
    return f"Ticket {r['ticketId']} created" if r.get("ticketId") else None


def register(add: Register) -> None:
    """Register create_ticket."""
    add(
        TaskType(
            "create_ticket",
            "Create an internal ticket.",
            CreateTicket,
            _create,
            "tickets",
            undo=_undo,
            describe=_created,
        )
    )
