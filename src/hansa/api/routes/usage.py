"""Model call records (seed 001 token tracking)."""

from __future__ import annotations

from datetime import UTC, datetime
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


@router.get("/api/usage")
async def usage_summary(
    services: ServicesDep,
    tenant: TenantDep,
    conversationId: str | None = None,  # noqa: N803 - query names of API.md
    runId: str | None = None,  # noqa: N803
    since: datetime | None = None,
) -> dict[str, Any]:
    """Tokens and cost of the tenant's model calls: totals, per agent, per run (the 20 with
    most tokens), per model; summed in SQL. A time without a zone is UTC."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    found = await services.db.read(
        llm_calls.usage_of, tenant, conversation_id=conversationId, run_id=runId, since=since
    )
    return found.model_dump(mode="json", by_alias=True)
