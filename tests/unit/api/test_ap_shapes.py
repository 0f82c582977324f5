"""The Agent Protocol's shapes: what a run posts, and a run's status from its outcome."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from hansa import errors
from hansa.api import ap_shapes as shapes
from hansa.domain import run, turn
from hansa.engine.turns.outcome import Outcome, Waiting

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)


def _body(**fields: Any) -> shapes.ApRunCreate:
    return shapes.ApRunCreate(assistant_id="chief", **fields)


@pytest.mark.parametrize(
    ("fields", "posted"),
    [
        ({"input": {"messages": [{"role": "user", "content": "Hi"}]}}, "Hi"),
        (
            {
                "input": {
                    "messages": [{"type": "human", "content": "a"}, {"type": "ai", "content": "b"}]
                }
            },
            "a",
        ),
        (
            {"input": {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}},
            "x",
        ),
        ({"command": {"resume": True}}, "yes, proceed"),
        ({"command": {"resume": False}}, "cancel"),
        ({"command": {"resume": "Aquaverter"}}, "Aquaverter"),
    ],
)
def test_a_run_posts_the_last_user_message_or_the_resume(
    fields: dict[str, Any], posted: str
) -> None:
    assert shapes.text_of(_body(**fields)) == posted


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"input": {"messages": [{"role": "assistant", "content": "only me"}]}},
        {"input": {"messages": "Hi"}},
        {"command": {"goto": "chief"}},
        {"command": {"resume": ""}},
        {"command": {"resume": 3}},
        {"input": {"messages": [{"role": "user", "content": "Hi"}]}, "command": {"resume": True}},
    ],
)
def test_a_run_without_a_message_or_a_resume_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(errors.InvalidInput):
        shapes.text_of(_body(**fields))


def test_false_is_not_a_count() -> None:
    with pytest.raises(ValidationError):
        shapes.Search(offset=False)
    assert shapes.Search(limit=5).limit == 5


def _turn(status: turn.TurnStatus) -> turn.Turn:
    return turn.Turn(
        id="t1",
        conversation_id="c1",
        message_id="m1",
        status=status,
        agent_id=None,
        created_at=NOW,
        finished_at=None,
        error=None,
    )


def _run(status: run.RunStatus) -> run.Run:
    return run.Run(
        id="r1",
        tenant_id="default",
        conversation_id="c1",
        project_id=None,
        created_by="chief",
        title="Plan",
        status=status,
        created_at=NOW,
        updated_at=NOW,
        metadata={},
    )


@pytest.mark.parametrize(
    ("turn_status", "started", "asked", "confirming", "expected"),
    [
        (turn.TurnStatus.QUEUED, None, False, False, "pending"),
        (turn.TurnStatus.RUNNING, None, False, False, "running"),
        (turn.TurnStatus.FAILED, None, False, False, "error"),
        (turn.TurnStatus.CANCELLED, None, False, False, "interrupted"),
        (turn.TurnStatus.COMPLETED, None, False, False, "success"),
        (turn.TurnStatus.COMPLETED, None, True, False, "interrupted"),
        (turn.TurnStatus.COMPLETED, run.RunStatus.RUNNING, False, False, "running"),
        (turn.TurnStatus.COMPLETED, run.RunStatus.RUNNING, False, True, "interrupted"),
        (turn.TurnStatus.COMPLETED, run.RunStatus.COMPLETED, False, False, "success"),
        (turn.TurnStatus.COMPLETED, run.RunStatus.FAILED, False, False, "error"),
        (turn.TurnStatus.COMPLETED, run.RunStatus.CANCELLED, False, False, "interrupted"),
    ],
)
def test_a_runs_status_is_its_turns_then_its_plans(
    turn_status: turn.TurnStatus,
    started: run.RunStatus | None,
    asked: bool,
    confirming: bool,
    expected: str,
) -> None:
    found = Outcome(
        turn=_turn(turn_status),
        started=None if started is None else _run(started),
        asked=asked,
        confirming=confirming,
    )
    out = shapes.run_out(found, "chief")

    assert shapes.run_status(found) == expected == out.status
    assert out.assistant_id == "chief" and out.metadata.turnId == "t1"


def test_what_the_thread_waits_for_is_its_interrupt() -> None:
    waiting = Waiting("confirmation", "Confirm the DNS change?", "r1", ("k1",))
    (interrupt,) = shapes.interrupts("c1", waiting)

    assert interrupt["id"] == "confirmation:r1"
    assert interrupt["value"]["taskIds"] == ["k1"] and interrupt["value"]["kind"] == "confirmation"
    assert shapes.interrupts("c1", None) == []
