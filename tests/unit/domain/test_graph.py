"""Prompt graphs checked on save: every problem of a body listed at once, a valid one passes."""

from __future__ import annotations

from typing import Any

import pytest

from hansa import errors
from hansa.domain.graph import MAX_PROBLEMS, Code, Problem, parse, problems

TASK_TYPES = {"wait", "create_page"}
MAX_NODES = 10


def node(id: str, type: str = "message.send", **config: Any) -> dict[str, Any]:
    return {"id": id, "type": type, "config": config or {"content": f"hello from {id}"}}


def edge(a: str, b: str, when: str | None = None) -> dict[str, Any]:
    return {"from": a, "to": b} | ({"when": when} if when is not None else {})


def graph(components: list[Any], edges: list[Any] | None = None, **more: Any) -> dict[str, Any]:
    return {"name": "g", "components": components, "edges": edges or [], **more}


def check(body: Any, max_nodes: int = MAX_NODES) -> list[Problem]:
    return problems(body, TASK_TYPES, max_nodes)


def codes(body: Any, max_nodes: int = MAX_NODES) -> list[str]:
    return [p.code.value for p in check(body, max_nodes)]


TEST = {"field": "context.n", "operator": "eq", "value": 1}

VALID = graph(
    [
        node("fetch", "service.call", url="https://example.test/{{context.orderId}}"),
        node("ask", "llm.invoke", prompt="Summarise {{fetch.result.body}}", model="scripted:x"),
        node("ok", "condition", value="{{ask.result.text}}", exists=True),
        node("both", "parallel", strategy="settle", timeoutMs=500),
        node("say", "message.send", text="{{llmResponse}}"),
        node("nap", "wait", seconds=0.5),
        node("each", "loop", items="{{context.items}}", itemKey="item", maxIterations=3),
        node("page", "create_page", title="{{item.title}}"),
        node("help", "handoff.create", reason="no answer", priority="high"),
        node("done", "state.transition", to="resolved"),
    ],
    [
        edge("fetch", "ask"),
        edge("ask", "ok"),
        edge("ok", "both", "true"),
        edge("ok", "help", "false"),
        edge("both", "say"),
        edge("both", "nap"),
        edge("nap", "each"),
        edge("each", "page"),
        edge("help", "done"),
    ],
)


def test_a_valid_graph_passes_and_parses() -> None:
    assert check(VALID) == []
    spec = parse(VALID, TASK_TYPES, MAX_NODES)
    assert [c.id for c in spec.components][:2] == ["fetch", "ask"]
    assert spec.edges[2].from_ == "ok" and spec.edges[2].when == "true"
    assert spec.model_dump(mode="json", by_alias=True)["edges"][0] == {
        "from": "fetch",
        "to": "ask",
        "when": None,
    }


def test_a_single_node_and_fields_of_a_read_graph_pass() -> None:
    read_back = graph([node("only")], id="g1", version=3, createdAt="x", tenantId="t")
    assert check(read_back) == []
    assert parse(read_back, TASK_TYPES, MAX_NODES).name == "g"


def test_a_cycle_names_its_nodes_and_only_them() -> None:
    body = graph(
        [node("start"), node("a"), node("b"), node("c"), node("after"), node("self")],
        [
            edge("start", "a"),
            edge("a", "b"),
            edge("b", "c"),
            edge("c", "a"),
            edge("c", "after"),
            edge("start", "self"),
            edge("self", "self"),
        ],
    )
    found = check(body)
    assert [(p.code, p.nodes) for p in found] == [
        (Code.CYCLE, ["a", "b", "c"]),
        (Code.CYCLE, ["self"]),
    ]
    assert "a, b, c" in found[0].message


def test_a_graph_that_is_all_cycle_has_no_start() -> None:
    body = graph([node("a"), node("b")], [edge("a", "b"), edge("b", "a")])
    assert codes(body) == ["cycle", "no_root"]


def test_an_unknown_type_is_named_with_a_near_miss() -> None:
    (problem,) = check(graph([node("x", "llm.invok", prompt="hi")]))
    assert problem.code is Code.UNKNOWN_TYPE and problem.node == "x"
    assert "did you mean 'llm.invoke'" in problem.message
    assert problem.field == "components[0].type"


def test_task_types_are_node_types() -> None:
    assert check(graph([node("w", "wait", seconds=1)])) == []  # the task type's parameters
    assert codes(graph([node("w", "sleep")])) == ["unknown_type"]


def test_an_unreachable_node_is_named() -> None:
    body = graph(
        [node("start"), node("next"), node("a"), node("b")],
        [edge("start", "next"), edge("a", "b"), edge("b", "a")],
    )
    found = check(body)
    assert [(p.code, p.node or p.nodes) for p in found] == [
        (Code.CYCLE, ["a", "b"]),
        (Code.UNREACHABLE, "a"),
        (Code.UNREACHABLE, "b"),
    ]


