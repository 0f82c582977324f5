"""Step frames: a model's answer read as the next frame."""

from __future__ import annotations

import json

from hansa.domain.session import MAX_STATE_BYTES, SessionStatus, parse_frame, state_too_large


def test_a_json_answer_is_the_next_frame() -> None:
    answer = json.dumps(
        {"nextStep": "review/1", "state": {"n": 2}, "text": "Hi", "done": True, "delaySeconds": 5}
    )
    frame = parse_frame(answer, "4.2", {"n": 1})
    assert (frame.next_step, frame.state, frame.text, frame.done) == (
        "review/1",
        {"n": 2},
        "Hi",
        True,
    )
    assert frame.delay_seconds == 5


def test_plain_text_goes_on_to_the_following_step_with_the_state_kept() -> None:
    assert parse_frame("tick", "7", {"n": 1}).model_dump() == {
        "next_step": "8",
        "state": {"n": 1},
        "text": "tick",
        "data": None,
        "done": False,
        "notes": None,
        "delay_seconds": 0.0,
    }
    assert parse_frame("  ", "review", {}).next_step == "review+1"


def test_a_frame_that_breaks_its_rules_is_read_as_text() -> None:
    bad = json.dumps({"nextStep": "", "state": {}, "done": False})  # no cursor
    frame = parse_frame(bad, "1", {"kept": True})
    assert frame.next_step == "2" and frame.state == {"kept": True} and frame.text == bad
    too_late = json.dumps({"nextStep": "2", "state": {}, "done": False, "delaySeconds": 10**9})
    assert parse_frame(too_late, "1", {}).text == too_late


def test_limits_and_final_statuses() -> None:
    assert state_too_large({"x": "y" * MAX_STATE_BYTES})
    assert not state_too_large({"x": "y"})
    assert {s for s in SessionStatus if s.final} == {
        SessionStatus.STOPPED,
        SessionStatus.COMPLETED,
        SessionStatus.FAILED,
    }
