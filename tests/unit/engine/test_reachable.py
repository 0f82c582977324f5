"""A rule whose state change the state table forbids from every state its trigger can find
the conversation in is refused at save, naming the action's ``to``; one that can work is
kept (a handoff before it, a move through an allowed state, an async trigger)."""

from __future__ import annotations

from typing import Any

import pytest

from hansa import errors
from hansa.domain.rules import RuleSpec
from hansa.engine.rules import reachable
from hansa.tasks.builtin import graph_nodes
from hansa.tasks.registry import TaskRegistry


@pytest.fixture(scope="module")
def registry() -> TaskRegistry:
    found = TaskRegistry()
    graph_nodes.register(found.register)
    return found


def _spec(trigger: str, *actions: dict[str, Any]) -> RuleSpec:
    return RuleSpec.model_validate(
        {
            "name": "r",
            "trigger": trigger,
            "conditions": {"logic": "and", "conditions": []},
            "actions": list(actions),
        }
    )


def _move(to: str) -> dict[str, Any]:
    return {"type": "state.transition", "params": {"to": to}}


@pytest.mark.parametrize(
    ("actions", "index"),
    [
        ([_move("agent_active")], 0),
        ([{"type": "message.send", "params": {"content": "hi"}}, _move("agent_active")], 1),
        ([_move("archived"), _move("idle")], 1),  # archived is final
        ([_move("resolved"), _move("agent_active")], 1),
    ],
)
def test_a_move_no_message_can_make_is_refused_naming_its_to(
    registry: TaskRegistry, actions: list[dict[str, Any]], index: int
) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        reachable.check(_spec("message.received", *actions), registry)
    assert caught.value.details["field"] == f"actions[{index}].params.to"
    assert "would fail every time" in caught.value.message


@pytest.mark.parametrize(
    ("trigger", "actions"),
    [
        ("message.received", [_move("resolved")]),
        ("message.received", [_move("handoff_pending"), _move("agent_active")]),
        ("message.received", [{"type": "handoff.create", "params": {}}, _move("agent_active")]),
        ("message.received", [{"type": "llm.invoke", "params": {}}, _move("agent_active")]),
        ("message.received", [{"type": "route", "params": {"agentId": "chief"}}, _move("idle")]),
        ("handoff.requested", [_move("agent_active")]),
        ("context.updated", [_move("agent_active")]),
    ],
)
def test_a_move_that_can_happen_is_kept(
    registry: TaskRegistry, trigger: str, actions: list[dict[str, Any]]
) -> None:
    reachable.check(_spec(trigger, *actions), registry)
