"""Seed 001's nested action lists compiled to a graph's nodes and edges."""

from __future__ import annotations

from typing import Any

from hansa.domain import action_lists
from hansa.domain.graph import parse

TASK_TYPES = {"create_ticket"}


def _send(text: str) -> dict[str, Any]:
    return {"type": "message.send", "params": {"content": text}}


def _edges(compiled: action_lists.Compiled) -> list[tuple[str, str, str | None]]:
    return [(e["from"], e["to"], e.get("when")) for e in compiled.edges]


def test_a_condition_branches_and_what_follows_joins_both_ends() -> None:
    check = {
        "type": "condition",
        "params": {
            "condition": {"field": "logsResult.total", "operator": "gt", "value": 0},
            "ifTrue": [_send("found"), _send("look")],
            "ifFalse": [_send("none")],
        },
    }
    compiled = action_lists.chain([check, _send("bye")])
    assert [c["id"] for c in compiled.components] == [
        "condition_1",
        "condition_1_true_1",
        "condition_1_true_2",
        "condition_1_false_1",
        "message_send_2",
    ]
    assert _edges(compiled) == [
        ("condition_1", "condition_1_true_1", "true"),
        ("condition_1_true_1", "condition_1_true_2", None),
        ("condition_1", "condition_1_false_1", "false"),
        ("condition_1_true_2", "message_send_2", None),
        ("condition_1_false_1", "message_send_2", None),
    ]
    assert compiled.components[0]["config"] == {
        "condition": {"field": "logsResult.total", "operator": "gt", "value": 0}
    }
    assert compiled.paths[2] == "actions[0].params.ifTrue[1]"


def test_an_empty_branch_goes_on_from_the_condition_itself() -> None:
    check = {
        "type": "condition",
        "params": {
            "condition": {"field": "message.content", "operator": "contains", "value": "human"},
            "ifTrue": [_send("handing over")],
        },
    }
    compiled = action_lists.chain([check, _send("next")])
    assert ("condition_1", "message_send_2", "false") in _edges(compiled)


def test_parallel_and_loop_actions_hang_off_their_node() -> None:
    fork = {
        "type": "parallel",
        "params": {
            "actions": [
                {"type": "service.call", "params": {"url": "https://a.test", "resultKey": "a"}},
                {"type": "service.call", "params": {"url": "https://b.test"}},
            ],
            "strategy": "all",
            "timeout": 5000,
        },
    }
    each = {
        "type": "loop",
        "params": {"collection": "{{a.items}}", "itemKey": "it", "actions": [_send("{{it}}")]},
    }
    compiled = action_lists.chain([fork, each])
    ids = [c["id"] for c in compiled.components]
    assert ids == ["parallel_1", "a", "parallel_1_2", "loop_2", "loop_2_1"]
    assert _edges(compiled) == [
        ("parallel_1", "a", None),
        ("parallel_1", "parallel_1_2", None),
        ("a", "loop_2", None),
        ("parallel_1_2", "loop_2", None),
        ("loop_2", "loop_2_1", None),
    ]
    assert compiled.components[0]["config"] == {"strategy": "all", "timeout": 5000}


def test_what_cannot_be_read_is_said_with_where() -> None:
    compiled = action_lists.chain(
        [
            "not an action",
            {"type": "loop", "params": {"actions": [{"type": "loop", "params": {"actions": []}}]}},
            {"type": "message.send", "params": {}, "config": {}},
            {"type": "condition", "params": {"ifTrue": "no"}},
        ]
    )
    paths = [p for p, _ in compiled.problems]
    assert paths == [
        "actions[0]",
        "actions[1].params.actions[0]",
        "actions[2]",
        "actions[3].params.ifTrue",
    ]


def test_a_graph_of_seed_actions_is_kept_flat_and_can_be_sent_again() -> None:
    body = {
        "name": "handoff",
        "components": [
            {
                "type": "condition",
                "params": {
                    "condition": {"field": "message.content", "operator": "contains", "value": "x"},
                    "ifTrue": [{"type": "handoff.create", "params": {"priority": "high"}}],
                },
            },
            {"id": "after", "type": "message.send", "config": {"text": "old name"}},
        ],
        "edges": [{"from": "condition_1", "to": "after"}],
    }
    spec = parse(body, TASK_TYPES, 10)
    flat = spec.model_dump(by_alias=True)
    again = parse(flat, TASK_TYPES, 10)
    assert again == spec
    assert [c.id for c in spec.components] == ["condition_1", "condition_1_true_1", "after"]
    assert spec.components[2].config == {"content": "old name"}
    assert [(e.from_, e.to, e.when) for e in spec.edges] == [
        ("condition_1", "condition_1_true_1", "true"),
        ("condition_1_true_1", "after", None),
        ("condition_1", "after", "false"),
    ]
