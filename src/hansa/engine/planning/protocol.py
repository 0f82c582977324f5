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

import dataclasses
from typing import Any

from hansa.domain.plan import Plan, PlanningState, Requirement
from hansa.engine.planning import (
    answers,
    kinds,
    model_answers,
    named,
    plan_questions,
    showing,
    understood,
    where,
)
from hansa.engine.planning.plan_questions import asking
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
_ASKED_FOR = {
    where.PROJECT: "which project this is for",
    where.SITE: "whether to wait for the site or to draft in the workspace",
}


async def start(
    req: PlanningRequest, decision: Triage, carried: PlanningState | None = None
) -> Asked | Planned | Cancelled:
    """Stages 1–5 for a new request; then 6–8 if nothing is missing. ``carried``: what an
    earlier question of this plan settled already (its run, the project, the site)."""
    assert decision.playbook is not None
    playbook = decision.playbook
    hans = req.supervisor.display_name
    kind = "a multi-agent run" if len({s.owner for s in playbook.steps()}) > 1 else "a run"
    req.think(f"{hans} is planning {kind} for this request")
    plan, _ = _fill(req, playbook, playbook.new_plan(), req.text, first=True, source="request")
    for name, value in decision.given.items():  # the project's look-up (``updates``)
        if value is None or plan.value(name) is None:  # None: a name it could not find
            plan = _set(playbook, plan, name, value, "project")
    project = req.project
    preview = playbook.render(plan, project.project_name or "your project", project.project_id)
    req.think(
        f"{hans} is checking required inputs: "
        + ", ".join(r.label.lower() for r in plan.requirements)
    )
    state = PlanningState(playbook=playbook.id, plan=plan, intent=preview.intent)
    if carried is not None:
        kept = ("planning_run_id", "project_id", "site")
        state = state.model_copy(update={k: getattr(carried, k) for k in kept})
    return await go(req, playbook, state, list(decision.notes))


def ask_kind(
    req: PlanningRequest, decision: Triage, state: PlanningState | None = None
) -> Asked | Cancelled:
    """No playbook fits and the model drafted no plan: Hans asks which kind of change
    this is (``kinds``), never a third time."""
    hans = req.supervisor.display_name
    state = state or PlanningState(plan=Plan(intent=req.text[:2000]), intent="")
    times = state.asked.get(kinds.KIND, 0)
    if times >= ASKS:
        return _aside(
            req,
            state,
            f"{hans} is putting the request aside: no plan could be drafted",
            "I still can't turn this into a plan I can run, so I have put it aside. Nothing was "
            "changed. Tell me the steps you want, or ask one of the team directly.",
        )
    req.think(f"{hans} found no plan for this change and is asking which kind it is")
    state = showing.opened(req, state, "New plan")
    state = state.model_copy(update={"pending": kinds.KIND, "asked": {kinds.KIND: times + 1}})
    reason = decision.reason.removeprefix("planning run: ")
    req.say(
        kinds.question(reason),
        planning="questions",
        missing=[kinds.KIND],
        runId=state.planning_run_id,
    )
    req.remember_later(state, waiting=True)
    return Asked()


async def _answer_kind(req: PlanningRequest, state: PlanningState) -> Asked | Planned | Cancelled:
    """The kind the user chose: the plan starts from the request itself. An answer that
    only names the kind ("1", "a ticket") adds nothing to it (it never lands in a title);
    one that describes the change in other words is read with the request."""
    playbook, described = kinds.read(req.text)
    request = state.plan.intent
    decision = Triage(True, "planning run: the kind of change the user chose", playbook)
    if playbook is None:
        return ask_kind(req, decision, state)
    text = f"{request}\n{req.text}" if described else request
    return await start(dataclasses.replace(req, text=text), decision, state)


async def go(
    req: PlanningRequest,
    playbook: Playbook | None,
    state: PlanningState,
    notes: list[str] | None = None,
) -> Asked | Planned | Cancelled:
    """Where the plan lands first (which project; connect the site or draft in the
    workspace), then the plan's own questions, then the plan (``playbook`` None: a plan
    the model drafted, shown as it is)."""
    steps = playbook.steps() if playbook else [s for g in state.plan.stages for s in g.steps]
    registry = req.services.registry
    capabilities = {registry.get(s.task_type).capability for s in steps if s.task_type in registry}
    changes = playbook.changes if playbook is not None else True
    asked_now = await where.question(req, state, capabilities, changes)
    if asked_now is not None:
        return _ask_where(req, state, asked_now, notes or [])
    if playbook is None:
        return showing.show(req, state.plan, state, notes)
    return _proceed(req, playbook, state, notes=notes)


