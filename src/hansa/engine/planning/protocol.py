"""The planning protocol inside a turn (seed 000 §16.2, all ten stages).

1 restate the intent · 2 check the project context · 3 list requirements, mark the
missing · 4 ask focused questions (conversation -> waiting_for_user) · 5 offer forks ·
6 draft a staged plan with an owner, task type and parameters per step · 7 check the
laws per step · 8 show the plan (a ``plan`` event and a readable message) · 9 on
approval create the run and tasks · 10 switch to execution. The state between
turns lives in the conversation's metadata under ``planning``.

Answers are read by the rules first (``answers``); what they leave open, by the model
(``model_answers``: an option a description fits, or the user's own choice, said back).
Hans never asks for the same thing a third time: he goes on with the requirement's
default and says so (or, with no sensible default, puts the plan aside).
"""

from __future__ import annotations

from typing import Any

from hansa import errors
from hansa.domain import event, message, secrets
from hansa.domain.base import new_id
from hansa.domain.plan import Plan, PlanningState, Requirement
from hansa.engine import laws, runs
from hansa.engine.planning import answers, escalation, model_answers
from hansa.engine.planning.playbooks import Playbook, builtin
from hansa.engine.planning.request import (
    Adjusted,
    Approved,
    Asked,
    Cancelled,
    Planned,
    PlanningRequest,
)
from hansa.engine.planning.triage import Triage
from hansa.tasks.base import page_slug

ASKS = 2
"""How many times Hans asks for a requirement; after that he takes its default."""


def start(req: PlanningRequest, decision: Triage) -> Asked | Planned | Cancelled:
    """Stages 1–5 for a new request; then 6–8 if nothing is missing."""
    assert decision.playbook is not None
    playbook = decision.playbook
    hans = req.supervisor.display_name
    kind = "a multi-agent run" if len({s.owner for s in playbook.steps()}) > 1 else "a run"
    req.think(f"{hans} is planning {kind} for this request")
    plan = _fill(playbook, playbook.new_plan(), req.text, first=True, source="request")
    project = req.project
    preview = playbook.render(plan, project.project_name or "your project", project.project_id)
    req.think(
        f"{hans} is checking required inputs: "
        + ", ".join(r.label.lower() for r in plan.requirements)
    )
    return _proceed(req, playbook, plan, intent=preview.intent)


async def proceed(
    req: PlanningRequest, state: PlanningState
) -> Asked | Planned | Adjusted | Approved | Cancelled:
    """A user message while a plan is open: answers, approval, changes or cancel."""
    playbook = next((p for p in builtin() if p.id == state.playbook), None)
    plan, run_id = state.plan, state.run_id
    if run_id and answers.is_approval(req.text):
        req.say("Thanks — starting the run now. I will report back when the team is done.")
        req.remember_later(None, waiting=False)
        return Approved(run_id)
    if answers.is_cancel(req.text):
        req.say("All right, I have dropped this plan. Nothing was changed.")
        req.remember_later(None, waiting=False)
        return Cancelled(run_id)
    if playbook is None:  # a model-drafted plan: changes go through approve with edits
        req.say(
            "Say “yes, proceed” to start this plan, or “cancel”. To change a step, use "
            "Adjust on the plan card."
        )
        req.remember_later(state, waiting=True)
        return Asked()
    changed = _fill(playbook, plan, req.text, first=False, source="user", overwrite=True)
    if run_id and changed == plan:
        req.say(
            "I did not catch a change. Say “yes, proceed” to start, name a change such as "
            "“slug: our-services”, or say “cancel”."
        )
        req.remember_later(state, waiting=True)
        return Asked()
    if not run_id:
        notes: list[str] = []
        if changed.missing:  # what the rules left open: the model reads the message
            choices = await model_answers.read(req, playbook, changed, changed.missing)
            changed, notes = _take(playbook, changed, choices)
        return _proceed(req, playbook, changed, intent=state.intent, asked=state.asked, notes=notes)
    req.think(f"{req.supervisor.display_name} is adjusting the plan")
    # the adjusted plan replaces the one awaiting approval
    then = _proceed(req, playbook, changed, intent=state.intent, asked=state.asked)
    return Cancelled(run_id) if isinstance(then, Cancelled) else Adjusted(run_id, then)


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
    return _derive(playbook, plan, requirements)


def _derive(playbook: Playbook, plan: Plan, requirements: list[Requirement]) -> Plan:
    """``plan`` with these requirements, derived values (a slug from the title) filled in."""
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
    ids = {f.id for f in playbook.forks}
    chosen = next((r.value for r in derived if playbook.spec(r.name).fork and r.value in ids), None)
    return plan.model_copy(update={"requirements": derived, "chosen_fork": chosen})


def _set(playbook: Playbook, plan: Plan, name: str, value: str, source: str) -> Plan:
    requirements = [
        r.model_copy(update={"value": value, "source": source}) if r.name == name else r
        for r in plan.requirements
    ]
    return _derive(playbook, plan, requirements)