def test_two_roots_are_fine() -> None:
    assert check(graph([node("a"), node("b"), node("c")], [edge("a", "c"), edge("b", "c")])) == []


def test_an_unknown_edge_end_is_named_by_side() -> None:
    found = check(graph([node("a")], [edge("a", "ghost"), edge("nobody", "a")]))
    assert [(p.code, p.edge, p.field) for p in found] == [
        (Code.UNKNOWN_EDGE_END, 0, "edges[0].to"),
        (Code.UNKNOWN_EDGE_END, 1, "edges[1].from"),
    ]
    assert "'ghost'" in found[0].message


def test_a_duplicate_id_and_malformed_ids() -> None:
    body = graph([node("a"), node("a"), node("has space"), node("x" * 65), node("context")])
    found = check(body)
    assert [(p.code, p.field) for p in found] == [
        (Code.DUPLICATE_ID, "components[1]"),
        (Code.INVALID_ID, "components[2]"),
        (Code.INVALID_ID, "components[3]"),
        (Code.INVALID_ID, "components[4]"),
    ]
    assert "template namespace" in found[-1].message


@pytest.mark.parametrize(
    ("type", "config", "field"),
    [
        ("llm.invoke", {"promptTemplate": 3}, "promptTemplate"),
        ("llm.invoke", {"promptTemplate": "hi", "temperature": 3}, "temperature"),
        ("llm.invoke", {"prompt": ""}, "promptTemplate"),
        ("llm.invoke", {"promptTemplate": "hi", "contextFields": ["secrets"]}, "contextFields"),
        ("service.call", {}, ""),
        ("service.call", {"url": "ftp://x"}, ""),
        ("service.call", {"url": "https://x", "service": "crm"}, ""),
        ("service.call", {"service": "crm", "method": "TRACE"}, "method"),
        ("message.send", {"text": ""}, "content"),
        ("message.send", {"content": "hi", "text": "hi"}, "text"),
        ("condition", {}, "condition"),
        ("condition", {"condition": {"field": "x", "operator": "like"}}, "condition"),
        ("condition", {"condition": {"field": "a..b", "operator": "eq"}}, "condition"),
        ("condition", {"condition": {"logic": "xor", "conditions": []}}, "condition"),
        ("condition", {"value": 1, "equals": 1}, ""),
        ("condition", {"value": "{{x.y}}", "equals": 1, "in": [1]}, ""),
        ("condition", {"value": "{{x.y}}", "matches": "x"}, ""),
        ("parallel", {"strategy": "any", "timeout": "soon"}, "timeout"),
        ("parallel", {"strategy": "race"}, "strategy"),
        ("parallel", {"strategy": "any", "timeoutMs": 0}, "timeout"),
        ("loop", {"items": "{{x}}", "itemKey": "item", "maxIterations": 101}, "maxIterations"),
        ("loop", {"items": "{{x}}", "itemKey": "a.b", "maxIterations": 1}, "itemKey"),
        ("loop", {"items": "{{x}}", "itemKey": "i", "indexKey": "i", "maxIterations": 1}, ""),
        ("loop", {"items": [], "itemKey": "i", "maxIterations": 1}, "collection"),
        ("loop", {"items": "{{x}}", "item_key": "i", "maxIterations": 1}, "itemKey"),
        ("wait", {"seconds": 0}, "seconds"),
        ("wait", {"seconds": 31 * 24 * 3600}, "seconds"),
        ("handoff.create", {"priority": "asap"}, "priority"),
        ("context.update", {}, "set"),
        ("state.transition", {"to": "gone"}, "to"),
    ],
)
def test_a_bad_config_is_named_per_type(type: str, config: dict[str, Any], field: str) -> None:
    found = check(graph([{"id": "n", "type": type, "config": config}]))
    assert found and {p.code for p in found} == {Code.BAD_CONFIG}, found
    assert all(p.node == "n" for p in found)
    where = "components[0].config" + (f".{field}" if field else "")
    assert any(p.field and p.field.startswith(where) for p in found), found


def test_a_config_may_not_hold_a_credential() -> None:
    body = graph(
        [
            node("a", "service.call", url="https://x.test", headers={"Authorization": "Bearer s"}),
            node("b", "service.call", url="https://u:pw@x.test/"),
            node("c", "create_page", meta=[{"name": "X-Api-Key", "value": "s"}]),
            node("d", "service.call", service="crm", headers={"Authorization": ""}),
        ]
    )
    found = check(body)
    assert [p.field for p in found] == [
        "components[0].config.headers.Authorization",
        "components[1].config.url",
        "components[2].config.meta[0].value",
    ]
    assert all(p.code is Code.BAD_CONFIG and "credential" in p.message for p in found)
    assert "s" not in [m for p in found for m in p.message.split()]