def _ask_where(
    req: PlanningRequest, state: PlanningState, asked_now: where.Question, notes: list[str]
) -> Asked | Cancelled:
    hans = req.supervisor.display_name
    times = state.asked.get(asked_now.name, 0)
    if times >= ASKS:  # no default for where a change lands: put the plan aside
        return _aside(
            req,
            state,
            f"{hans} is putting the plan aside: still no answer on the {asked_now.name}",
            showing.said(
                notes,
                f"I asked twice {_ASKED_FOR[asked_now.name]} without an answer I could use, and "
                "I won't guess it, so I have put this plan aside. Nothing was changed.",
            ),
            [asked_now.name],
        )
    if asked_now.name == where.PROJECT:
        req.think(f"{hans} found no project in focus and is asking which project this is for")
    else:
        req.think(f"{hans} found the project's site not connected and is asking where to work")
    state = showing.opened(req, state, state.plan.title or _title(state))
    state = state.model_copy(
        update={"pending": asked_now.name, "asked": {**state.asked, asked_now.name: times + 1}}
    )
    goal = state.intent and asked_now.restate  # no "of your project" when there is none
    text = f"Goal: {state.intent}\n\n{asked_now.text}" if goal else asked_now.text
    req.say(
        showing.said(notes, text),
        planning="questions",
        missing=[asked_now.name],
        **({"runId": state.planning_run_id} if state.planning_run_id else {}),
    )
    req.remember_later(state, waiting=True)
    return Asked()


def _aside(
    req: PlanningRequest,
    state: PlanningState,
    thought: str,
    text: str,
    missing: list[str] | None = None,
) -> Cancelled:
    """Put the plan aside: Hans says why, the conversation forgets it, its run is cancelled."""
    req.think(thought)
    req.say(text, planning="aside", **({"missing": missing} if missing else {}))
    req.remember_later(None, waiting=False)
    return Cancelled(state.planning_run_id)


def _title(state: PlanningState) -> str:
    playbook = next((p for p in builtin() if p.id == state.playbook), None)
    if playbook is None:
        return "Plan"
    return playbook.render(state.plan, "", None).title


async def proceed(
    req: PlanningRequest, state: PlanningState
) -> Asked | Planned | Adjusted | Approved | Cancelled:
    """A user message while a plan is open: answers, approval, changes or cancel."""
    req = where.focused(req, await where.chosen_project(req, state))
    playbook = next((p for p in builtin() if p.id == state.playbook), None)
    plan, run_id = state.plan, state.run_id
    if run_id and answers.is_approval(req.text):
        req.say("Thanks — starting the run now. I will report back when the team is done.")
        req.remember_later(None, waiting=False)
        return Approved(run_id)
    if answers.is_cancel(req.text):
        req.say("All right, I have dropped this plan. Nothing was changed.")
        req.remember_later(None, waiting=False)
        return Cancelled(run_id or state.planning_run_id)
    if state.pending == kinds.KIND:
        return await _answer_kind(req, state)
    if state.pending is not None:
        return await _answer_where(req, playbook, state)
    if playbook is None:  # a model-drafted plan: changes go through approve with edits
        req.say(
            "Say “yes, proceed” to start this plan, or “cancel”. To change a step, use "
            "Adjust on the plan card."
        )
        req.remember_later(state, waiting=True)
        return Asked()
    changed, reading = _fill(req, playbook, plan, req.text, first=False, source="user")
    if run_id and changed == plan:
        req.say(
            "I did not catch a change. Say “yes, proceed” to start, name a change such as "
            "“slug: our-services”, or say “cancel”."
        )
        req.remember_later(state, waiting=True)
        return Asked()
    if not run_id:
        model_reads = _for_the_model(req, playbook, plan, changed, reading)
        if model_reads:  # what the rules left open: the model reads it, its values checked
            read = await model_answers.read(req, state.intent, model_reads)
            reading = _merged(reading, read)
            changed = _set_all(playbook, changed, read, "user")
        changed, found = await _looked_up(req, playbook, plan, changed)
        notes = [*found, *understood.notes(playbook, changed, reading)]
        return _proceed(req, playbook, state.model_copy(update={"plan": changed}), notes=notes)
    req.think(f"{req.supervisor.display_name} is adjusting the plan")
    # the adjusted plan replaces the one awaiting approval
    changed, found = await _looked_up(req, playbook, plan, changed)
    again = state.model_copy(update={"plan": changed, "run_id": None})
    then = _proceed(req, playbook, again, notes=found)
    return Cancelled(run_id) if isinstance(then, Cancelled) else Adjusted(run_id, then)


async def _answer_where(
    req: PlanningRequest, playbook: Playbook | None, state: PlanningState
) -> Asked | Planned | Cancelled:
    """The user's answer to a context question: a project, or connect / draft."""
    name = state.pending
    assert name is not None
    answer = await where.read(req, name)
    if answer is None:  # asked again (or put aside after the second time)
        return await go(req, playbook, state)
    hans = req.supervisor.display_name
    if answer == where.CONNECT:
        return _aside(
            req,
            state,
            f"{hans} is waiting for the project's site to be connected",
            "All right: connect the site under Projects (its address and credentials), then "
            "ask me again and I will plan it for the live site. Nothing was changed.",
        )
    if name == where.PROJECT and answer != where.WORKSPACE:
        state = state.model_copy(update={"project_id": answer, "pending": None})
        chosen = await where.chosen_project(req, state)
        req = where.focused(req, chosen)
        note = f"Project: {chosen.name}." if chosen is not None else ""
    else:
        state = state.model_copy(update={"site": answer, "pending": None})
        note = where.drafting(req.project)
    if playbook is not None:  # the plan's templates name the project now
        project = req.project
        intent = playbook.render(
            state.plan, project.project_name or "your project", project.project_id
        ).intent
        state = state.model_copy(update={"intent": intent})
    return await go(req, playbook, state, [note] if note else [])


