"""Model call records (seed 001 token tracking)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import usage as models
from hansa.api.models.base import stated
from hansa.store import llm_calls

router = APIRouter(tags=["usage"])


@router.get("/api/llm-calls")
async def list_llm_calls(
    services: ServicesDep,
    tenant: TenantDep,
    conversationId: str | None = None,  # noqa: N803 - query names of API.md
    runId: str | None = None,  # noqa: N803
) -> list[models.LlmCallOut]:
    """One row per model call."""
    calls = await services.db.read(
        llm_calls.list_for, tenant, conversation_id=conversationId, run_id=runId
    )
    return [models.LlmCallOut.of(c) for c in calls]


@router.get("/api/usage", operation_id="getUsage")
async def usage_summary(
    services: ServicesDep,
    tenant: TenantDep,
    conversationId: str | None = None,  # noqa: N803 - query names of API.md
    runId: str | None = None,  # noqa: N803
    since: Annotated[
        str | None, Query(json_schema_extra=stated(type="string", format="date-time", minLength=1))
    ] = None,
) -> models.Usage:
    """Tokens and cost of the tenant's model calls: totals, per agent, per run (the 20 with
    most tokens), per model; summed in SQL. A time without a zone is UTC."""
    after = _time("since", since)
    return await services.db.read(
        llm_calls.usage_of, tenant, conversation_id=conversationId, run_id=runId, since=after
    )


def _time(field: str, raw: str | None) -> datetime | None:
    """An ISO 8601 time (UTC when it names no zone); anything else, a number too, is 422."""
    if raw is None:
        return None
    try:
        when = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise errors.InvalidInput(
            f"{field}: {raw!r} is not an ISO 8601 time", details={"field": field}
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
