"""Health and the agent roster."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hansa.api.deps import ServicesDep
from hansa.api.schemas import agent_out

router = APIRouter()


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The server answers."""
    return {"status": "ok"}


@router.get("/api/agents")
async def list_agents(services: ServicesDep) -> list[dict[str, Any]]:
    """The roster, Hans first."""
    return [agent_out(a) for a in services.roster]
