"""A rule whose state change can never happen is refused when it is saved.

A rule's ``state.transition`` at the head of its chain moves the conversation in the
trigger's transaction, under the conversation's state table (``domain/conversation.py``
``TRANSITIONS``): a move the table forbids from every state the trigger can find the
conversation in fails every turn it fires on (``invalid_transition``). Such a rule is 422
at save, naming the action's ``to``.

What a trigger can find: ``message.received`` runs in the message's turn, before it is
routed, so the conversation is where the last turn left it (``idle``,
``waiting_for_user``, ``resolved``), or ``ai_active``; never with a person (those turns
get no rules) nor archived. The other triggers run from a job after their change
committed, when the conversation may have moved on: any state. The walk follows the chain's
head (the actions that run at once) and stops at the first that ends the turn by other
means (a handoff) or must be executed: what comes later runs in a run, at a time the rule
cannot know.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from hansa import errors
from hansa.domain.conversation import TRANSITIONS, State
from hansa.domain.rules import RuleSpec, Trigger
from hansa.tasks.registry import TaskRegistry

_EVERY = frozenset(State)
FOUND_IN: Mapping[Trigger, frozenset[State]] = {
    "message.received": frozenset(
        {State.IDLE, State.AI_ACTIVE, State.WAITING_FOR_USER, State.RESOLVED}
    ),
    "conversation.created": _EVERY,
    "context.updated": _EVERY,
    "handoff.requested": _EVERY,
    "timer.fired": _EVERY,
}
"""The states a trigger's rules can find the conversation in."""


def check(spec: RuleSpec, registry: TaskRegistry) -> None:
    """Refuse (422, ``details.field`` ``actions[i].params.to``) a rule whose state change at
    the head of its chain the state table forbids from every state it can start from."""
    states = FOUND_IN[spec.trigger]
    for i, action in enumerate(spec.actions):
        if action.type not in registry:
            continue  # route, graph.run: they change no state here
        kind = registry.get(action.type)
        if not kind.at_once:
            return
        try:
            params = kind.params.model_validate(action.params)
        except ValidationError:
            return  # refused elsewhere, with its own field
        if kind.moves_to is not None:
            target = kind.moves_to(params)
            if not any(target in TRANSITIONS[s] for s in states):
                raise _never(i, spec.trigger, states, target)
            states = frozenset({target})
        elif kind.ends_turn is not None and kind.ends_turn(params):
            return  # a handoff: the state is the handoff's now


def _never(
    i: int, trigger: Trigger, states: frozenset[State], target: State
) -> errors.InvalidInput:
    field = f"actions[{i}].params.to"
    where = ", ".join(sorted(s.value for s in states))
    sources = sorted(s.value for s, targets in TRANSITIONS.items() if target in targets)
    return errors.InvalidInput(
        f"{field}: a conversation cannot move to {target.value} from {where} (where a "
        f"{trigger} rule finds it); only from {', '.join(sources) or 'no state'}: this rule "
        "would fail every time it fired",
        details={"field": field},
    )
