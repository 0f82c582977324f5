"""Triage applies seed 000 §16.1's criteria on their own, not only the playbooks' triggers,
and the playbooks for content blocks, tickets, technical changes and campaigns read their
requests."""

from __future__ import annotations

import pytest

from hansa.engine.planning import kinds, plan_questions
from hansa.engine.planning.playbooks import builtin
from hansa.engine.planning.triage import agents_named, triage
from hansa.tasks.registry import default_registry


@pytest.mark.parametrize(
    ("text", "playbook"),
    [
        ("Point the www CNAME of aquaverter.ca to our new host", "technical_change"),
        ("Our SSL certificate expires on Friday, please renew it", "technical_change"),
        ("Add an MX record for the new mail provider", "technical_change"),
        ("Plan a campaign for the Softener XL next month", "campaign"),
        ("Change the text of the hero section on the Services page", "update_content"),
        ("Please create a new webpage called Services", "new_page"),
    ],
)
def test_requests_of_each_kind_find_their_playbook(text: str, playbook: str) -> None:
    decision = triage(text)

    assert decision.plan and decision.playbook is not None
    assert decision.playbook.id == playbook


@pytest.mark.parametrize(
    ("text", "criterion"),
    [
        ("Update the homepage banner and the shop menu", "deliverables"),
        ("Install the newsletter form on the site", "it changes the project's systems"),
        ("Improve our SEO and redesign the brand visuals", "2 agents take part"),
        ("Wipe the old staging data", "cannot be undone"),
    ],
)
def test_a_change_without_a_playbook_still_plans_by_the_criteria(text: str, criterion: str) -> None:
    decision = triage(text)

    assert decision.plan and decision.playbook is None
    assert decision.reason.startswith("planning run: ")
    assert criterion in decision.reason


@pytest.mark.parametrize(
    "text",
    [
        "How do I change my DNS records?",
        "What is an SSL certificate?",
        "Good morning!",
        "Refresh our brand visuals",
    ],
)
def test_questions_and_talk_are_answered_not_planned(text: str) -> None:
    assert not triage(text).plan


def test_a_workspace_entity_as_the_object_is_the_agents_work_whatever_it_is_about() -> None:
    decision = triage("Create a task to renew the SSL certificate")
    deleting = triage("Delete the document Brand guide")

    assert not decision.plan and decision.workspace == ("task",)
    assert not deleting.plan and deleting.workspace == ("document",)


def test_a_ticket_alone_is_the_agents_tool_not_a_plan() -> None:
    decision = triage("Open a ticket about the broken contact form")
    ticket = next(p for p in builtin() if p.id == "ticket")

    assert decision.playbook is None and not ticket.triggers
    assert ticket in kinds.offered(), "Hans still offers it when he asks what a change is"


def test_agents_named_counts_each_routing_target_once() -> None:
    assert agents_named("SEO and more SEO traffic, then SSL on the server", []) == []
    from hansa.engine.routing import DEFAULT_RULES

    named = agents_named("SEO and more SEO traffic, then SSL on the server", DEFAULT_RULES)
    assert named == ["growthLead", "technicalLead"]


def _values(playbook_id: str, text: str) -> dict[str, str]:
    playbook = next(p for p in builtin() if p.id == playbook_id)
    registry = default_registry()
    return plan_questions.read(playbook, playbook.new_plan(), text, registry, first=True).values()


def test_the_new_playbooks_read_what_the_request_already_says() -> None:
    assert _values("campaign", "Plan a campaign for the Softener XL next month") == {
        "topic": "Softener XL"
    }
    assert (
        _values("ticket", "Open a ticket about the broken contact form, high priority")["priority"]
        == "high"
    )
    update = _values("update_content", "Change the text of the hero section on the Services page")
    assert update == {"page": "Services", "section": "hero"}
    dns = _values("technical_change", "Point the www CNAME of aquaverter.ca to our new host")
    assert dns["change"] == "Point the www CNAME of aquaverter.ca to our new host"


def test_the_kinds_hans_offers_are_read_by_number_or_by_words() -> None:
    offered = kinds.offered()
    assert {p.id for p in offered} >= {"new_page", "update_content", "technical_change", "ticket"}
    question = kinds.question("it changes the project's systems")
    assert all(f"{i}. {p.offer}" in question for i, p in enumerate(offered, start=1))
    technical = offered.index(next(p for p in offered if p.id == "technical_change")) + 1
    chosen, described = kinds.read(str(technical))
    assert chosen is not None and chosen.id == "technical_change" and not described
    chosen, described = kinds.read(f"{technical}.")
    assert chosen is not None and chosen.id == "technical_change" and not described
    assert kinds.read("99") == (None, False)
    # a change described in other words: its playbook, and read with the request
    chosen, described = kinds.read("we need to renew the SSL certificate")
    assert chosen is not None and chosen.id == "technical_change" and described
    assert kinds.read("no idea") == (None, False)
