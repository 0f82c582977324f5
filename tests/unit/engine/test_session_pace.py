"""A tenant's agent session steps per minute (issue 28, M4): a step past the budget waits
until the sliding minute has room; each tenant has its own."""

from __future__ import annotations

from hansa.engine.sessions.pace import SWEEP_PAST, WINDOW_SECONDS, StepPace


def test_steps_past_the_budget_wait_for_the_window() -> None:
    pace = StepPace()
    assert [pace.wait_for("t", 3, now=float(n)) for n in range(3)] == [0.0, 0.0, 0.0]
    assert pace.wait_for("t", 3, now=10.0) == WINDOW_SECONDS - 10.0
    assert pace.wait_for("other", 3, now=10.0) == 0.0, "tenants are paced apart"
    assert pace.wait_for("t", 3, now=WINDOW_SECONDS + 0.5) == 0.0, "the first step left it"


def test_tenants_idle_for_a_minute_are_forgotten_past_the_sweep_bound() -> None:
    pace = StepPace()
    for n in range(SWEEP_PAST + 1):
        pace.wait_for(f"old{n}", 3, now=0.0)
    pace.wait_for("recent", 1, now=WINDOW_SECONDS - 1)

    pace.wait_for("new", 3, now=WINDOW_SECONDS + 1)

    assert len(pace) == 2, "only the tenants that stepped in the last minute are kept"
    assert pace.wait_for("recent", 1, now=WINDOW_SECONDS + 2) > 0, "its step still counts"
