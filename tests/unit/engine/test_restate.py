"""Hans's restatements never leave a blank (issue 30, gap 5): a missing value is left out
with its words; a page the user named is named."""

from __future__ import annotations

import pytest

from hansa.domain.plan import Plan
from hansa.engine.planning import plan_questions
from hansa.engine.planning.playbooks import Playbook, builtin, find
from hansa.engine.planning.restate import said
from hansa.tasks.registry import default_registry


def _filled(playbook: Playbook, request_: str) -> Plan:
    """A new plan with what the request gives (the one reader, on the request)."""
    plan = playbook.new_plan()
    found = plan_questions.read(playbook, plan, request_, default_registry(), first=True)
    values = found.values()
    return plan.model_copy(
        update={
            "requirements": [
                r.model_copy(update={"value": values[r.name]}) if r.name in values else r
                for r in plan.requirements
            ]
        }
    )


CAMPAIGN = "A campaign for ${project} about ${topic}, on ${channels}, for ${audience}."


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            {"topic": "water filters", "channels": "", "audience": ""},
            "A campaign for Aquaverter about water filters.",
        ),
        (
            {"topic": "water filters", "channels": "email", "audience": ""},
            "A campaign for Aquaverter about water filters, on email.",
        ),
        (
            {"topic": "water filters", "channels": "", "audience": "homeowners"},
            "A campaign for Aquaverter about water filters, for homeowners.",
        ),
        ({"topic": "", "channels": "", "audience": ""}, "A campaign for Aquaverter."),
        (
            {"topic": "spring", "channels": "email", "audience": "homeowners"},
            "A campaign for Aquaverter about spring, on email, for homeowners.",
        ),
    ],
)
def test_a_missing_value_goes_with_its_words(values: dict[str, str], expected: str) -> None:
    assert said(CAMPAIGN, {"project": "Aquaverter", **values}) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Create the ${title} page", "Create the page"),
        ("Create the ${title} page at /${slug}", "Create the page"),
        ("Draft the ${title} page copy (${layout})", "Draft the page copy"),
        ("Draft the SEO brief for ${seo}", "Draft the SEO brief"),
        ("Ticket: ${subject}", "Ticket"),
        (
            "Change the content of the ${page} page of ${project}: ${change}",
            "Change the content of the page of Aquaverter",
        ),
        (
            "Delete the page ${page} of ${project} for good.",
            "Delete the page of Aquaverter for good.",
        ),
        (
            "Ticket to schedule the ${topic} campaign on ${channels}",
            "Ticket to schedule the campaign",
        ),
    ],
)
def test_no_blank_is_left(template: str, expected: str) -> None:
    empty = {"title": "", "slug": "", "layout": "", "seo": "", "subject": "", "page": ""}
    values = {**empty, "change": "", "topic": "", "channels": "", "project": "Aquaverter"}
    assert said(template, values) == expected


def test_a_name_it_does_not_know_stays_as_written() -> None:
    assert said("Keep ${other} and ${title}", {"title": "Services"}) == "Keep ${other} and Services"


@pytest.mark.parametrize(
    ("request_", "title"),
    [
        ("Create a Services page", "Services"),
        ("Create a new Services page for Aquaverter", "Services"),
        ("Please create a new webpage called Services", "Services"),
        ("Add an About Us page to the site", "About Us"),
        ("Build the Pricing page", "Pricing"),
    ],
)
def test_the_page_the_user_named_is_named(request_: str, title: str) -> None:
    playbook = find(request_)
    assert playbook is not None and playbook.id == "new_page"
    plan = _filled(playbook, request_)
    shown = playbook.render(plan, "Aquaverter", None)
    assert shown.intent.startswith(f"A new {title} page for Aquaverter")
    assert shown.title == f"Create the {title} page"


@pytest.mark.parametrize("request_", ["create a landing page", "make a new page for our services"])
def test_an_unnamed_page_is_asked_for_not_invented(request_: str) -> None:
    playbook = find(request_)
    assert playbook is not None
    plan = _filled(playbook, request_)
    assert "title" in [r.name for r in plan.missing]


def test_no_builtin_restatement_has_a_blank_whatever_is_missing() -> None:
    for playbook in builtin():
        shown = playbook.render(playbook.new_plan(), "Aquaverter", None)
        texts = [shown.intent, shown.title]
        texts += [g.title for g in shown.stages] + [
            s.summary for g in shown.stages for s in g.steps
        ]
        for text in texts:
            assert "${" not in text, (playbook.id, text)
            for gap in (" ,", " .", "()", " :", ": .", "/ ", "  "):
                assert gap not in text, (playbook.id, text)
            assert not text.endswith((":", ",", "/", " for", " on", " about", " at")), text
