"""A turn's events as AG-UI events, in process: the paths a scripted turn over HTTP does not
take (a message sent whole, a failed or cancelled turn, a scratchpad change, a draft)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ag_ui import core

from hansa.api.agui_events import TIMED_OUT, Translation
from hansa.domain import event
from hansa.domain.message import Author, Kind, Phase

_AT = datetime(2026, 1, 1, tzinfo=UTC)


def _ev(seq: int, payload: Any, agent: str = "chief") -> event.Event:
    return event.Event(
        seq=seq,
        conversation_id="c1",
        turn_id="t1",
        run_id=None,
        task_id=None,
        agent_id=agent,
        created_at=_AT,
        payload=payload,
    )


def _run() -> Translation:
    return Translation("thread", "run", {"conversationId": "c1", "agentStates": {}})


def _said(message_id: str, content: str) -> event.MessageData:
    return event.MessageData(
        message_id=message_id, kind=Kind.ASSISTANT, author=Author.ASSISTANT, content=content
    )


def _types(events: list[core.BaseEvent]) -> list[str]:
    return [e.type.value for e in events]


def test_a_message_sent_whole_is_one_text_and_a_delta_after_a_thinking_line_a_second() -> None:
    run = _run()
    whole = run.events(_ev(1, _said("m1", "Hello.")))
    first = run.events(_ev(2, event.TextDeltaData(message_id="m2", delta="Part one")))
    thinking = run.events(
        _ev(3, event.ThinkingData(message_id="x", summary="Checking", phase=Phase.VALIDATION))
    )
    second = run.events(_ev(4, event.TextDeltaData(message_id="m2", delta=" and two.")))
    stored = run.events(_ev(5, _said("m2", "Part one and two.")))

    assert _types(whole) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    assert _types(first) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
    assert _types(thinking) == ["TEXT_MESSAGE_END", "STEP_STARTED", "CUSTOM"]
    assert [e.message_id for e in second] == ["m2-2", "m2-2"]  # type: ignore[attr-defined]
    assert _types(stored) == ["TEXT_MESSAGE_END"]
    assert _types(run.close()) == ["STEP_FINISHED"]


def test_a_status_message_and_a_superseded_draft_are_custom_events() -> None:
    run = _run()
    run.events(_ev(1, event.TextDeltaData(message_id="d1", delta="A draft")))
    status = event.MessageData(
        message_id="s1", kind=Kind.STATUS, author=Author.SYSTEM, content="Handing off"
    )
    draft = event.DraftSupersededData(message_id="d1", reasons=["evaluator"], reason="weak")

    out = run.events(_ev(2, draft)) + run.events(_ev(3, status))

    assert _types(out) == ["TEXT_MESSAGE_END", "CUSTOM", "CUSTOM"]
    names = [e.name for e in out[1:]]  # type: ignore[attr-defined]
    assert names == ["hansa.draft_superseded", "hansa.message"]


def test_a_scratchpad_change_is_a_new_snapshot_with_its_secrets_masked() -> None:
    run = _run()
    state = {"plan": "audit", "apiKey": "sk-live-123456"}

    (snap,) = run.events(_ev(1, event.AgentStateData(agent_id="chief", version=2, state=state)))

    assert isinstance(snap, core.StateSnapshotEvent)
    assert snap.snapshot["agentStates"]["chief"]["version"] == 2
    assert snap.snapshot["agentStates"]["chief"]["state"]["plan"] == "audit"
    assert snap.snapshot["agentStates"]["chief"]["state"]["apiKey"] == "***"


def test_the_runs_end_follows_the_turns_done() -> None:
    failed = _run()
    failed.events(_ev(1, event.ErrorData(code="model_unavailable", message="The model is down.")))

    done = _run().end("completed")
    cancelled = _run().end("cancelled")
    error = failed.end("failed")
    quiet = _run().end(TIMED_OUT)

    assert isinstance(done, core.RunFinishedEvent)
    assert isinstance(done.outcome, core.RunFinishedSuccessOutcome)
    assert done.result == {"conversationId": "c1"}
    assert isinstance(cancelled, core.RunFinishedEvent)
    assert isinstance(cancelled.outcome, core.RunFinishedCancelledOutcome)
    assert isinstance(error, core.RunErrorEvent)
    assert (error.code, error.message) == ("model_unavailable", "The model is down.")
    assert isinstance(quiet, core.RunErrorEvent) and quiet.code == "turn_timeout"
