"""Triage by meaning (issue 30, gap 3): the thing a request changes is read from its
grammar (``targets``), the deliverables from its parts (``deliverables``); a request that
does neither keeps its old triage."""

from __future__ import annotations

import pytest

from hansa.domain.routing import RoutingRule
from hansa.engine.planning import deliverables
from hansa.engine.planning.targets import target
from hansa.engine.planning.triage import triage
from hansa.engine.roster import default_roster
from hansa.engine.routing import DEFAULT_RULES
from hansa.tasks.registry import default_registry


@pytest.mark.parametrize(
    ("text", "kind", "name", "adds", "what"),
    [
        ("Add a FAQ section to the About page", "page", "About", True, "FAQ section"),
        (
            "please put our opening hours on the contact page",
            "page",
            "contact",
            True,
            "opening hours",
        ),
        (
            "Can you add our new address to the page called Contact Us?",
            "page",
            "Contact Us",
            True,
            "new address",
        ),
        ("add testimonials to the homepage", "page", "home", True, "testimonials"),
        ("Remove the phone number from the contact page", "page", "contact", False, "phone number"),
        (
            "Update the services page to mention our warranty",
            "page",
            "services",
            False,
            "Update the services page to mention our warranty",
        ),
        (
            "Change the price of the Softener XL product to 45",
            "product",
            "Softener XL",
            False,
            "price",
        ),
        (
            "Add a link to the services page in the main menu",
            "menu",
            "main",
            True,
            "link to the services page",
        ),
        ("Add a phone field to our contact form", "form", "contact", True, "phone field"),
        ("Rename the footer navigation", "menu", "footer", False, "Rename the footer navigation"),
    ],
)
def test_the_thing_a_request_changes_is_read_from_its_grammar(
    text: str, kind: str, name: str, adds: bool, what: str
) -> None:
    found = target(text)

    assert found is not None
    assert (found.kind, found.name, found.adds, found.what) == (kind, name, adds, what)


@pytest.mark.parametrize(
    "text",
    [
        "Create a new page called Services",  # made, not changed
        "Add a Services page",
        "Please delete the page called Pricing",  # the delete playbook's
        "Audit the Pricing page for SEO",  # reads only
        "What should go on the about page?",  # no action
        "Update the homepage banner and the shop menu",  # two things: no one update
        "Move the FAQ from the about page to the services page",
        "Install the newsletter form on the site",  # "the site" names no page
    ],
)
def test_what_is_not_a_change_of_one_existing_thing(text: str) -> None:
    assert target(text) is None


def test_a_change_of_an_existing_thing_is_planned_with_the_playbook_that_updates_it() -> None:
    assert triage("Add a FAQ section to the About page").playbook.id == "add_to_page"  # type: ignore[union-attr]
    change = triage("Change the text of the hero section on the Services page")
    assert change.playbook is not None and change.playbook.id == "update_content"
    assert change.target is not None and change.target.name == "Services"
    assert "it changes the existing page “Services”" in change.reason
    for text in ("Change the price of the Softener XL product", "Rename the main menu"):
        assert triage(text).playbook.id == "change_on_site"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "agents"),
    [
        (
            "For the spring launch we need visuals, SEO copy and a landing page timeline",
            ["creativeLead", "growthLead", "deliveryLead"],
        ),
        (
            "Launch prep: hero visuals plus keywords for the shop & a delivery schedule",
            ["creativeLead", "growthLead", "deliveryLead"],
        ),
        (
            "Things we need:\n1. product photos\n2. an SEO brief\n3. a roadmap",
            ["creativeLead", "growthLead", "deliveryLead"],
        ),
        ("Improve our SEO and redesign the brand visuals", ["growthLead", "creativeLead"]),
    ],
)
def test_deliverables_are_the_requests_parts_each_on_its_agent(
    text: str, agents: list[str]
) -> None:
    found = deliverables.find(text, DEFAULT_RULES)
    decision = triage(text)

    assert [d.agent_id for d in found] == agents
    assert decision.plan and decision.deliverables == found and decision.playbook is None
    assert f"it asks for {len(agents)} deliverables, {len(set(agents))} agents" in decision.reason


@pytest.mark.parametrize(
    "text",
    [
        "Please improve our SEO traffic",  # one agent
        "Improve our SEO and our ads",  # two parts, one agent
        "Refresh our brand visuals",
        "Plan a campaign about our budget water filters, channels: email, audience: families",
    ],
)
def test_one_agents_work_is_not_split_into_deliverables(text: str) -> None:
    assert deliverables.find(text, DEFAULT_RULES) == ()


def test_a_playbook_whose_steps_cover_every_agent_named_still_plans_the_request() -> None:
    decision = triage("Create a new Services page with SEO copy and visuals")

    assert decision.playbook is not None and decision.playbook.id == "new_page"
    assert decision.deliverables == ()


def test_the_routing_rules_given_place_the_parts_before_the_domains() -> None:
    rules = [RoutingRule(id="v", target="webEngineer", reason="r", keywords=("visuals",))]
    found = deliverables.find("visuals, SEO copy", rules)

    assert [(d.what, d.agent_id, d.word) for d in found] == [
        ("visuals", "webEngineer", "visuals"),
        ("SEO copy", "creativeLead", "copy"),  # no rule: the domain words
    ]


def test_each_deliverable_is_its_agents_own_kind_of_work() -> None:
    text = "We need visuals, an SEO brief and a landing page timeline"
    agents = {a.id: a for a in default_roster()}
    plan = deliverables.plan(
        deliverables.find(text, DEFAULT_RULES), text, agents, default_registry(), "Aquaverter", "p1"
    )

    assert plan is not None and len(plan.stages) == 1
    steps = {s.owner: s for s in plan.stages[0].steps}
    assert steps["creativeLead"].task_type == "draft_content"
    assert steps["growthLead"].parameters["kind"] == "seo_brief"
    assert steps["deliveryLead"].task_type == "create_ticket"
    assert all(s.project_id == "p1" for s in steps.values())
    assert text in steps["deliveryLead"].parameters["description"]


def test_a_deliverable_no_agent_can_take_is_left_out_and_one_agent_left_is_no_plan() -> None:
    text = "visuals and a timeline"
    agents = {a.id: a for a in default_roster() if a.id != "deliveryLead"}
    plan = deliverables.plan(
        deliverables.find(text, DEFAULT_RULES), text, agents, default_registry(), "A", None
    )

    assert plan is None


@pytest.mark.parametrize(
    "text",
    [
        "Add our opening hours to the contact page and a FAQ to the about page",
        "add testimonials to the about page and the services page",
        "Add the new prices to the pricing page, and the new hours to the contact page",
    ],
)
def test_pages_named_only_as_places_never_open_the_new_page_plan(text: str) -> None:
    decision = triage(text)

    assert decision.plan and decision.playbook is None
    assert "it changes the project's systems" in decision.reason


@pytest.mark.parametrize(
    "text",
    [
        "Add a Services page",
        "Build the Pricing page",
        "Please add a new page for our services and link it from the about page",
        "Add a landing page for the spring sale",
    ],
)
def test_a_page_to_make_is_still_the_new_page_plan(text: str) -> None:
    decision = triage(text)

    assert decision.playbook is not None and decision.playbook.id == "new_page"
