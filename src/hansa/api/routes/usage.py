"""Model call records (seed 001 token tracking)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.schemas import llm_call_out
from hansa.store import llm_calls

router = APIRouter()


@router.get("/api/llm-calls")
async def list_llm_calls(
    services: ServicesDep,
    tenant: TenantDep,
    conversationId: str | None = None,  # noqa: N803 - query names of API.md
    runId: str | None = None,  # noqa: N803
) -> list[dict[str, Any]]:
    """One row per model call."""
    calls = await services.db.read(
        llm_calls.list_for, tenant, conversation_id=conversationId, run_id=runId
    )
    return [llm_call_out(c) for c in calls]
