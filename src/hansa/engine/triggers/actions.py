"""What matched rules do, as steps of the trigger's transaction: a ``route`` and a
``graph.run`` are the trigger's own decisions; every other action of a rule is a node of
the rule's one chain (the same node types as a graph's)."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import action_lists, conversation, event, handoff, message
from hansa.domain.graph import Graph
from hansa.domain.node_configs import canonical
from hansa.domain.rules import Action, Firing, Trigger
from hansa.engine import templates
from hansa.engine.graphs import start
from hansa.engine.handoffs import service
from hansa.engine.runtime import agent_state_events
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.store import conversations
from hansa.store import graphs as graph_rows
from hansa.store import rules as rule_rows
from hansa.tasks.base import Change, MergeContext, MoveConversation, OpenHandoff, TaskContext

MAX_ACTIONS_PER_TRIGGER = 20
"""How many actions one trigger may run in all; the rest are skipped and said so. Actions
never fire a trigger themselves, so a rule cannot call itself in a loop."""


@dataclass(frozen=True)
class RouteTo:
    """A ``route`` action's choice: who answers, by which rule, why."""

    rule_id: str
    agent_id: str
    reason: str


@dataclass
class Applied:
    """What the actions decided for the rest of the turn."""

    route: RouteTo | None = None
    ends_turn: bool = False
    skipped: int = 0
    runs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Scene:
    """Where the trigger happened: whose conversation, in which batch."""

    services: Services
    tenant_id: str
    conversation_id: str
    project_id: str | None
    batch: Batch
    facts: dict[str, Any] = field(default_factory=dict)
    """What the rules tested (a ``graph.run`` gives them to its graph as inputs)."""


def record(scene: Scene, trigger: Trigger, firings: list[Firing]) -> None:
    """The ``rule_evaluated`` event (matched rules in full, and rules a pattern test ran out
    of time in, so that is seen; the others counted) and, in the same transaction, each
    matched rule's firing in its last firings."""
    matched = [f for f in firings if f.matched]
    shown = [f for f in firings if f.matched or any(c.timed_out for c in f.conditions)]
    scene.batch.event(
        event.RuleEvaluatedData(trigger=trigger, firings=shown, skipped=len(firings) - len(shown)),
        agent_id=scene.services.supervisor.id,
    )
    if matched:
        now = scene.services.clock()
        scene.batch.then(
            lambda conn: rule_rows.record_firings(
                conn, scene.tenant_id, trigger, scene.conversation_id, matched, now
            )
        )


def apply(scene: Scene, firings: list[Firing]) -> Applied:
    """Apply the matched rules' actions (priority order), up to the limit: ``route`` and
    ``graph.run`` as the trigger's own decisions, every other action as a node of its
    rule's chain (:func:`_chain`)."""
    applied = Applied()
    done = 0
    for firing in firings:
        if not firing.matched:
            continue
        nodes: list[Action] = []
        for action in firing.actions:
            if done == MAX_ACTIONS_PER_TRIGGER:
                applied.skipped += 1
                continue
            done += 1
            if action.type == "route":
                agent = str(action.params.get("agentId", ""))
                # checked when the rule was saved; an agent removed since is the route
                # stage's to notice (Hans answers and says why)
                reason = str(action.params.get("reason") or f"rule {firing.rule_id}")
                applied.route = applied.route or RouteTo(firing.rule_id, agent, reason)
            elif action.type == "graph.run":
                applied.runs.append(_start_graph(scene, action))
            else:
                nodes.append(action)
        if nodes:
            _chain(scene, firing.rule_id, nodes, applied)
    if applied.skipped:
        hans = scene.services.supervisor
        scene.batch.thinking(
            f"{hans.display_name} skipped {applied.skipped} rule actions past the limit of "
            f"{MAX_ACTIONS_PER_TRIGGER} per message",
            agent_id=hans.id,
            phase=message.Phase.ROUTING,
        )
    return applied


def _chain(scene: Scene, rule_id: str, nodes: list[Action], applied: Applied) -> None:
    """A rule's actions as one chain of graph nodes (decision 0023): the same task types,
    executors and parameters as a graph's, in order, each result open to the next through
    templates, the trigger's facts in scope. The chain's first nodes that only change the
    conversation take effect here, in the trigger's transaction, as the turn needs them (a
    handoff ends it before any answer); from the first node that must be executed (a model,
    an outside call, a task, a branch), the rest is a run of the chain, started at once."""
    scope = _scope(scene.facts)
    settled = 0
    for n, action in enumerate(nodes):
        params = _filled(scene, action, scope)
        if params is None:
            break
        _at_once(scene, rule_id, n, action, params)
        settled += 1
    rest = nodes[settled:]
    if rest:
        applied.runs.append(_start_chain(scene, rule_id, rest))
    applied.ends_turn = applied.ends_turn or any(_ends_turn(scene, a) for a in nodes)


def _scope(facts: dict[str, Any]) -> templates.Scope:
    def mapping(name: str) -> dict[str, Any]:
        value = facts.get(name)
        return value if isinstance(value, dict) else {}

    return templates.Scope(
        message=mapping("message"),
        user=mapping("user"),
        context=mapping("context"),
        project=mapping("project"),
    )


def _ends_turn(scene: Scene, action: Action) -> bool:
    """Whether the node ends the turn (``TaskType.ends_turn``: a handoff, a move to a state
    where no one answers), by its parameters as written; not when they do not validate."""
    task_type = scene.services.registry.for_node(action.type)
    if task_type.ends_turn is None:
        return False
    try:
        params = task_type.params.model_validate(canonical(action.type, action.params))
    except ValidationError:
        return False
    return task_type.ends_turn(params)


