"""Every error Hansa raises, sorted by whose fault it is.

::

    HansaError
    ├── UserError                 the caller's mistake (HTTP 4xx)
    │   ├── NotFound              unknown id, or an id of another tenant (404)
    │   ├── InvalidInput          bad or missing fields (422)
    │   │   ├── MissingParameters     the law of clarity (engine/laws.py)
    │   │   └── InvalidGraph          a prompt graph with problems, every one listed
    │   │                             (domain/graph.py)
    │   ├── Conflict              wrong state or duplicate (409)
    │   │   └── TransitionError       a move its lifecycle's table has no edge for
    │   │                             (domain/transitions.py)
    │   ├── ScopeDenied           the law of allowed scope (403, engine/laws.py)
    │   ├── Unauthenticated       no key, or an unknown or revoked one (401, domain/principal.py)
    │   ├── Forbidden             the role does not allow it (403, domain/principal.py)
    │   │   └── OriginDenied          another site, or a foreign Host (403)
    │   └── RateLimited           a limit was reached; try again later (429, Retry-After)
    ├── ConfigError               Hansa is set up wrongly (bad settings, missing extra)
    ├── ProviderError             a model provider failed
    │   └── ProviderHTTPError     ... with an HTTP status and body
    ├── TaskFailed                a task could not do its work; says so to the user
    ├── ScriptExhausted           the scripted model got a call it had no step for
    ├── ToolLoopLimit             an agent's model still asked for tools after the last
    │                             round allowed (engine/turns/agent_loop.py)
    └── StaleLease                a job's lease was taken over; its writes are refused

Subclasses that belong to one concept live with it (the module is named above).
"""

from __future__ import annotations

from typing import Any


class HansaError(Exception):
    """Base of every Hansa error."""

    code = "internal_error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class UserError(HansaError):
    """The caller asked for something Hansa cannot do as asked."""

    code = "bad_request"
    status = 400


class NotFound(UserError):
    """An id that does not exist for this tenant."""

    code = "not_found"
    status = 404


class InvalidInput(UserError):
    """Input that fails validation."""

    code = "invalid_input"
    status = 422

    @classmethod
    def past_limit(cls, limit: int, what: str, setting: str, field: str) -> InvalidInput:
        """A tenant has ``limit`` of ``what`` already, as many as ``setting`` allows."""
        message = f"a tenant has at most {limit} {what} ({setting})"
        return cls(message, details={"field": field, "limit": limit})


class InvalidGraph(InvalidInput):
    """A prompt graph that cannot be saved: ``details.problems`` lists everything wrong with
    it (``domain/graph.py``), not only the first thing."""

    code = "invalid_graph"

    def __init__(self, problems: list[dict[str, Any]]) -> None:
        first = problems[0]["message"] if problems else "it is invalid"
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        super().__init__(
            f"the graph cannot be saved: {first}{more}", details={"problems": problems}
        )


class Conflict(UserError):
    """The target is in a state that does not allow the request."""

    code = "conflict"
    status = 409


class RateLimited(UserError):
    """A limit was reached (docs/security.md, "Limits"); ``retry_after`` says when to
    try again, in seconds (the ``Retry-After`` header)."""

    code = "rate_limited"
    status = 429

    def __init__(
        self, message: str, *, retry_after: int, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, details=details)
        self.retry_after = max(1, retry_after)


class ConfigError(HansaError):
    """Hansa's settings or installed extras do not allow what was asked."""

    code = "config_error"


class ProviderError(HansaError):
    """A model provider failed to answer.

    ``transient`` marks a failure the same call may get past when it is tried again a little
    later (a timeout, no connection, the provider busy or overloaded); the engine retries
    those (``engine/llm.py``, ``Retry``), never the others (a bad request, a refused key).
    """

    code = "provider_error"

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""HTTP statuses of a provider busy, overloaded or briefly down (529: Anthropic's overload)."""


class ProviderHTTPError(ProviderError):
    """A model provider answered with an HTTP error; ``retry_after`` (seconds) when it said
    when to try again."""

    def __init__(self, status: int, body: str, *, retry_after: float | None = None) -> None:
        super().__init__(
            f"model provider answered HTTP {status}: {body[:200]}",
            transient=status in TRANSIENT_STATUSES or status >= 500,
        )
        self.status = status
        self.body = body
        self.retry_after = retry_after


class TaskFailed(HansaError):
    """A task's clear failure (raised by executors and connectors); ``message`` is safe
    to show the user.

    ``code`` names the failure (``not_found``, ``timeout``…); ``retryable`` marks failures
    worth another attempt (timeouts, 5xx).
    """

    code = "task_failed"

    def __init__(self, message: str, *, code: str = "task_failed", retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable


class ScriptExhausted(HansaError):
    """The scripted model was called with no scripted step left."""

    code = "script_exhausted"


class StaleLease(HansaError):
    """A worker tried to write for a job whose lease another worker now holds."""

    code = "stale_lease"
