"""The Agent Protocol's shapes: what a run posts, a run's status from its outcome, and a
thread's values and state as the routes write them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from hansa import errors
from hansa.api import ap_shapes as shapes
from hansa.domain import message, run, turn
from hansa.domain.conversation import Conversation, State
from hansa.engine.turns.outcome import Outcome, Standing, Waiting

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

    assert interrupt.id == "confirmation:r1"
    assert interrupt.value.taskIds == ["k1"] and interrupt.value.kind == "confirmation"
    assert shapes.interrupts("c1", None) == []


def _message(mid: str, kind: message.Kind, agent_id: str | None) -> message.Message:
    return message.Message(
        id=mid,
        conversation_id="c1",
        turn_id=None,
        run_id=None,
        kind=kind,
        author=message.Author.USER if kind is message.Kind.USER else message.Author.ASSISTANT,
        agent_id=agent_id,
        content="hi",
        created_at=NOW,
        metadata={},
    )


def _standing(waiting: Waiting | None) -> Standing:
    convo = Conversation(
        id="c1",
        tenant_id="default",
        project_id=None,
        title=None,
        state=State.IDLE,
        current_agent="chief",
        last_seq=4,
        created_at=NOW,
        updated_at=NOW,
        metadata={shapes.THREAD_METADATA: {"customer": "ada"}},
    )
    said = [
        _message("m1", message.Kind.USER, None),
        _message("m2", message.Kind.ASSISTANT, "chief"),
        _message("m3", message.Kind.ASSISTANT, None),
    ]
    return Standing(conversation=convo, busy=False, waiting=waiting, messages=said)


def test_values_leave_out_what_a_dict_left_out() -> None:
    waiting = Waiting("question", "Which project?", None)
    plain = shapes.wire(shapes.values(_standing(waiting)))
    final = shapes.wire(shapes.final_values(_standing(waiting), "boom"))
    done = shapes.wire(shapes.final_values(_standing(None), None))

    human, ai, anonymous = plain["messages"]
    assert human == {"type": "human", "content": "hi", "id": "m1"}
    assert ai == {"type": "ai", "content": "hi", "id": "m2", "name": "chief", "tool_calls": []}
    assert anonymous["name"] is None, "an ai message's agent is written even when unknown"
    assert list(plain) == ["messages"] and list(done) == ["messages"]
    assert list(final) == ["messages", "__interrupt__", "__error__"]
    assert final["__error__"] == {"error": "turn_failed", "message": "boom"}
    assert final["__interrupt__"][0]["id"] == "question:c1"
    assert final["__interrupt__"][0]["value"]["runId"] is None


def test_a_thread_is_timed_as_isoformat() -> None:
    found = json.loads(shapes.thread(_standing(None)).model_dump_json(exclude_unset=True))
    state = json.loads(
        shapes.thread_state(_standing(None), "chief").model_dump_json(exclude_unset=True)
    )

    assert found["created_at"] == NOW.isoformat() == state["created_at"]
    assert found["metadata"] == {"customer": "ada"} and found["status"] == "idle"
    assert found["values"]["messages"][0] == {"type": "human", "content": "hi", "id": "m1"}
    assert state["parent_checkpoint"] is None and state["checkpoint"]["checkpoint_id"] == "4"
