"""Escalation rules (seed 000 §6.3): which steps match, and what the plan becomes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hansa import errors
from hansa.domain.plan import Plan, PlanStage, PlanStep
from hansa.domain.project import ProjectContext
from hansa.engine.planning import escalation
from hansa.engine.planning.escalation import Escalation, Mode, NotEscalated
from hansa.engine.roster import default_roster
from hansa.tasks.registry import default_registry

AGENTS = {a.id: a for a in default_roster()}
REGISTRY = default_registry()
OPEN = ProjectContext(project_id="p1", project_name="Aquaverter")
RULES = escalation.builtin()


def _step(ref: str, owner: str, task_type: str, summary: str, **parameters: Any) -> PlanStep:
    return PlanStep(
        ref=ref, owner=owner, task_type=task_type, summary=summary, parameters=parameters
    )


def _plan(*stages: list[PlanStep]) -> Plan:
    return Plan(
        intent="Do it",
        title="It",
        stages=[
            PlanStage(group=chr(ord("A") + i), title=f"Stage {i}", steps=steps)
            for i, steps in enumerate(stages)
        ],
    )


def _escalate(plan: Plan, project: ProjectContext = OPEN) -> tuple[Plan, list[escalation.Outcome]]:
    return escalation.escalate(plan, RULES, registry=REGISTRY, agents=AGENTS, project=project)


def _rule(step: PlanStep) -> str | None:
    return next((r.id for r in RULES if r.matches(step)), None)


@pytest.mark.parametrize(
    ("summary", "parameters", "rule"),
    [
        ("Update the DNS record for shop.aquaverter.ca", {}, "dns"),
        ("Point the domain to the new host", {"description": "Change the CNAMEs"}, "dns"),
        ("Renew the SSL certificate", {}, "certificates"),
        ("Install the certificate from Let's Encrypt", {}, "certificates"),
        ("Raise the campaign budget to $500", {}, "budget"),
        ("File a ticket", {"description": {"notes": ["check the ad spend"]}}, "budget"),
        ("Draft an email to the client about the launch", {}, "client_communication"),
        ("Send the client update", {}, "client_communication"),
        ("Create the product Gift Certificate at $50", {}, None),
        ("Draft the SEO brief for budget-friendly water softeners", {}, None),
        ("Create the Services page at /services", {"html": "<p>Our clients love us</p>"}, None),
        ("Add a record to the workspace", {}, None),
    ],
)
def test_a_step_matches_by_whole_words_in_its_summary_or_parameters(
    summary: str, parameters: dict[str, Any], rule: str | None
) -> None:
    assert _rule(_step("s", "webEngineer", "create_ticket", summary, **parameters)) == rule


def test_a_rule_may_match_by_task_type() -> None:
    rule = escalation.EscalationRule(
        id="hooks", lead="technicalLead", mode=Mode.REVIEW, concern="the hook", task_types=("x",)
    )

    assert rule.matches(_step("s", "webEngineer", "x", "Anything"))
    assert not rule.matches(_step("s", "webEngineer", "y", "Anything"))


def test_the_lead_owns_a_step_whose_task_type_the_lead_may_own() -> None:
    dns = _step("dns", "schedulerAgent", "create_ticket", "Update the DNS record", title="DNS")
    page = _step("page", "webEngineer", "create_page", "Create the page", title="A", slug="a")

    plan, (outcome,) = _escalate(_plan([dns, page]))

    assert [[s.owner for s in st.steps] for st in plan.stages] == [["technicalLead", "webEngineer"]]
    assert isinstance(outcome, Escalation) and outcome.mode is Mode.REASSIGN
    assert outcome.lead.id == "technicalLead" and outcome.step.owner == "schedulerAgent"
    chip = escalation.chip(outcome, "Scheduler Agent Sol")
    assert chip.endswith("is escalated to Technical Lead Theo for the DNS change")
    assert "Update the DNS record" in chip


def test_a_lead_without_the_capability_reviews_the_step_right_after_its_group() -> None:
    ssl = _step(
        "ssl", "webEngineer", "draft_content", "Renew the SSL certificate", kind="page_copy"
    )
    page = _step("page", "webEngineer", "create_page", "Create the page")
    audit = _step("audit", "chief", "run_audit", "Audit the page")

    plan, (outcome,) = _escalate(_plan([ssl, page], [audit]))

    assert [s.group for s in plan.stages] == ["A", "B", "C"]
    assert [[s.ref for s in st.steps] for st in plan.stages] == [
        ["ssl", "page"],
        ["ssl_review"],
        ["audit"],
    ]
    review = plan.stages[1].steps[0]
    assert (review.owner, review.task_type) == ("technicalLead", "review")
    assert review.parameters == {
        "step": "ssl",
        "subject": "Renew the SSL certificate",
        "concern": "the certificate change",
    }
    assert plan.stages[0].steps[0].owner == "webEngineer", "the step keeps its owner"
    assert isinstance(outcome, Escalation) and outcome.mode is Mode.REVIEW
    assert outcome.because is not None and "'content' capability" in outcome.because
    assert "Theo reviews it right after" in escalation.chip(outcome, "Web Engineer Nico")
    thought = escalation.thought(outcome, "Hans", "Web Engineer Nico")
    assert "adding a review by Technical Lead Theo after step ssl" in thought


def test_a_review_rule_adds_a_review_even_when_the_lead_could_own_the_step() -> None:
    budget = _step("spend", "webEngineer", "draft_content", "Plan the ad budget", kind="seo_brief")

    plan, (outcome,) = _escalate(_plan([budget]))

    assert [[(s.owner, s.task_type) for s in st.steps] for st in plan.stages] == [
        [("webEngineer", "draft_content")],
        [("growthLead", "review")],
    ]
    assert isinstance(outcome, Escalation) and outcome.because is None


def test_the_leads_own_steps_and_unmatched_plans_are_left_alone() -> None:
    plan = _plan([_step("dns", "technicalLead", "create_ticket", "Update the DNS")])

    assert _escalate(plan) == (plan, [])
    quiet = _plan([_step("page", "webEngineer", "create_page", "Create the Services page")])
    assert _escalate(quiet) == (quiet, [])


def test_a_project_that_allows_neither_way_keeps_the_step_and_says_why() -> None:
    locked = OPEN.model_copy(update={"allowed_task_types": ("draft_content",)})
    ssl = _step(
        "ssl", "webEngineer", "draft_content", "Renew the SSL certificate", kind="page_copy"
    )

    plan, (outcome,) = _escalate(_plan([ssl]), locked)

    assert [[s.owner for s in st.steps] for st in plan.stages] == [["webEngineer"]]
    assert isinstance(outcome, NotEscalated)
    assert "does not allow the task type 'review'" in outcome.because
    assert "could not escalate step ssl" in escalation.thought(outcome, "Hans", "Nico")


def test_without_room_for_review_stages_reviews_join_the_next_group() -> None:
    stages = [
        [_step(f"s{i}", "webEngineer", "draft_content", "Renew the SSL certificate")]
        for i in range(6)
    ]

    plan, outcomes = _escalate(_plan(*stages))

    assert len(plan.stages) == 7 and all(isinstance(o, Escalation) for o in outcomes)
    assert [s.ref for s in plan.stages[1].steps] == ["s0_review", "s1"]
    assert [s.ref for s in plan.stages[6].steps] == ["s5_review"]


def test_a_full_plan_keeps_its_steps_when_no_review_fits() -> None:
    stages = [
        [_step(f"s{i}", "webEngineer", "draft_content", "Renew the SSL certificate")]
        for i in range(10)
    ]

    plan, outcomes = _escalate(_plan(*stages))

    assert [st.steps for st in plan.stages] == [st.steps for st in _plan(*stages).stages]
    assert all(isinstance(o, NotEscalated) for o in outcomes)


def test_review_refs_stay_unique() -> None:
    a = _step("ssl", "webEngineer", "draft_content", "Renew the SSL certificate")
    b = _step("ssl_review", "webEngineer", "draft_content", "Check the TLS setup")

    plan, _ = _escalate(_plan([a, b]))

    assert [s.ref for s in plan.stages[1].steps] == ["ssl_review2", "ssl_review_review"]


def test_rules_file_errors_are_config_errors(tmp_path: Path) -> None:
    bad = tmp_path / "escalations.toml"
    bad.write_text('[[escalation]]\nid = "x"\nlead = "technicalLead"\nmode = "review"\n')

    with pytest.raises(errors.ConfigError, match="escalation rules"):
        escalation.load(bad)
    bad.write_text(
        '[[escalation]]\nid = "x"\nlead = "technicalLead"\nmode = "review"\nconcern = "it"\n'
    )
    with pytest.raises(errors.ConfigError, match="no task types and no intents"):
        escalation.load(bad)


def test_the_built_in_rules_name_roster_leads() -> None:
    assert {r.lead for r in RULES} == {"technicalLead", "growthLead", "clientSuccess"}
    assert all("review" in AGENTS[r.lead].capabilities for r in RULES), "each may review"
