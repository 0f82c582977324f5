"""The tools an agent is offered, and the laws' verdict on each call its model makes."""

from __future__ import annotations

from hansa.domain.project import ProjectContext
from hansa.engine import laws
from hansa.engine.roster import default_roster
from hansa.engine.toolbox import Refused, Runs, Toolbox, Waits, wire_name
from hansa.models.base import RequestParams, ToolCall
from hansa.tasks.registry import default_registry

AGENTS = {a.id: a for a in default_roster()}
REGISTRY = default_registry()
OPEN = ProjectContext(project_id="p1", project_name="Aquaverter")


def _call(name: str, **arguments: object) -> ToolCall:
    return ToolCall("call_1", name, dict(arguments))


def test_an_agent_is_offered_the_task_types_its_capabilities_allow() -> None:
    hans = Toolbox(REGISTRY, AGENTS["chief"], OPEN)
    expected = sorted(
        t.name for t in REGISTRY.all() if laws.holds(AGENTS["chief"], t) and not t.graph_node
    )

    names = [d.name for d in hans.definitions()]

    assert names == expected
    assert {"wait", "entity.read", "create_ticket", "run_audit"} <= set(names)
    assert "agent_state.update" in names, "every agent may keep notes"
    assert "delete_page" not in names and "webhook.call" not in names
    assert "message.send" not in names and "llm.invoke" not in names, "graph nodes only"
    RequestParams(tools=hans.definitions())  # unique names, valid as a call's tools


def test_a_graph_node_type_is_no_tool_even_when_named() -> None:
    refused = Toolbox(REGISTRY, AGENTS["chief"], OPEN).judge(_call("message.send", text="hi"))

    assert isinstance(refused, Refused) and refused.code == "unknown_tool"


def test_a_project_that_allows_fewer_task_types_narrows_the_tools() -> None:
    locked = OPEN.model_copy(update={"allowed_task_types": ("wait", "delete_page")})

    names = [d.name for d in Toolbox(REGISTRY, AGENTS["chief"], locked).definitions()]

    assert names == ["wait"], "Hans lacks cms_pages; the project allows no other of his"


def test_a_definition_carries_the_schema_and_says_when_consent_is_needed() -> None:
    tools = {d.name: d for d in Toolbox(REGISTRY, AGENTS["webEngineer"], OPEN).definitions()}

    delete = tools["delete_page"]
    assert delete.parameters == REGISTRY.get("delete_page").schema()
    assert "waits for the user's confirmation" in delete.description
    assert "confirmation" not in tools["create_page"].description
    hooks = {d.name: d for d in Toolbox(REGISTRY, AGENTS["technicalLead"], OPEN).definitions()}
    assert "Some calls cannot be undone" in hooks["webhook.call"].description


def test_names_on_the_wire_map_back_to_task_types() -> None:
    box = Toolbox(REGISTRY, AGENTS["chief"], OPEN)

    assert wire_name("entity.read") == "entity_read"
    assert box.name_of("entity_read") == "entity.read"
    assert box.name_of("entity.read") == "entity.read"
    assert box.name_of("made_up") == "made_up"
    assert isinstance(box.judge(_call("entity_read", entityId="e1")), Runs)


def test_an_unknown_tool_is_refused() -> None:
    verdict = Toolbox(REGISTRY, AGENTS["chief"], OPEN).judge(_call("launch_rockets"))

    assert verdict == Refused("unknown_tool", "there is no tool called 'launch_rockets'")


def test_a_tool_outside_the_agents_scope_is_refused_though_the_model_named_it() -> None:
    verdict = Toolbox(REGISTRY, AGENTS["chief"], OPEN).judge(_call("delete_page", page="Pricing"))

    assert isinstance(verdict, Refused) and verdict.code == "scope_denied"
    assert "law of allowed scope" in verdict.message and "cms_pages" in verdict.message


def test_missing_and_invalid_arguments_are_refused_by_clarity() -> None:
    box = Toolbox(REGISTRY, AGENTS["chief"], OPEN)

    missing = box.judge(_call("create_ticket"))
    invalid = box.judge(_call("wait", seconds=-1))

    assert isinstance(missing, Refused) and missing.code == "missing_parameters"
    assert "title" in missing.message
    assert isinstance(invalid, Refused) and invalid.code == "invalid_input"


def test_a_reversible_call_runs_with_validated_parameters() -> None:
    verdict = Toolbox(REGISTRY, AGENTS["chief"], OPEN).judge(_call("wait", seconds=2))

    assert isinstance(verdict, Runs) and verdict.task_type.name == "wait"
    assert verdict.params.model_dump() == {"seconds": 2.0}


def test_an_irreversible_call_waits_and_a_vetted_get_runs() -> None:
    hook = "https://hooks.example.com/x"
    theo = AGENTS["technicalLead"]
    vetted = Toolbox(REGISTRY, theo, OPEN, trusted=frozenset({("hooks.example.com", 443)}))

    post = vetted.judge(_call("webhook.call", url=hook, method="POST"))
    get = vetted.judge(_call("webhook.call", url=hook, method="GET"))
    unvetted_get = Toolbox(REGISTRY, theo, OPEN).judge(
        _call("webhook.call", url=hook, method="GET")
    )
    delete = Toolbox(REGISTRY, AGENTS["webEngineer"], OPEN).judge(_call("delete_page", page="P"))

    assert isinstance(post, Waits) and post.parameters == {"url": hook, "method": "POST"}
    assert isinstance(get, Runs)
    assert isinstance(unvetted_get, Waits)
    assert isinstance(delete, Waits) and delete.task_type.name == "delete_page"
