"""The planning protocol inside a turn (seed 000 §16.2, all ten stages).

1 restate the intent · 2 check the project context · 3 list requirements, mark the
missing · 4 ask focused questions (conversation -> waiting_for_user) · 5 offer forks ·
6 draft a staged plan with an owner, task type and parameters per step · 7 check the
laws per step · 8 show the plan (a ``plan`` event and a readable message) · 9 on
approval create the run and tasks · 10 switch to execution. The state between
turns lives in the conversation's metadata under ``planning``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, message
from hansa.domain.plan import Plan
from hansa.engine import laws, runs
from hansa.engine.planning import answers
from hansa.engine.planning.playbooks import Playbook, builtin
from hansa.engine.planning.triage import Triage
from hansa.engine.turns.pipeline import TurnContext
from hansa.store import conversations
from hansa.tasks.base import page_slug


def _say(ctx: TurnContext, text: str, **metadata: Any) -> None:
    ctx.batch().message(
        message.Kind.ASSISTANT,
        message.Author.ASSISTANT,
        text,
        agent_id=ctx.supervisor.id,
        metadata=metadata,
    )


def _think(ctx: TurnContext, text: str) -> None:
    ctx.batch().thinking(text, agent_id=ctx.supervisor.id, phase="planning")


def _remember(ctx: TurnContext, state: dict[str, Any] | None, waiting: bool) -> None:
    now = ctx.services.clock()
    target = conversation.State.WAITING_FOR_USER if waiting else conversation.State.AI_ACTIVE

    def save(conn: Connection) -> None:
        conversations.set_planning(conn, ctx.tenant_id, ctx.conversation_id, state, now)
        conversations.move(conn, ctx.tenant_id, ctx.conversation_id, target, now)

    ctx.also(save)


def start(ctx: TurnContext, decision: Triage) -> None:
    """Stages 1–5 for a new request; then 6–8 if nothing is missing."""
    assert decision.playbook is not None and ctx.project_context is not None
    playbook = decision.playbook
    kind = "a multi-agent run" if len({s.owner for s in playbook.steps()}) > 1 else "a run"
    _think(ctx, f"{ctx.supervisor.display_name} is planning {kind} for this request")
    plan = _fill(playbook, playbook.new_plan(), ctx.user_text, first=True, source="request")
    project = ctx.project_context
    preview = playbook.render(plan, project.project_name or "your project", project.project_id)
    _think(
        ctx,
        f"{ctx.supervisor.display_name} is checking required inputs: "
        + ", ".join(r.label.lower() for r in plan.requirements),
    )
    _proceed(ctx, playbook, plan, intent=preview.intent)


def proceed(ctx: TurnContext, state: dict[str, Any]) -> None:
    """A user message while a plan is open: answers, approval, changes or cancel."""
    playbook = next((p for p in builtin() if p.id == state.get("playbook")), None)
    plan = Plan.model_validate(state["plan"])
    run_id = state.get("runId")
    if run_id and answers.is_approval(ctx.user_text):
        ctx.approve_run = run_id
        _say(ctx, "Thanks — starting the run now. I will report back when the team is done.")
        _remember(ctx, None, waiting=False)
        return
    if answers.is_cancel(ctx.user_text):
        if run_id:
            ctx.cancel_run = run_id
        _say(ctx, "All right, I have dropped this plan. Nothing was changed.")
        _remember(ctx, None, waiting=False)
        return
    if playbook is None:  # a model-drafted plan: changes go through approve with edits
        _say(
            ctx,
            "Say “yes, proceed” to start this plan, or “cancel”. To change a step, use "
            "Adjust on the plan card.",
        )
        _remember(ctx, state, waiting=True)
        return
    changed = _fill(playbook, plan, ctx.user_text, first=False, source="user", overwrite=True)
    if run_id and changed == plan:
        _say(
            ctx,
            "I did not catch a change. Say “yes, proceed” to start, name a change such as "
            "“slug: our-services”, or say “cancel”.",
        )
        _remember(ctx, state, waiting=True)
        return
    if run_id:
        ctx.cancel_run = run_id  # the adjusted plan replaces the one awaiting approval
        _think(ctx, f"{ctx.supervisor.display_name} is adjusting the plan")
    _proceed(ctx, playbook, changed, intent=state.get("intent", ""))


def _fill(
    playbook: Playbook, plan: Plan, text: str, *, first: bool, source: str, overwrite: bool = False
) -> Plan:
    found = answers.extract(playbook, plan, text, first=first)
    requirements = []
    for r in plan.requirements:
        value = found.get(r.name)
        if value is not None and (r.value is None or overwrite):
            r = r.model_copy(update={"value": value, "source": source})
        requirements.append(r)
    derived = []
    for r in requirements:
        spec = playbook.spec(r.name)
        if (
            spec.derive
            and spec.derive.startswith("slug:")
            and (r.value is None or r.source == "derived")
        ):
            base = next((x.value for x in requirements if x.name == spec.derive[5:]), None)
            if base:
                r = r.model_copy(update={"value": page_slug(base), "source": "derived"})
        derived.append(r)
    chosen = next((r.value for r in derived if playbook.spec(r.name).fork), plan.chosen_fork)
    return plan.model_copy(update={"requirements": derived, "chosen_fork": chosen})


def _proceed(ctx: TurnContext, playbook: Playbook, plan: Plan, *, intent: str) -> None:
    missing = plan.missing
    if missing:
        _think(
            ctx,
            f"{ctx.supervisor.display_name} is asking for what is missing: "
            + ", ".join(r.label.lower() for r in missing),
        )
        _say(
            ctx,
            _questions(playbook, intent, plan, missing),
            planning="questions",
            missing=[r.name for r in missing],
        )
        state = {"playbook": playbook.id, "plan": plan.model_dump(mode="json"), "intent": intent}
        _remember(ctx, state, waiting=True)
        return
    project = ctx.project_context
    assert project is not None
    full = playbook.render(plan, project.project_name or "your project", project.project_id)
    state = {"playbook": playbook.id, "plan": plan.model_dump(mode="json"), "intent": intent}
    show(ctx, full, state)


def show(ctx: TurnContext, full: Plan, state: dict[str, Any]) -> None:
    """Stages 6–8: the staged plan, checked by the laws, stored as a run awaiting approval."""
    project = ctx.project_context
    assert project is not None
    steps = sum(len(s.steps) for s in full.stages)
    _think(
        ctx,
        f"{ctx.supervisor.display_name} is drafting a staged plan with "
        f"{steps} step{'' if steps == 1 else 's'}",
    )
    _think(ctx, f"{ctx.supervisor.display_name} is checking the laws and reversibility per step")
    drafts = runs.drafts_from_plan(full, project.project_id)
    batch = ctx.batch()
    services = ctx.services

    def create(conn: Connection) -> None:
        try:
            new_run = runs.store_run(
                services,
                conn,
                ctx.tenant_id,
                ctx.conversation_id,
                full.title,
                project.project_id,
                drafts,
                batch,
                plan=full,
            )
        except (laws.ScopeDenied, errors.InvalidInput) as exc:
            ctx.refusal = exc.message
            return
        ctx.created_run = new_run.id
        shown = full.model_dump(mode="json", by_alias=True)
        batch.event(event.PlanData(plan=shown, run_id=new_run.id), agent_id=ctx.supervisor.id)
        batch.message(
            message.Kind.ASSISTANT,
            message.Author.ASSISTANT,
            _plan_text(ctx, full),
            agent_id=ctx.supervisor.id,
            metadata={"planning": "approval", "runId": new_run.id},
        )

    def remember(conn: Connection) -> None:  # after the turn's own state changes
        if ctx.created_run is None:
            return
        now = services.clock()
        conversations.set_planning(
            conn, ctx.tenant_id, ctx.conversation_id, {**state, "runId": ctx.created_run}, now
        )
        conversations.move(
            conn, ctx.tenant_id, ctx.conversation_id, conversation.State.WAITING_FOR_USER, now
        )

    ctx.planned = create
    ctx.also(remember)


def _questions(playbook: Playbook, intent: str, plan: Plan, missing: list[Any]) -> str:
    lines = [f"Goal: {intent}", "", "Before I plan this I need a few details:"]
    lines += [f"{i}. {r.label} — {r.question}" for i, r in enumerate(missing, start=1)]
    if plan.forks and any(r.name == "layout" for r in missing):
        lines += ["", "Layout options:"]
        lines += [f"{f.id}) {f.title} — {f.description}" for f in plan.forks]
    if len(missing) > 1:  # how to answer them all at once, in this playbook's own words
        example = "; ".join(_example(playbook, r.name) for r in missing)
        lines += ["", f"You can answer in one message, e.g. “{example}”."]
    return "\n".join(lines)


def _example(playbook: Playbook, name: str) -> str:
    spec = playbook.spec(name)
    label = spec.aliases[0] if spec.aliases else spec.name
    if spec.fork and playbook.forks:  # the second choice, if any: "layout B"
        return f"{label} {playbook.forks[min(1, len(playbook.forks) - 1)].id}"
    return f"{label}: …"


def _plan_text(ctx: TurnContext, plan: Plan) -> str:
    names = {a.id: a.display_name for a in ctx.services.roster}
    lines = [f"Here is the plan — {plan.intent}", ""]
    for stage in plan.stages:
        parts = [f"{names.get(s.owner, s.owner)}: {s.summary}" for s in stage.steps]
        together = (
            " (in parallel)" if len(stage.steps) > 1 and "parallel" not in stage.title else ""
        )
        lines.append(f"Group {stage.group} — {stage.title}{together}: " + "; ".join(parts))
    inputs = [r.name for r in plan.requirements]
    if not inputs:  # a model-drafted plan: its steps are changed on the plan card
        lines += ["", "Say “yes, proceed” to start, or adjust a step on the plan card."]
        return "\n".join(lines)
    example = "slug" if "slug" in inputs else plan.requirements[0].label.lower()
    lines += ["", f"Say “yes, proceed” to start, or tell me what to change (e.g. “{example}: …”)."]
    return "\n".join(lines)
