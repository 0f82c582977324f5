import pytest

from hansa.domain import conversation, turn
from hansa.domain.transitions import TransitionError, check_transition


def test_conversation_moves_idle_active_idle() -> None:
    table = conversation.TRANSITIONS
    check_transition(table, conversation.State.IDLE, conversation.State.AI_ACTIVE)
    check_transition(table, conversation.State.AI_ACTIVE, conversation.State.IDLE)


def test_archived_conversation_is_final() -> None:
    with pytest.raises(TransitionError, match="archived"):
        check_transition(
            conversation.TRANSITIONS, conversation.State.ARCHIVED, conversation.State.AI_ACTIVE
        )


@pytest.mark.parametrize("final", [turn.TurnStatus.COMPLETED, turn.TurnStatus.FAILED])
def test_finished_turn_cannot_run_again(final: turn.TurnStatus) -> None:
    with pytest.raises(TransitionError):
        check_transition(turn.TURN_TRANSITIONS, final, turn.TurnStatus.RUNNING)


def test_every_state_has_a_row() -> None:
    assert set(conversation.TRANSITIONS) == set(conversation.State)
    assert set(turn.TURN_TRANSITIONS) == set(turn.TurnStatus)
