"""Limits this process keeps per caller: requests per minute, live event streams.

- ``RequestRate``: each key (a principal; without one, the client's address) may make
  ``rate_limit_per_minute`` requests to ``/api``, ``/ap``, ``/v1``, ``/ag-ui`` and ``/mcp``, in
  bursts of up to as many (a token bucket refilled at that rate). Local mode (no keys) is
  exempt: its only caller owns the machine. Past it: 429 ``rate_limited`` with ``Retry-After``.
- ``Subscribers``: live SSE and WebSocket streams per conversation and per tenant.
- ``Waits``: requests that wait for work (a turn, a task, a run's stream: ``waits_long``)
  each key may have open at once, ``max_waits_per_principal``; one more gets 429. The rate
  bounds how many a key starts, not how many it holds: each may stay open for minutes.

``install`` hangs one ``Limits`` off the app and adds the ``RateLimit`` and ``WaitCap``
middleware, which must sit inside ``api/guard.py`` (they read the principal the guard
found) and outside everything that reads a body. The counts are this process's: with several
API processes, each allows as much.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from hansa import errors
from hansa.api import errors as api_errors
from hansa.api.guard import KEYED
from hansa.settings import Settings

K = TypeVar("K", bound=Hashable)

SUBSCRIBER_RETRY_SECONDS = 10
"""The ``Retry-After`` of a stream refused because too many are open."""
WAIT_RETRY_SECONDS = 5
"""The ``Retry-After`` of a waiting request refused because its key has too many open."""
_MAX_BUCKETS = 10_000
"""The buckets kept at most: a new key past it forgets the least recently seen one (whose
next request starts with a full bucket: it can matter only with more than this many keys
active at once, each of which gets its own burst anyway)."""


class RequestRate:
    """A token bucket per key: ``per_minute`` requests, in bursts of up to as many."""

    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = _MAX_BUCKETS,
    ) -> None:
        self.per_minute = per_minute
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        """Key -> (tokens left, when they were counted), least recently seen first."""

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str) -> float:
        """Spend one request of ``key``'s: 0 if allowed, else the seconds until one is."""
        if self.per_minute <= 0:
            return 0.0
        now = self._clock()
        per_second = self.per_minute / 60
        counted = self._buckets.pop(key, None)
        tokens, then = counted or (float(self.per_minute), now)
        tokens = min(float(self.per_minute), tokens + (now - then) * per_second)
        if counted is None and len(self._buckets) >= self.max_keys:
            self._buckets.popitem(last=False)
        allowed = tokens >= 1
        self._buckets[key] = (tokens - 1 if allowed else tokens, now)
        return 0.0 if allowed else (1 - tokens) / per_second


@dataclass
class Slot:
    """One live stream, counted until ``release``."""

    _release: Callable[[], None] | None

    def release(self) -> None:
        """Stop counting this stream (again: nothing)."""
        if self._release is not None:
            self._release()
            self._release = None


class Subscribers:
    """Live SSE and WebSocket streams, per conversation and per tenant."""

    def __init__(self, per_conversation: int, per_tenant: int) -> None:
        self.per_conversation = per_conversation
        self.per_tenant = per_tenant
        self._conversations: dict[tuple[str, str], int] = {}
        self._tenants: dict[str, int] = {}

    def hold(self, tenant_id: str, conversation_id: str) -> Slot:
        """Count one more stream of the conversation (429 past either limit)."""
        key = (tenant_id, conversation_id)
        if self._conversations.get(key, 0) >= self.per_conversation:
            raise errors.RateLimited(
                f"this conversation already has {self.per_conversation} live event streams",
                retry_after=SUBSCRIBER_RETRY_SECONDS,
            )
        if self._tenants.get(tenant_id, 0) >= self.per_tenant:
            raise errors.RateLimited(
                f"this tenant already has {self.per_tenant} live event streams",
                retry_after=SUBSCRIBER_RETRY_SECONDS,
            )
        self._conversations[key] = self._conversations.get(key, 0) + 1
        self._tenants[tenant_id] = self._tenants.get(tenant_id, 0) + 1
        return Slot(lambda: self._drop(key))

    def count(self, tenant_id: str, conversation_id: str | None = None) -> int:
        """Live streams of the tenant, or of one of its conversations."""
        if conversation_id is None:
            return self._tenants.get(tenant_id, 0)
        return self._conversations.get((tenant_id, conversation_id), 0)

    def _drop(self, key: tuple[str, str]) -> None:
        _decrement(self._conversations, key)
        _decrement(self._tenants, key[0])


