"""Reading runs: the tenant's runs page by page, and a run's log (a read model over events)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import runs as models
from hansa.api.models.base import stated
from hansa.api.routes.stream import MAX_SEQ
from hansa.domain import run, run_log
from hansa.store import run_logs

router = APIRouter()

_E = TypeVar("_E", bound=StrEnum)


def _choice(field: str, value: str | None, allowed: type[_E]) -> _E | None:
    if value is None:
        return None
    try:
        return allowed(value)
    except ValueError:
        names = ", ".join(m.value for m in allowed)
        raise errors.InvalidInput(
            f"{field}: {value!r} is not one of {names}", details={"field": field}
        ) from None


def _page(field: str, value: int | None, default: int, most: int) -> int:
    if value is None:
        return default
    if not 1 <= value <= most:
        raise errors.InvalidInput(
            f"{field}: between 1 and {most}, not {value}", details={"field": field}
        )
    return value


def _one_of(allowed: type[StrEnum]) -> Any:
    return stated(type="string", enum=[m.value for m in allowed])


_RUNS_LIMIT = stated(type="integer", minimum=1, maximum=run_logs.RUNS_PAGE_MAX)
_LOG_LIMIT = stated(type="integer", minimum=1, maximum=run_logs.LOG_PAGE_MAX)
"""Checked by ``_choice`` and ``_page`` (422 ``invalid_input``); stated for the description."""


@router.get("/api/runs", tags=["runs"])
async def list_runs(
    services: ServicesDep,
    tenant: TenantDep,
    conversationId: str | None = None,  # noqa: N803 - query names of API.md
    status: Annotated[str | None, Query(json_schema_extra=_one_of(run.RunStatus))] = None,
    limit: Annotated[int | None, Query(json_schema_extra=_RUNS_LIMIT)] = None,
    before: str | None = None,
) -> list[models.RunSummary]:
    """The tenant's runs, newest first, as run cards without their tasks; ``before`` (the
    last run id of the previous page) pages on."""
    runs = await services.db.read(
        run_logs.list_runs,
        tenant,
        conversation_id=conversationId,
        status=_choice("status", status, run.RunStatus),
        before=before,
        limit=_page("limit", limit, run_logs.RUNS_PAGE, run_logs.RUNS_PAGE_MAX),
    )
    return [models.RunSummary.of(r) for r in runs]


@router.get(
    "/api/runs/{run_id}/logs",
    tags=["runs"],
    operation_id="listRunLogs",
)
async def run_log_entries(
    run_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    level: Annotated[str | None, Query(json_schema_extra=_one_of(run_log.Level))] = None,
    nodeId: str | None = None,  # noqa: N803
    after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
    limit: Annotated[int | None, Query(json_schema_extra=_LOG_LIMIT)] = None,
) -> list[models.LogEntry]:
    """The run's events in order as log entries ``{seq, at, level, type, taskId, nodeId,
    agentId, message, data}``; ``level`` is a minimum, ``after`` a seq cursor."""
    entries = await services.db.read(
        run_logs.log_of_run,
        tenant,
        run_id,
        minimum=_choice("level", level, run_log.Level) or run_log.Level.DEBUG,
        node_id=nodeId,
        after=after,
        limit=_page("limit", limit, run_logs.LOG_PAGE, run_logs.LOG_PAGE_MAX),
    )
    return entries