def _filled(scene: Scene, action: Action, scope: templates.Scope) -> BaseModel | None:
    """The parameters of a node that runs at once (``TaskType.at_once``), filled from the
    facts and validated by its task type; None for any other node, or when they do not fill
    (a fact the save could not know is missing): the node then runs in the chain's run,
    where that is its failure, said on the run card."""
    task_type = scene.services.registry.for_node(action.type)
    if not task_type.at_once:
        return None
    config = canonical(action.type, action.params)
    try:
        limit = scene.services.settings.max_node_params_bytes
        filled = templates.render_value(config, scope, max_bytes=limit)
        params: BaseModel = task_type.params.model_validate(filled)
    except (errors.UserError, ValidationError):
        return None
    return params


def _at_once(scene: Scene, rule_id: str, n: int, action: Action, params: BaseModel) -> None:
    """Run a node whose executor only asks for conversation changes (or says something)
    here: its executor called with its filled parameters, what it asked for made in the
    trigger's transaction."""
    services, batch = scene.services, scene.batch
    task_type = services.registry.for_node(action.type)
    hans = services.supervisor

    def say(text: str) -> None:
        batch.message(
            message.Kind.ASSISTANT,
            message.Author.ASSISTANT,
            text,
            agent_id=hans.id,
            metadata={"ruleId": rule_id},
        )

    changes: list[Change] = []
    ctx = TaskContext(
        scene.tenant_id,
        scene.project_id,
        f"rule:{rule_id}:{n}",
        f"rule:{rule_id}:{scene.conversation_id}:{n}",
        say=say,
        changes=changes,
    )
    _finished(task_type.executor(params, ctx))
    for change in changes:
        _change(scene, rule_id, change)


def _finished(work: Awaitable[Any]) -> None:
    """Complete an executor that never waits (``TaskType.at_once``) in place: it runs
    inside the trigger's transaction, where nothing may be awaited."""
    steps = work.__await__()
    try:
        next(steps)
    except StopIteration:
        return
    raise RuntimeError("an executor of a node run at once waited for something")


def _change(scene: Scene, rule_id: str, change: Change) -> None:
    batch = scene.batch
    match change:
        case MergeContext(values=values):
            batch.then(lambda conn: _update_context(scene, conn, dict(values)))
        case MoveConversation(to=target):
            batch.then(lambda conn: _move(scene, conn, target))
        case OpenHandoff(reason=reason, priority=priority):
            ask = service.Ask(
                reason=reason,
                priority=priority,
                requested_by=handoff.RequestedBy(kind="rule", id=rule_id),
            )
            batch.then(
                service.opening(scene.services, scene.tenant_id, scene.conversation_id, ask, batch)
            )


def _start_chain(scene: Scene, rule_id: str, nodes: list[Action]) -> str:
    """The rest of a rule's chain as a graph's run (``graphId`` ``rule:<id>``), started in
    the trigger's transaction, its templates given the trigger's facts; its nodes owned by
    the agent an action names, else Hans, else (a task type Hans may not run) the first
    roster agent that may."""
    services = scene.services
    compiled = action_lists.chain([a.model_dump() for a in nodes])
    chain = Graph.model_validate(
        {
            "id": f"rule:{rule_id}",
            "tenantId": scene.tenant_id,
            "version": 1,
            "name": f"Rule {rule_id}",
            "components": compiled.components,
            "edges": compiled.edges,
            "createdAt": services.clock(),
            "createdBy": f"rule:{rule_id}",
        }
    )
    named = next((str(a.params["agentId"]) for a in nodes if a.params.get("agentId")), None)
    owner = named or services.supervisor.id  # a node Hans may not run goes to one who may
    request = start.GraphRunRequest(scene.conversation_id, owner, dict(scene.facts))
    return start.starting(
        services, scene.tenant_id, lambda conn: chain, request, scene.project_id, scene.batch
    )


def _start_graph(scene: Scene, action: Action) -> str:
    """A ``graph.run`` action: the graph's run, started in the trigger's transaction, its
    templates given the trigger's facts (``message``, ``context``, ``user``…) and the
    action's own ``inputs`` over them."""
    params, services = action.params, scene.services
    graph_id, version = str(params["graphId"]), params.get("version")
    inputs = {**scene.facts, **dict(params.get("inputs") or {})}
    agent = str(params.get("agentId") or services.supervisor.id)
    request = start.GraphRunRequest(scene.conversation_id, agent, inputs)
    tenant = scene.tenant_id

    def found(conn: Connection) -> Graph:
        return graph_rows.get(conn, tenant, graph_id, int(version) if version else None)

    return start.starting(services, tenant, found, request, scene.project_id, scene.batch)


def _update_context(scene: Scene, conn: Connection, changes: dict[str, Any]) -> None:
    current = conversations.get(conn, scene.tenant_id, scene.conversation_id)
    merged = {**current.context, **changes}
    limit = scene.services.settings.max_conversation_context_bytes
    refused = templates.context_too_large(merged, limit)
    if refused is not None:  # the trigger's transaction fails, and changes nothing
        raise errors.InvalidInput(refused, details={"field": "context"})
    conversations.set_context(
        conn, scene.tenant_id, scene.conversation_id, merged, scene.services.clock()
    )


def _move(scene: Scene, conn: Connection, target: conversation.State) -> None:
    now = scene.services.clock()
    conversations.move(conn, scene.tenant_id, scene.conversation_id, target, now)
    agent_state_events.announce_cleared(
        conn, scene.batch, scene.tenant_id, scene.conversation_id, target
    )