def _take(
    playbook: Playbook, plan: Plan, choices: list[model_answers.Choice]
) -> tuple[Plan, list[str]]:
    """The model's reading of the message, taken into the plan; what Hans says back."""
    notes = []
    for choice in choices:
        label = playbook.spec(choice.name).label
        fork = next((f for f in playbook.forks if f.id == choice.option), None)
        if fork is not None:
            plan = _set(playbook, plan, choice.name, fork.id, "user")
            notes.append(f"{label}: I took that as {fork.id}: {fork.title}.")
        elif choice.custom is not None:
            plan = _set(playbook, plan, choice.name, choice.custom, "user")
            if playbook.spec(choice.name).fork:
                notes.append(
                    f"{label}: none of the options fits that, so I will go with your own: "
                    f"“{choice.custom}”."
                )
            else:
                notes.append(f"{label}: I noted “{choice.custom}”.")
    return plan, notes


def _defaults(
    req: PlanningRequest, playbook: Playbook, plan: Plan, asked: dict[str, int]
) -> tuple[Plan, list[str]]:
    """Requirements asked ``ASKS`` times and still missing take their default; the notes
    that say so."""
    notes = []
    project = req.project.project_name or "your project"
    for r in plan.requirements:
        if not r.missing or asked.get(r.name, 0) < ASKS:
            continue
        value = playbook.default(r.name, plan, project)
        if value is None:
            continue
        plan = _set(playbook, plan, r.name, value, "default")
        fork = next((f for f in playbook.forks if f.id == value), None)
        went = f"{fork.id}: {fork.title} (the first option)" if fork else f"“{value}”"
        notes.append(
            f"{r.label}: I asked twice without an answer I could use, so I went with {went}. "
            "Tell me if you want something else."
        )
    return plan, notes


def _proceed(
    req: PlanningRequest,
    playbook: Playbook,
    plan: Plan,
    *,
    intent: str,
    asked: dict[str, int] | None = None,
    notes: list[str] | None = None,
) -> Asked | Planned | Cancelled:
    asked = dict(asked or {})
    plan, defaulted = _defaults(req, playbook, plan, asked)
    notes = [*(notes or []), *defaulted]
    hans = req.supervisor.display_name
    if defaulted:
        req.think(f"{hans} is going on with defaults for what was asked twice")
    missing = plan.missing
    stuck = [r for r in missing if asked.get(r.name, 0) >= ASKS]
    if stuck:  # asked twice, no default: not a third time
        labels = ", ".join(r.label.lower() for r in stuck)
        req.think(f"{hans} is putting the plan aside: still no {labels}")
        req.say(
            _said(
                notes,
                f"I asked twice for the {labels} without an answer I could use, and I can't "
                "choose that for you, so I have put this plan aside. Nothing was changed. Ask "
                "me again when you have it.",
            ),
            planning="aside",
            missing=[r.name for r in stuck],
        )
        req.remember_later(None, waiting=False)
        return Cancelled(None)
    if missing:
        for r in missing:
            asked[r.name] = asked.get(r.name, 0) + 1
        req.think(
            f"{hans} is asking for what is missing: " + ", ".join(r.label.lower() for r in missing)
        )
        req.say(
            _said(notes, _questions(playbook, intent, plan, missing)),
            planning="questions",
            missing=[r.name for r in missing],
        )
        state = PlanningState(playbook=playbook.id, plan=plan, intent=intent, asked=asked)
        req.remember_later(state, waiting=True)
        return Asked()
    state = PlanningState(playbook=playbook.id, plan=plan, intent=intent, asked=asked)
    project = req.project
    full = playbook.render(plan, project.project_name or "your project", project.project_id)
    return show(req, full, state, notes)


def _said(notes: list[str], text: str) -> str:
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
        agents=req.services.agents,
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
    run_id = new_id()

    new = runs.NewRun(req.conversation_id, full.title, req.project.project_id, drafts, full)

    def create(change: runs.RunChange) -> None:
        try:
            runs.store_run(change, new)
        except (laws.ScopeDenied, errors.InvalidInput) as exc:
            req.say(
                f"I can't plan this as asked: {exc.message}. Nothing was changed.", refused=True
            )
            return
        _announce(req, escalated)
        plan = secrets.mask(full.model_dump(mode="json", by_alias=True))
        change.batch.event(event.PlanData(plan=plan, run_id=run_id), agent_id=hans.id)
        change.batch.message(
            message.Kind.ASSISTANT,
            message.Author.ASSISTANT,
            _said(notes or [], _plan_text(req, full)),
            agent_id=hans.id,
            metadata={"planning": "approval", "runId": run_id},
        )
        req.remember(change.conn, state.model_copy(update={"run_id": run_id}), waiting=True)

    req.batch.then(runs.on_run(req.services, req.tenant_id, run_id, req.batch, create))
    return Planned(run_id)


def _announce(req: PlanningRequest, outcomes: list[escalation.Outcome]) -> None:
    """A status chip per escalated step and a thinking entry per matched one (seed 000
    §6.3), once the laws let the plan stand."""
    names = req.services.names()
    hans = req.supervisor
    for outcome in outcomes:
        owner = names.get(outcome.step.owner, outcome.step.owner)
        req.think(secrets.mask_text(escalation.thought(outcome, hans.display_name, owner)))
        if isinstance(outcome, escalation.Escalation):
            req.batch.status(
                secrets.mask_text(escalation.chip(outcome, owner)), agent_id=outcome.lead.id
            )


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


def _plan_text(req: PlanningRequest, plan: Plan) -> str:
    names = req.services.names()
    lines = [f"Here is the plan — {plan.intent}", ""]
    for stage in plan.stages:
        parts = [
            f"{names.get(s.owner, s.owner)}: {secrets.mask_text(s.summary)}" for s in stage.steps
        ]
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
