"""The access log and request ids: the outermost middleware.

Each HTTP request gets an id (the caller's ``X-Request-ID`` when it is a short token,
else a new one), bound to every line logged while it is served and sent back in the
``X-Request-ID`` response header. When the response ends, one line goes to the
``hansa.access`` logger: method, path (never the query string: it may carry a token),
status and duration; the same request is counted in ``/metrics`` under its route's
template (``engine/metrics.py``). A WebSocket is logged when it closes, with status 101.

The status logged is the one the client got. A database outage raised where no exception
handler sees it (a middleware reading keys) is answered here, 503 like everywhere else
(``api/errors.unavailable``), without a traceback per request.
"""

from __future__ import annotations

import logging
import re
import time

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hansa import logs
from hansa.api.errors import outages, unavailable
from hansa.domain.base import new_id

log = logging.getLogger("hansa.access")

HEADER = "x-request-id"
_GIVEN = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class AccessLog:
    """Bind a request id, echo it in the response, log the request when it ends."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get(HEADER, "")
        request_id = given if _GIVEN.fullmatch(given) else new_id()
        status = 101 if scope["type"] == "websocket" else 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[HEADER] = request_id
            await send(message)

        with logs.bound(request_id=request_id):
            try:
                await self.app(scope, receive, send_with_id)
            except Exception as exc:
                started_answer = scope["type"] != "http" or status != 500
                answer = None if started_answer else unavailable(exc, outages(scope["app"]))
                if answer is None:
                    raise
                await answer(scope, receive, send_with_id)
            finally:
                ms = round((time.perf_counter() - started) * 1000, 1)
                method = scope.get("method", "WEBSOCKET")
                path = scope["path"]
                _count(scope, method, status, ms)
                log.info(
                    "%s %s %d %.1f ms",
                    method,
                    path,
                    status,
                    ms,
                    extra={"method": method, "path": path, "status": status, "duration_ms": ms},
                )


def _count(scope: Scope, method: str, status: int, ms: float) -> None:
    """Count the request in the app's metrics, under its route's template."""
    services = getattr(scope["app"].state, "services", None)
    if services is None:  # an app without the engine (a test's)
        return
    route = getattr(scope.get("route"), "path", None) or "unmatched"
    services.metrics.answered(method, route, status, ms / 1000)
