"""Stages 6–8 of planning: the run a plan lives in, from Hans's first question (a run in
``planning``) to the staged plan shown, checked by the laws and awaiting approval."""

from __future__ import annotations

from hansa import errors
from hansa.domain import event, secrets
from hansa.domain.base import new_id
from hansa.domain.plan import Plan, PlanningState
from hansa.engine import laws, runs
from hansa.engine.planning import escalation, where
from hansa.engine.planning.request import Planned, PlanningRequest


def opened(req: PlanningRequest, state: PlanningState, title: str) -> PlanningState:
    """``state`` with the run in ``planning`` its questions belong to, opened now (in the
    turn's transaction) if it has none yet."""
    if state.planning_run_id is not None or state.run_id is not None:
        return state
    run_id = new_id()

    def open_run(change: runs.RunChange) -> None:
        runs.open_planning(change, req.conversation_id, title)

    req.batch.then(runs.on_run(req.services, req.tenant_id, run_id, req.batch, open_run))
    return state.model_copy(update={"planning_run_id": run_id})


def said(notes: list[str], text: str) -> str:
    """What Hans understood (or chose) first, then ``text``."""
    return "\n".join([*notes, "", text]) if notes else text


def show(
    req: PlanningRequest, full: Plan, state: PlanningState, notes: list[str] | None = None
) -> Planned:
    """Stages 6–8: the staged plan, checked by the laws, stored as a run awaiting approval.

    Escalation rules first give risky steps to their lead, or a review by the lead
    (``escalation``). If the laws refuse the plan, Hans says so instead, in the same
    transaction, and forgets it.
    """
    hans = req.supervisor
    full, escalated = escalation.escalate(
        full,
        escalation.builtin(),
        registry=req.services.registry,
        agents=req.services.agents.built_ins,
        project=req.project,
    )
    if state.playbook is None:  # a model-drafted plan is kept as escalated
        state = state.model_copy(update={"plan": full})
    steps = sum(len(s.steps) for s in full.stages)
    req.think(
        f"{hans.display_name} is drafting a staged plan with "
        f"{steps} step{'' if steps == 1 else 's'}"
    )
    req.think(f"{hans.display_name} is checking the laws and reversibility per step")
    drafts = runs.drafts_from_plan(full, req.project.project_id)
    run_id = state.planning_run_id or new_id()
    new = runs.NewRun(
        req.conversation_id,
        full.title,
        req.project.project_id,
        drafts,
        full,
        opened=state.planning_run_id is not None,
    )
    shown = state.model_copy(update={"run_id": run_id, "planning_run_id": None, "pending": None})

    def create(change: runs.RunChange) -> None:
        try:
            runs.store_run(change, new)
        except (laws.ScopeDenied, errors.InvalidInput) as exc:
            req.say(
                f"I can't plan this as asked: {exc.message}. Nothing was changed.", refused=True
            )
            if new.opened:  # the run opened for the questions ends with the plan
                runs.cancelling(req.services, req.tenant_id, run_id, req.batch)(change.conn)
            req.remember(change.conn, None, waiting=False)
            return
        _announce(req, escalated)
        plan = secrets.mask(full.model_dump(mode="json", by_alias=True))
        change.batch.event(event.PlanData(plan=plan, run_id=run_id), agent_id=hans.id)
        text = said(notes or [], _plan_text(req, full, state.site))
        req.say_in(change.batch, text, planning="approval", runId=run_id)
        req.remember(change.conn, shown, waiting=True)

    req.batch.then(runs.on_run(req.services, req.tenant_id, run_id, req.batch, create))
    return Planned(run_id)


def _announce(req: PlanningRequest, outcomes: list[escalation.Outcome]) -> None:
    """A status chip per escalated step and a thinking entry per matched one (seed 000
    §6.3), once the laws let the plan stand."""
    names = req.services.agents.names()
    hans = req.supervisor
    for outcome in outcomes:
        owner = names.get(outcome.step.owner, outcome.step.owner)
        req.think(secrets.mask_text(escalation.thought(outcome, hans.display_name, owner)))
        if isinstance(outcome, escalation.Escalation):
            req.batch.status(
                secrets.mask_text(escalation.chip(outcome, owner)), agent_id=outcome.lead.id
            )


def _landing(req: PlanningRequest, plan: Plan, site: str | None) -> list[str]:
    """Where each change lands: one line per step that changes something outside."""
    registry, names = req.services.registry, req.services.agents.names()
    lines = []
    for stage in plan.stages:
        for s in stage.steps:
            if s.task_type not in registry:
                continue
            lands = where.landing(req.project, registry.get(s.task_type), site)
            if lands is not None:
                lines.append(f"- {names.get(s.owner, s.owner)}'s step ({s.task_type}): {lands}")
    return ["", "Where the changes land:", *lines] if lines else []


def _plan_text(req: PlanningRequest, plan: Plan, site: str | None) -> str:
    names = req.services.agents.names()
    lines = [f"Here is the plan — {plan.intent}", ""]
    for stage in plan.stages:
        parts = [
            f"{names.get(s.owner, s.owner)}: {secrets.mask_text(s.summary)}" for s in stage.steps
        ]
        together = (
            " (in parallel)" if len(stage.steps) > 1 and "parallel" not in stage.title else ""
        )
        lines.append(f"Group {stage.group} — {stage.title}{together}: " + "; ".join(parts))
    lines += _landing(req, plan, site)
    inputs = [r.name for r in plan.requirements]
    if not inputs:  # a model-drafted plan: its steps are changed on the plan card
        lines += ["", "Say “yes, proceed” to start, or adjust a step on the plan card."]
        return "\n".join(lines)
    example = "slug" if "slug" in inputs else plan.requirements[0].label.lower()
    lines += ["", f"Say “yes, proceed” to start, or tell me what to change (e.g. “{example}: …”)."]
    return "\n".join(lines)
