from datetime import UTC, datetime

from hansa.domain.message import Author, Kind, Message
from hansa.engine.turns.stages.context import _before_this_turn


def _msg(i: int, turn: str, kind: Kind) -> Message:
    return Message(
        id=f"m{i}",
        conversation_id="c",
        turn_id=turn,
        run_id=None,
        kind=kind,
        author=Author.USER if kind is Kind.USER else Author.ASSISTANT,
        agent_id=None,
        content=f"text {i}",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        metadata={},
    )


def test_the_prompt_history_stops_before_this_turn_even_if_later_ones_are_queued() -> None:
    history = [
        _msg(1, "t1", Kind.USER),
        _msg(2, "t1", Kind.ASSISTANT),
        _msg(3, "t2", Kind.USER),
        _msg(4, "t3", Kind.USER),
    ]
    assert [m.id for m in _before_this_turn(history, "t2")] == ["m1", "m2"]
    assert _before_this_turn(history, "gone") == []
