"""``GET /metrics``: the process's counters in Prometheus's text format.

Public, like ``/healthz``: it carries counts and timings labelled by status, job kind
and provider, nothing of any tenant (docs/security.md, "Metrics"). Not in the OpenAPI
description, which lists the tenant-scoped API.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from hansa.api.deps import ServicesDep
from hansa.engine import metrics as metrics_export
from hansa.store import queue_depth

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(services: ServicesDep) -> Response:
    """Turns, runs, task outcomes, jobs, model calls (tokens, cost), the queue's depth and
    the live streams."""
    depth = await services.db.read(queue_depth.depth)
    bus = services.bus
    body = services.metrics.render(depth, bus.live(), bus.followed())
    return Response(body, media_type=metrics_export.CONTENT_TYPE)
