"""What matched rules do, as steps of the trigger's transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, handoff, message
from hansa.domain.base import new_id
from hansa.domain.graph import Graph
from hansa.domain.rules import Action, Firing, Trigger
from hansa.engine import laws, runs
from hansa.engine.graphs import start
from hansa.engine.handoffs import service
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.store import conversations
from hansa.store import graphs as graph_rows
from hansa.store import rules as rule_rows

MAX_ACTIONS_PER_TRIGGER = 20
"""How many actions one trigger may run in all; the rest are skipped and said so. Actions
never fire a trigger themselves, so a rule cannot call itself in a loop."""

ENDS_THE_TURN = frozenset(
    {conversation.State.HANDOFF_PENDING, conversation.State.RESOLVED, conversation.State.ARCHIVED}
)
"""States after which no assistant answers the message."""


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
    """The ``rule_evaluated`` event (matched rules in full, the others counted) and, in the
    same transaction, each matched rule's firing in its last firings."""
    matched = [f for f in firings if f.matched]
    scene.batch.event(
        event.RuleEvaluatedData(
            trigger=trigger, firings=matched, skipped=len(firings) - len(matched)
        ),
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
    """Apply the matched rules' actions in order (priority order), up to the limit."""
    applied = Applied()
    done = 0
    for firing in firings:
        if not firing.matched:
            continue
        for action in firing.actions:
            if done == MAX_ACTIONS_PER_TRIGGER:
                applied.skipped += 1
                continue
            done += 1
            _one(scene, firing.rule_id, action, applied)
    if applied.skipped:
        hans = scene.services.supervisor
        scene.batch.thinking(
            f"{hans.display_name} skipped {applied.skipped} rule actions past the limit of "
            f"{MAX_ACTIONS_PER_TRIGGER} per message",
            agent_id=hans.id,
            phase=message.Phase.ROUTING,
        )
    return applied


def _one(scene: Scene, rule_id: str, action: Action, applied: Applied) -> None:
    services, batch, params = scene.services, scene.batch, action.params
    hans = services.supervisor
    match action.type:
        case "route":
            agent = str(params.get("agentId", ""))
            if not services.has_agent(agent):
                raise errors.InvalidInput(f"rule {rule_id} routes to unknown agent {agent!r}")
            reason = str(params.get("reason") or f"rule {rule_id}")
            applied.route = applied.route or RouteTo(rule_id, agent, reason)
        case "message.send":
            author = services.agent(str(params.get("agentId") or hans.id))
            batch.message(
                message.Kind.ASSISTANT,
                message.Author.ASSISTANT,
                str(params.get("content", "")),
                agent_id=author.id,
                metadata={"ruleId": rule_id},
            )
        case "context.update":
            batch.then(lambda conn: _update_context(scene, conn, dict(params.get("set") or {})))
        case "state.transition":
            target = conversation.State(str(params.get("to")))
            batch.then(lambda conn: _move(scene, conn, target))
            applied.ends_turn = applied.ends_turn or target in ENDS_THE_TURN
        case "handoff.create":
            ask = service.Ask(
                reason=str(params.get("reason") or f"rule {rule_id}"),
                priority=params.get("priority", "normal"),
                requested_by=handoff.RequestedBy(kind="rule", id=rule_id),
            )
            opening = service.opening(services, scene.tenant_id, scene.conversation_id, ask, batch)
            batch.then(opening)
            applied.ends_turn = True
        case "graph.run":
            applied.runs.append(_start_graph(scene, action))
        case _:
            applied.runs.append(_start_run(scene, rule_id, action))


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
    conversations.set_context(
        conn, scene.tenant_id, scene.conversation_id, merged, scene.services.clock()
    )


def _move(scene: Scene, conn: Connection, target: conversation.State) -> None:
    now = scene.services.clock()
    conversations.move(conn, scene.tenant_id, scene.conversation_id, target, now)


def _start_run(scene: Scene, rule_id: str, action: Action) -> str:
    """A task-type action: a one-step run, checked by the laws, started at once."""
    services = scene.services
    task_type = services.registry.get(action.type)
    params = {k: v for k, v in action.params.items() if k != "agentId"}
    owner = action.params.get("agentId") or next(
        (a.id for a in services.roster if laws.holds(a, task_type)),
        services.supervisor.id,
    )
    draft = runs.TaskDraft(
        "A",
        action.type,
        params,
        str(owner),
        runs.default_summary(action.type, params),
        project_id=scene.project_id,
    )
    title = f"Rule {rule_id}: {draft.summary}"[:200]
    new = runs.NewRun(scene.conversation_id, title, scene.project_id, [draft])
    run_id = new_id()
    batch = scene.batch
    batch.then(
        runs.on_run(services, scene.tenant_id, run_id, batch, lambda c: runs.store_run(c, new))
    )
    batch.then(runs.approving(services, scene.tenant_id, run_id, batch))
    batch.after_commit(services.wake_worker)
    return run_id