def _decrement(counts: dict[K, int], key: K) -> None:
    left = counts[key] - 1
    if left:
        counts[key] = left
    else:
        del counts[key]  # no entry left behind for a conversation nobody follows


class Waits:
    """Requests of each key that wait for work, open at once."""

    def __init__(self, per_principal: int) -> None:
        self.per_principal = per_principal
        self._open: dict[str, int] = {}

    def hold(self, key: str) -> Slot:
        """Count one more waiting request of ``key`` (429 past the limit)."""
        if self._open.get(key, 0) >= self.per_principal:
            raise errors.RateLimited(
                f"this key already has {self.per_principal} requests waiting for work; "
                "follow them on the event stream, or try again when one answers",
                retry_after=WAIT_RETRY_SECONDS,
            )
        self._open[key] = self._open.get(key, 0) + 1
        return Slot(lambda: _decrement(self._open, key))

    def count(self, key: str) -> int:
        """Waiting requests of ``key`` open now."""
        return self._open.get(key, 0)


_WAITING = frozenset({"/mcp", "/api/assistant/chat", "/api/assistant/execute"})


def waits_long(method: str, path: str) -> bool:
    """Whether a request may hold its answer open while work goes on: a chat, an execute, an
    MCP call, an OpenAI or AG-UI turn, an Agent Protocol wait, join or stream."""
    if path.startswith("/ap/"):
        return path.endswith(("/wait", "/stream", "/join"))
    return method == "POST" and (path in _WAITING or path.startswith(("/v1/chat/", "/ag-ui/")))


class Limits:
    """This process's limits, built once from the settings."""

    def __init__(self, settings: Settings) -> None:
        self.requests = RequestRate(settings.rate_limit_per_minute)
        self.subscribers = Subscribers(
            settings.max_subscribers_per_conversation, settings.max_subscribers_per_tenant
        )
        self.waits = Waits(settings.max_waits_per_principal)


def install(app: FastAPI, settings: Settings) -> None:
    """Hang ``Limits`` off ``app.state.limits`` and add the ``WaitCap`` and ``RateLimit``
    middleware (the rate outside: a request refused for it holds no wait)."""
    app.state.limits = Limits(settings)
    app.add_middleware(WaitCap, waits=app.state.limits.waits)
    app.add_middleware(RateLimit, rate=app.state.limits.requests)


def of(app: FastAPI) -> Limits:
    """The limits ``install`` hung off ``app``."""
    limits: Limits = app.state.limits
    return limits


class RateLimit:
    """Pure ASGI middleware: requests to ``guard.KEYED`` paths beyond the caller's rate get
    429."""

    def __init__(self, app: ASGIApp, *, rate: RequestRate) -> None:
        self.app = app
        self.rate = rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _key(scope) if scope["type"] in ("http", "websocket") else None
        wait = 0.0 if key is None else self.rate.take(key)
        if not wait:
            await self.app(scope, receive, send)
            return
        retry_after = max(1, math.ceil(wait))
        message = f"more than {self.rate.per_minute} requests a minute; try again later"
        exc = errors.RateLimited(message, retry_after=retry_after)
        await api_errors.refuse(scope, receive, send, exc)


class WaitCap:
    """Pure ASGI middleware: a key's request that waits for work (``waits_long``) holds one
    of its ``Waits`` until it has answered; past the limit, 429."""

    def __init__(self, app: ASGIApp, *, waits: Waits) -> None:
        self.app = app
        self.waits = waits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _key(scope) if scope["type"] == "http" else None
        if key is None or not waits_long(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        try:
            slot = self.waits.hold(key)
        except errors.RateLimited as exc:
            await api_errors.refuse(scope, receive, send, exc)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            slot.release()


def _key(scope: Scope) -> str | None:
    """Whose requests these count as; None for those no limit applies to."""
    if not scope["path"].startswith(KEYED):
        return None
    state = scope.get("state", {})
    principal_id = state.get("principal_id")
    principal = state.get("principal")  # set by api/guard.py
    if principal_id is None and principal is not None:
        if principal.kind == "local":
            return None
        principal_id = f"{principal.tenant_id}/{principal.id}"
    if principal_id is not None:
        return f"principal:{principal_id}"
    client = scope.get("client")
    return f"address:{client[0] if client else '?'}"