async def _looked_up(
    req: PlanningRequest, playbook: Playbook, before: Plan, after: Plan
) -> tuple[Plan, list[str]]:
    """``after`` with a page the user named looked up in the project (``named.recheck``):
    under its own name, or open again when the project has none of that name."""
    settled, said = await named.recheck(req, playbook.id, before, after)
    for name, value in settled.items():
        after = _set(playbook, after, name, value, "project")
    return after, said


def _fill(
    req: PlanningRequest, playbook: Playbook, plan: Plan, text: str, *, first: bool, source: str
) -> tuple[Plan, answers.Reading]:
    """``plan`` with what ``text`` answers (the one reader: ``plan_questions.read``), and the
    reading."""
    reading = plan_questions.read(playbook, plan, text, req.services.registry, first=first)
    return _set_all(playbook, plan, reading.answers, source), reading


def _set_all(playbook: Playbook, plan: Plan, found: dict[str, answers.Answer], source: str) -> Plan:
    requirements = [
        r.model_copy(update={"value": found[r.name].value, "source": source})
        if r.name in found
        else r
        for r in plan.requirements
    ]
    return _derive(playbook, plan, requirements)


def _for_the_model(
    req: PlanningRequest,
    playbook: Playbook,
    before: Plan,
    after: Plan,
    reading: answers.Reading,
) -> list[answers.Question]:
    """The questions the model is asked about: the ones still open when the message has
    words the rules could not place (or placed none), and the options described in the
    user's own words ("one page with a lead capture block" may be option C)."""
    listed = plan_questions.questions(playbook, before, req.services.registry)
    still = {r.name for r in asking(playbook, after)}
    open_ = [q for q in listed if q.name in still]
    if not (reading.unplaced or reading.unsure or not reading.answers):
        open_ = []
    described = [
        q
        for q in listed
        if q.options
        and q.name in reading.answers
        and reading.answers[q.name].value not in {o.id for o in q.options}
    ]
    return [*open_, *described]


def _merged(reading: answers.Reading, found: dict[str, answers.Answer]) -> answers.Reading:
    """The rules' reading with the model's answers: a part the model placed is placed."""
    placed = {a.words for a in found.values()}
    unplaced = tuple(p for p in reading.unplaced if not any(answers.written(w, p) for w in placed))
    unsure = tuple(n for n in reading.unsure if n not in found)
    return answers.Reading({**reading.answers, **found}, unplaced, unsure)


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


def _set(playbook: Playbook, plan: Plan, name: str, value: str | None, source: str) -> Plan:
    requirements = [
        r.model_copy(update={"value": value, "source": source}) if r.name == name else r
        for r in plan.requirements
    ]
    return _derive(playbook, plan, requirements)


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
    state: PlanningState,
    *,
    notes: list[str] | None = None,
) -> Asked | Planned | Cancelled:
    asked = dict(state.asked)
    plan, defaulted = _defaults(req, playbook, state.plan, asked)
    notes = [*(notes or []), *defaulted]
    hans = req.supervisor.display_name
    if defaulted:
        req.think(f"{hans} is going on with defaults for what was asked twice")
    missing = plan.missing
    stuck = [r for r in missing if asked.get(r.name, 0) >= ASKS]
    to_ask = asking(playbook, plan)
    project = req.project
    if stuck:  # asked twice, no default: not a third time
        labels = ", ".join(r.label.lower() for r in stuck)
        return _aside(
            req,
            state,
            f"{hans} is putting the plan aside: still no {labels}",
            showing.said(
                notes,
                f"I asked twice for the {labels} without an answer I could use, and I can't "
                "choose that for you, so I have put this plan aside. Nothing was changed. Ask "
                "me again when you have it.",
            ),
            [r.name for r in stuck],
        )
    if missing:
        for r in to_ask:
            asked[r.name] = asked.get(r.name, 0) + 1
        req.think(
            f"{hans} is asking for what is missing: " + ", ".join(r.label.lower() for r in to_ask)
        )
        shown = playbook.render(plan, project.project_name or "your project", None)
        # the goal restated with what is known now ("A new Water Filtration Services page")
        state = showing.opened(req, state, shown.title).model_copy(
            update={"plan": plan, "asked": asked, "intent": shown.intent}
        )
        req.say(
            showing.said(notes, _questions(playbook, state.intent, plan, to_ask)),
            planning="questions",
            missing=[r.name for r in to_ask],
            runId=state.planning_run_id or state.run_id,
        )
        req.remember_later(state, waiting=True)
        return Asked()
    state = state.model_copy(update={"plan": plan, "asked": asked})
    full = playbook.render(plan, project.project_name or "your project", project.project_id)
    return showing.show(req, full, state, notes)


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
