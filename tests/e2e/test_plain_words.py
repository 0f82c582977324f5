"""Answers in plain words, read by the one reader (issue 30, gap 1), with the scripted model
(its answers to the reader's model calls are prose, so the rules alone read them).

The Services page is asked for with no title; Hans asks for the page title, language,
audience, SEO angle and layout (not the address: it follows from the title). Every way a
person answers is read: values in the order asked, labelled in any order, numbered, a name
given as "Call it …", over several messages; what cannot be placed is quoted back; a
priority answers the priority question; "1" or "2" choose a kind of change and never
land in a title.
"""

from __future__ import annotations

from typing import Any

import pytest

from hansa.engine.planning import kinds
from harness import Server, hans_says, new_conversation, turn, wordpress_project

REQUEST = "Please create a new webpage"
WANTED = {
    "title": "Water Filtration Services",
    "slug": "water-filtration-services",
    "language": "English",
    "audience": "homeowners",
    "seo_angle": "water filtration",
    "layout": "B",
}


def _plan(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((e["data"] for e in events if e["type"] == "plan"), None)


def _values(plan: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["value"] for r in plan["plan"]["requirements"]}


def _services(server: Server, answers: list[str]) -> tuple[list[str], list[list[dict[str, Any]]]]:
    """The Services request, then ``answers`` one message each: what Hans first asked, and
    each answer's events."""
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        (asked,) = hans_says(turn(client, cid, REQUEST))
        return [asked], [turn(client, cid, a) for a in answers]


def test_hans_asks_for_the_title_but_not_its_address(server: Server) -> None:
    (asked,), _ = _services(server, [])
    for number, label in enumerate(
        ("Page title", "Language", "Audience", "SEO angle", "Layout"), start=1
    ):
        assert f"{number}. {label} — " in asked
    assert "Address (slug)" not in asked


@pytest.mark.parametrize(
    "answer",
    [
        "Water Filtration Services, English, homeowners, water filtration, B",
        "Water Filtration Services; English; homeowners; water filtration; layout B",
        "Water Filtration Services\nEnglish\nhomeowners\nwater filtration\nServices by category",
    ],
    ids=["commas", "semicolons", "lines"],
)
def test_values_in_the_order_asked_without_labels(server: Server, answer: str) -> None:
    _, (events,) = _services(server, [answer])
    plan = _plan(events)
    assert plan is not None, hans_says(events)
    assert _values(plan) == WANTED
    (said,) = hans_says(events)
    assert said.startswith(
        "I understood: Page title “Water Filtration Services”; Language “English”; "
        "Audience “homeowners”; SEO angle “water filtration”"
    ), "every value placed by its order is said back"
    assert "Here is the plan" in said and "Before I plan this" not in said


@pytest.mark.parametrize(
    "answer",
    [
        "layout B, audience: homeowners, language English, "
        "title: Water Filtration Services, seo: water filtration",
        "1. Water Filtration Services 2. English 3. homeowners 4. water filtration 5. B",
        "Call it Water Filtration Services, English, homeowners, water filtration, layout B",
        "Audience is homeowners. Layout: services by category. Name it Water Filtration "
        "Services. SEO angle: water filtration. Language: English.",
    ],
    ids=["labelled-out-of-order", "numbered", "call-it-then-in-order", "sentences-named"],
)
def test_labelled_numbered_and_named_in_any_order(server: Server, answer: str) -> None:
    _, (events,) = _services(server, [answer])
    plan = _plan(events)
    assert plan is not None, hans_says(events)
    assert _values(plan) == WANTED


@pytest.mark.parametrize(
    "messages",
    [
        ["Call it Water Filtration Services, layout B", "English, homeowners, water filtration"],
        ["title: Water Filtration Services; language English", "homeowners, water filtration, B"],
    ],
    ids=["call-it-then-lists", "labels-then-a-list"],
)
def test_answers_split_over_several_messages(server: Server, messages: list[str]) -> None:
    _, events = _services(server, messages)
    assert _plan(events[0]) is None
    (again,) = hans_says(events[0])
    assert "Page title" not in again.split("Before I plan")[1]
    plan = _plan(events[1])
    assert plan is not None, hans_says(events[1])
    assert _values(plan) == WANTED


@pytest.mark.parametrize(
    "answer",
    [
        "Call it Water Filtration Services",
        "name it Water Filtration Services",
        "title: Water Filtration Services",
        "Let's call it “Water Filtration Services”",
        "It's called Water Filtration Services.",
    ],
)
def test_a_title_given_in_words_is_read(server: Server, answer: str) -> None:
    _, (events,) = _services(server, [answer])
    (said,) = hans_says(events)
    assert "1. Language — " in said and "Page title" not in said.split("Before I plan")[1]
    assert "Goal: A new Water Filtration Services page for Aquaverter" in said


@pytest.mark.parametrize(
    ("answer", "quoted"),
    [
        (
            "Call it Water Filtration Services. It's for the people in Ontario with hard water.",
            "“It's for the people in Ontario with hard water”",
        ),
        (
            "title: Water Filtration Services; make it look like our brochure",
            "“make it look like our brochure”",
        ),
    ],
)
def test_what_cannot_be_placed_is_quoted_with_what_was_understood(
    server: Server, answer: str, quoted: str
) -> None:
    _, (events,) = _services(server, [answer])
    assert _plan(events) is None
    (said,) = hans_says(events)
    assert said.startswith("I understood: Page title “Water Filtration Services”")
    assert quoted in said
    assert "Before I plan this I need a few details" in said, "the open questions, by name"


def test_more_values_than_questions_are_asked_about_by_name(server: Server) -> None:
    answer = "Water Filtration Services, English, homeowners, renters, water filtration, B"
    _, (events,) = _services(server, [answer])
    assert _plan(events) is None
    (said,) = hans_says(events)
    assert "Page title, Language, Audience, SEO angle: I could not tell which of" in said
    assert "“renters”" in said and "I understood: Layout B: Services by category." in said


TICKET = next(i for i, p in enumerate(kinds.offered(), start=1) if p.id == "ticket")
NEW_PAGE = next(i for i, p in enumerate(kinds.offered(), start=1) if p.id == "new_page")
UNPLANNED = "Install the newsletter form on the site"
"""A change no playbook's words fit and no plan is drafted for: Hans asks its kind."""


@pytest.mark.parametrize(
    ("kind", "priority", "expected"),
    [
        (str(TICKET), "high priority", "high"),
        (f"{TICKET}.", "It's urgent!", "urgent"),
        ("a ticket", "priority: low", "low"),
    ],
)
def test_a_kind_by_number_then_the_priority_keeps_the_plan(
    server: Server, kind: str, priority: str, expected: str
) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        (which,) = hans_says(turn(client, cid, UNPLANNED))
        (asked,) = hans_says(turn(client, cid, kind))
        (subject,) = hans_says(turn(client, cid, "subject: the newsletter form"))
        answered = turn(client, cid, priority)
    assert "Which of these is it closest to?" in which
    assert asked.splitlines()[0] == "Goal: A ticket for the team of Aquaverter"
    assert "1. Subject" in asked and "2. Priority" in asked
    assert "1. Priority" in subject
    plan = _plan(answered)
    assert plan is not None, hans_says(answered)
    (step,) = [s for stage in plan["plan"]["stages"] for s in stage["steps"]]
    assert step["parameters"]["priority"] == expected
    assert step["parameters"]["title"] == "the newsletter form", "no answer in the title"
    assert "law of clarity" not in hans_says(answered)[0]


@pytest.mark.parametrize("kind", [str(NEW_PAGE), f"option {NEW_PAGE}", "a new page"])
def test_a_kind_chosen_by_number_is_not_read_as_a_value(server: Server, kind: str) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, UNPLANNED)
        (asked,) = hans_says(turn(client, cid, kind))
        planning = client.get(f"/api/conversations/{cid}").json()["metadata"]["planning"]
    assert "1. Page title" in asked, "the title is asked, not taken from the answer"
    values = {r["name"]: r.get("value") for r in planning["plan"]["requirements"]}
    assert values["title"] is None and kind not in asked.split("Before I plan")[0]