def test_when_belongs_on_the_edges_of_a_condition_only() -> None:
    body = graph(
        [node("c", "condition", condition=TEST), node("a"), node("b")],
        [edge("c", "a"), edge("c", "b", "true"), edge("a", "b", "false")],
    )
    assert [(p.code, p.edge) for p in check(body)] == [
        (Code.MISSING_WHEN, 0),
        (Code.UNEXPECTED_WHEN, 2),
    ]


def test_when_may_be_a_boolean_and_nothing_else() -> None:
    body = graph(
        [node("c", "condition", condition=TEST), node("a"), node("b")],
        [{"from": "c", "to": "a", "when": True}, {"from": "c", "to": "b", "when": "maybe"}],
    )
    found = check(body)
    assert [(p.code, p.field) for p in found] == [(Code.INVALID_FIELD, "edges[1].when")]
    assert parse(graph(body["components"], body["edges"][:1]), TASK_TYPES, 10).edges[0].when == (
        "true"
    )


def test_a_repeated_edge_is_named() -> None:
    found = check(graph([node("a"), node("b")], [edge("a", "b"), edge("a", "b")]))
    assert [(p.code, p.edge) for p in found] == [(Code.DUPLICATE_EDGE, 1)]


def test_the_node_cap() -> None:
    body = graph([node(f"n{i}") for i in range(4)], [edge(f"n{i}", f"n{i + 1}") for i in range(3)])
    assert codes(body, max_nodes=4) == []
    (problem,) = check(body, max_nodes=3)
    assert problem.code is Code.TOO_MANY_NODES and "at most 3" in problem.message


def test_the_shape_of_the_body() -> None:
    assert codes([]) == ["invalid_field"]
    assert codes({}) == ["invalid_field", "invalid_field"]  # name, components
    assert codes(graph([], name=" ")) == ["invalid_field", "no_nodes"]
    assert codes(graph([node("a")], name="x" * 201)) == ["invalid_field"]
    found = check({"name": "g", "components": [node("a"), "b", {"id": "c"}], "edges": {}, "x": 1})
    assert [(p.code, p.field) for p in found] == [
        (Code.INVALID_FIELD, "x"),
        (Code.INVALID_FIELD, "edges"),
        (Code.INVALID_FIELD, "components[1]"),
        (Code.INVALID_FIELD, "components[2].type"),
    ]


def test_a_broken_component_keeps_its_id_for_edges() -> None:
    body = graph([node("a"), {"id": "b", "type": 3}], [edge("a", "b")])
    assert [p.field for p in check(body)] == ["components[1].type"]


def test_every_problem_is_listed_at_once() -> None:
    body = {
        "name": "",
        "components": [
            node("start"),
            node("start"),
            {"id": "loop1", "type": "llm.invoke", "config": {"promptTemplate": ""}},
            node("odd", "teleport"),
            node("a"),
            node("b"),
            node("lonely", "wait", seconds=-1),
        ],
        "edges": [edge("start", "loop1"), edge("a", "b"), edge("b", "a"), edge("a", "nowhere")],
    }
    found = check(body)
    assert [p.code.value for p in found] == [
        "invalid_field",  # name
        "duplicate_id",
        "bad_config",  # llm.invoke with an empty prompt
        "unknown_type",
        "bad_config",  # wait -1
        "unknown_edge_end",
        "cycle",
        "unreachable",
        "unreachable",
    ]
    with pytest.raises(errors.InvalidGraph) as raised:
        parse(body, TASK_TYPES, MAX_NODES)
    refused = raised.value
    assert refused.code == "invalid_graph" and refused.status == 422
    assert [p["code"] for p in refused.details["problems"]] == [p.code.value for p in found]
    assert refused.details["problems"][1] == {
        "code": "duplicate_id",
        "message": "node id 'start' is used more than once",
        "node": "start",
        "field": "components[1]",
    }
    assert "and 8 more problems" in refused.message


def test_the_list_is_bounded() -> None:
    body = graph([node(f"n{i}", "nothing") for i in range(300)])
    found = check(body, max_nodes=500)
    assert len(found) == MAX_PROBLEMS + 1
    assert found[-1].code is Code.TOO_MANY_PROBLEMS and "200 more" in found[-1].message


def test_a_long_chain_is_checked_without_recursion() -> None:
    n = 5000
    body = graph([node(f"n{i}") for i in range(n)], [edge(f"n{i}", f"n{i + 1}") for i in range(n)])
    body["edges"][-1] = edge(f"n{n - 1}", "n1")
    (problem,) = check(body, max_nodes=n)
    assert problem.code is Code.CYCLE and problem.nodes is not None and len(problem.nodes) == n - 1
