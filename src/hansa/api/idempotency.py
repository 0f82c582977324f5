"""``Idempotency-Key`` on POSTs: same key and same body -> the same response, once.

The same key with a different body is refused (422); a second request while the
first is still being answered gets 409. Responses of 5xx and 429, and requests that
raised, are not kept, so a retry after a server failure or a limit runs again. A key
whose request never answered (its process died) is free again after
``idempotency_abandoned_seconds``; answers are kept ``idempotency_ttl_seconds``, and
keys older than that are swept now and then.
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import timedelta
from typing import Any

import anyio
from sqlalchemy.exc import IntegrityError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hansa.api.errors import error_body
from hansa.domain.base import utcnow
from hansa.store import idempotency
from hansa.store.db import DEFAULT_TENANT_ID

MAX_KEY_LENGTH = 200
_SWEEPS_PER_TTL = 24
"""How often, per time to live, expired keys are swept (hourly for a day's)."""


class IdempotencyKeys:
    """Pure ASGI middleware; sits inside the body limit."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._next_sweep = 0.0
        """When (``time.monotonic``) this process next sweeps expired keys."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ())) if scope["type"] == "http" else {}
        raw_key = headers.get(b"idempotency-key")
        if scope["type"] != "http" or scope["method"] != "POST" or raw_key is None:
            await self.app(scope, receive, send)
            return
        key = raw_key.decode("latin-1").strip()
        if not key or len(key) > MAX_KEY_LENGTH or "\x00" in key:
            await _json(
                send,
                422,
                error_body(
                    "invalid_idempotency_key",
                    f"Idempotency-Key must be 1–{MAX_KEY_LENGTH} characters",
                ),
            )
            return
        body = await _read(receive)
        principal = scope.get("state", {}).get("principal")  # set by api/guard.py
        tenant = principal.tenant_id if principal is not None else DEFAULT_TENANT_ID
        who = principal.id.encode() if principal is not None else b""  # replays to its caller
        digest = hashlib.sha256(
            b"\n".join([scope["path"].encode(), scope.get("query_string", b""), body, who])
        ).hexdigest()
        services = scope["app"].state.services
        db, settings = services.db, services.settings
        now = utcnow()
        ages = idempotency.Ages(
            abandoned_before=now - timedelta(seconds=settings.idempotency_abandoned_seconds),
            expired_before=now - timedelta(seconds=settings.idempotency_ttl_seconds),
        )
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + settings.idempotency_ttl_seconds / _SWEEPS_PER_TTL
            await db.write(lambda conn: idempotency.sweep(conn, ages.expired_before))
        try:
            earlier = await db.write(
                lambda conn: idempotency.reserve(conn, tenant, key, digest, now, ages)
            )
        except IntegrityError:  # a concurrent request reserved it between our read and insert
            earlier = idempotency.Stored(digest, 0, None)
        if earlier is not None:
            await _replay(send, earlier, digest)
            return
        try:
            status, out_headers, chunks = await _capture(self.app, scope, body)
        except BaseException:  # the error handler answers; the key must not stay reserved
            with anyio.CancelScope(shield=True):
                await db.write(lambda conn: idempotency.release(conn, tenant, key))
            raise
        payload = b"".join(chunks)
        if status >= 500 or status == 429:
            await db.write(lambda conn: idempotency.release(conn, tenant, key))
        else:
            text = payload.decode("utf-8", "replace")
            await db.write(lambda conn: idempotency.complete(conn, tenant, key, status, text))
        await send({"type": "http.response.start", "status": status, "headers": out_headers})
        await send({"type": "http.response.body", "body": payload})


async def _read(receive: Receive) -> bytes:
    parts: list[bytes] = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


async def _capture(app: ASGIApp, scope: Scope, body: bytes) -> tuple[int, list[Any], list[bytes]]:
    sent = False
    status = 500
    headers: list[Any] = []
    chunks: list[bytes] = []

    async def replay_receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def collect(message: Message) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, replay_receive, collect)
    return status, headers, chunks


async def _replay(send: Send, earlier: idempotency.Stored, digest: str) -> None:
    if earlier.request_hash != digest:
        await _json(
            send,
            422,
            error_body(
                "idempotency_key_reused", "this Idempotency-Key was used with a different request"
            ),
        )
    elif earlier.status_code == 0:
        await _json(
            send,
            409,
            error_body(
                "idempotency_key_in_progress",
                "a request with this Idempotency-Key is still running",
            ),
        )
    else:
        await send(
            {
                "type": "http.response.start",
                "status": earlier.status_code,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"idempotent-replayed", b"true"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": (earlier.response or "").encode()})


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
