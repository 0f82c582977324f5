"""How fast one tenant's agent sessions may step (``HANSA_SESSION_STEPS_PER_MINUTE_PER_TENANT``).

Each step is a model call: without a budget, 50 sessions without a cadence made 4,475 steps
in 10 s (security review M4). A step past the tenant's budget is not refused: its job
puts the step off until the budget has room again (durably, like a step's own
``delaySeconds``). The count is per process, as the request limits are (docs/security.md).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import deque

from hansa.engine.runtime.services import Services

WINDOW_SECONDS = 60.0
SWEEP_PAST = 256
"""Tenants tracked past which the ones with no step in the last minute are forgotten (their
count is zero anyway): the map holds the tenants of the last minute, not every tenant that
ever stepped (issue 35)."""


class StepPace:
    """A sliding minute of step starts per tenant."""

    def __init__(self) -> None:
        self._starts: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def wait_for(self, tenant_id: str, per_minute: int, now: float | None = None) -> float:
        """0 (and the step counted) when ``tenant_id`` may step now; else how many seconds
        until it may."""
        at = time.monotonic() if now is None else now
        with self._lock:
            if len(self._starts) > SWEEP_PAST:
                self._forget_idle(at)
            starts = self._starts.setdefault(tenant_id, deque())
            while starts and starts[0] <= at - WINDOW_SECONDS:
                starts.popleft()
            if len(starts) < per_minute:
                starts.append(at)
                return 0.0
            return max(0.01, starts[0] + WINDOW_SECONDS - at)

    def __len__(self) -> int:
        return len(self._starts)

    def _forget_idle(self, at: float) -> None:
        idle = [
            t
            for t, starts in self._starts.items()
            if not starts or starts[-1] <= at - WINDOW_SECONDS
        ]
        for tenant_id in idle:
            del self._starts[tenant_id]


_PACES: weakref.WeakKeyDictionary[object, StepPace] = weakref.WeakKeyDictionary()


def pace_of(services: Services) -> StepPace:
    """The pace of this process's server (one per database handle: tests run several)."""
    found = _PACES.get(services.db)
    if found is None:
        found = _PACES[services.db] = StepPace()
    return found
