"""What the run machinery does with a task beyond executing it is said on its type: a graph
node's task type, its hold, settle and flow, the changes it asks for (typed), and the
timeline's sentence for what it did."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from hansa import errors
from hansa.domain.conversation import State
from hansa.tasks.base import (
    Flow,
    MergeContext,
    MoveConversation,
    OpenHandoff,
    TaskContext,
    TaskFailed,
)
from hansa.tasks.registry import default_registry

REGISTRY = default_registry()


def _ctx(changes: list[Any] | None) -> TaskContext:
    return TaskContext(
        tenant_id="t", project_id=None, task_id="k", idempotency_key="i", changes=changes
    )


async def _execute(name: str, config: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
    kind = REGISTRY.get(name)
    return await kind.executor(kind.params.model_validate(config), ctx)


def test_a_graph_node_runs_the_task_type_that_names_it() -> None:
    assert REGISTRY.for_node("wait").name == "wait.durable", "the plain wait sleeps"
    assert REGISTRY.for_node("condition").name == "condition"
    with pytest.raises(errors.InvalidInput):
        REGISTRY.for_node("teleport")


def test_only_graph_nodes_are_held_settled_or_govern_the_tasks_after_them() -> None:
    special = [t for t in REGISTRY.all() if t.hold or t.settle or t.flow or t.answers]

    assert {t.name: t.flow for t in special if t.flow} == {
        "parallel": Flow.FORK,
        "loop": Flow.LOOP,
    }
    assert {"condition", "parallel"} <= {t.name for t in special if t.settle}
    assert [t.name for t in special if t.hold] == ["wait.durable"]
    assert all(t.graph_node for t in special), "a plan's step is never held or settled"


def test_a_loop_binds_its_item_then_its_index_for_its_body() -> None:
    kind = REGISTRY.get("loop")
    assert kind.binds is not None
    keyed = {"collection": "{{logs.entries}}", "itemKey": "entry"}
    assert kind.binds(kind.params.model_validate(keyed)) == ("entry",)
    indexed = kind.params.model_validate({**keyed, "indexKey": "i"})
    assert kind.binds(indexed) == ("entry", "i")
    assert [t.name for t in REGISTRY.all() if t.binds] == ["loop"]


def test_a_conditions_fields_are_names_it_refers_to_an_llms_context_fields_are_not() -> None:
    kind = REGISTRY.get("condition")
    assert kind.refers is not None
    test = {"condition": {"field": "logs.total", "operator": "gt", "value": 0}}
    assert list(kind.refers(kind.params.model_validate(test))) == ["logs.total"]
    ask = REGISTRY.get("llm.invoke")
    assert ask.refers is None and ask.reads is not None, "read if there, never required"


@pytest.mark.parametrize(
    ("name", "config", "ends"),
    [
        ("handoff.create", {}, True),
        ("state.transition", {"to": "resolved"}, True),
        ("state.transition", {"to": "archived"}, True),
        ("state.transition", {"to": "handoff_pending"}, True),
        ("state.transition", {"to": "waiting_for_user"}, False),
        ("state.transition", {"to": "idle"}, False),
    ],
)
def test_a_handoff_or_a_move_where_no_one_answers_ends_the_turn(
    name: str, config: dict[str, Any], ends: bool
) -> None:
    kind = REGISTRY.get(name)
    assert kind.ends_turn is not None
    assert kind.ends_turn(kind.params.model_validate(config)) is ends


def test_only_a_handoff_and_a_move_may_end_the_turn() -> None:
    ending = {t.name for t in REGISTRY.all() if t.ends_turn}
    assert ending == {"handoff.create", "state.transition"}


def test_a_wait_is_held_for_its_seconds() -> None:
    kind = REGISTRY.get("wait.durable")
    assert kind.hold is not None
    assert kind.hold(kind.params.model_validate({"seconds": 90})) == timedelta(seconds=90)


@pytest.mark.anyio
async def test_the_conversation_changes_a_node_asks_for_are_typed() -> None:
    asked: list[Any] = []
    ctx = _ctx(asked)

    await _execute("context.update", {"set": {"stage": "triaged"}}, ctx)
    await _execute("state.transition", {"to": "resolved"}, ctx)
    await _execute("handoff.create", {"priority": "high"}, ctx)

    assert asked == [
        MergeContext({"stage": "triaged"}),
        MoveConversation(State.RESOLVED),
        OpenHandoff("the graph asks for a person", "high"),
    ]


@pytest.mark.anyio
async def test_a_change_where_the_conversation_may_not_change_fails_the_step() -> None:
    with pytest.raises(TaskFailed) as failed:
        await _execute("context.update", {"set": {"a": 1}}, _ctx(None))
    assert failed.value.code == "no_conversation"


@pytest.mark.parametrize(
    ("name", "result", "told"),
    [
        (
            "create_page",
            {"url": "/api/workspace/pages/p1", "status": "draft"},
            "Page created in the Hansa workspace at /api/workspace/pages/p1 as a draft",
        ),
        (
            "update_content_block",
            {"url": "https://shop.example/about"},
            "Page updated in WordPress at https://shop.example/about",
        ),
        ("delete_page", {"title": "About"}, "Page “About” deleted"),
        (
            "create_product",
            {"url": "https://shop.example/p/9"},
            "Product created in WooCommerce at https://shop.example/p/9",
        ),
        ("run_audit", {"score": 80, "findings": ["x"]}, "Audit: score 80/100, 1 finding"),
        ("create_ticket", {"ticketId": "T1"}, "Ticket T1 created"),
        ("webhook.call", {"statusCode": 204}, "webhook.call answered HTTP 204"),
        ("service.call", {"statusCode": 200}, "service.call answered HTTP 200"),
    ],
)
def test_a_completed_task_is_told_as_its_type_describes_it(
    name: str, result: dict[str, Any], told: str
) -> None:
    describe = REGISTRY.get(name).describe
    assert describe is not None
    assert describe(result) == told


def test_a_result_without_what_the_sentence_needs_is_not_described() -> None:
    describe = REGISTRY.get("create_page").describe
    assert describe is not None
    assert describe({}) is None, "the timeline says the generic sentence instead"


def test_a_task_types_schema_is_built_once_and_describes_its_parameters() -> None:
    for task_type in REGISTRY.all():
        schema = task_type.schema()
        assert task_type.schema() is schema, task_type.name
        assert schema == task_type.params.model_json_schema(by_alias=True), task_type.name
