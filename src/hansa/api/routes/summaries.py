"""A conversation's rolling summary, version by version (seed 002 §5; decision 0015): every
version is kept for audit, newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from hansa.api.deps import ServicesDep, TenantDep
from hansa.domain.summary import ConversationSummary
from hansa.store import summaries

router = APIRouter(prefix="/api/conversations", tags=["conversations"])


@router.get("/{conversation_id}/summaries")
async def list_summaries(
    conversation_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    limit: Annotated[int, Query(ge=1, le=summaries.PAGE_MAX)] = summaries.PAGE,
    before: Annotated[int | None, Query(ge=1, le=summaries.MAX_VERSION)] = None,
) -> list[ConversationSummary]:
    """The conversation's summary versions, newest first; ``before`` (the last version of
    the previous page) pages on. 404 for another tenant's conversation."""
    return await services.db.read(summaries.page, tenant, conversation_id, before, limit)


@router.get("/{conversation_id}/summaries/{version}")
async def get_summary(
    conversation_id: str,
    version: Annotated[int, Path(ge=1, le=summaries.MAX_VERSION)],
    services: ServicesDep,
    tenant: TenantDep,
) -> ConversationSummary:
    """One version of the conversation's summary; 404 for an unknown version or another
    tenant's conversation."""
    return await services.db.read(summaries.get, tenant, conversation_id, version)
