"""The one reader (planning/answers.py, issue 30 gap 1) on its own: questions in, a reading
out, for the ways people answer."""

from __future__ import annotations

import pytest

from hansa.engine.planning import answers

A = answers.Option("A", "One overview page")
B = answers.Option("B", "Services by category")
TITLE = answers.Question("title", "Page title", ("title", "name"), naming=True)
LANGUAGE = answers.Question("language", "Language", ("language",))
AUDIENCE = answers.Question("audience", "Audience", ("audience", "target"))
LAYOUT = answers.Question("layout", "Layout", ("layout",), (A, B))
PRIORITY = answers.Question(
    "priority",
    "Priority",
    ("priority",),
    tuple(answers.Option(v, v, names=(v,), keywords=(v,)) for v in ("low", "normal", "high")),
    own_words=False,
)
ASKED = [TITLE, LANGUAGE, AUDIENCE, LAYOUT]
WANTED = {"title": "Water Filters", "language": "English", "audience": "homeowners", "layout": "B"}


@pytest.mark.parametrize(
    "text",
    [
        "Water Filters, English, homeowners, B",
        "Water Filters; English; for homeowners; Services by category",
        "1. Water Filters 2. English 3. homeowners 4. B",
        "layout B, audience: homeowners, language English, Call it Water Filters",
        "Name it Water Filters. Language: English. It's for homeowners. Layout B.",
    ],
)
def test_every_way_of_answering_gives_the_same_values(text: str) -> None:
    reading = answers.read(ASKED, text)
    assert reading.values() == WANTED
    assert not reading.unplaced and not reading.unsure


def test_fewer_unlabelled_values_than_questions_are_not_guessed() -> None:
    reading = answers.read(ASKED, "English, homeowners")
    assert reading.values() == {}
    assert reading.unplaced == ("English", "homeowners")


def test_more_values_than_questions_name_the_questions() -> None:
    reading = answers.read(ASKED, "Water Filters, English, homeowners, renters, B")
    assert reading.values() == {"layout": "B"}
    assert reading.unsure == ("title", "language", "audience")


@pytest.mark.parametrize(
    ("text", "value"),
    [("high priority", "high"), ("It's urgent... no, normal", "normal"), ("priority: low", "low")],
)
def test_a_priority_is_one_of_its_values_or_nothing(text: str, value: str | None) -> None:
    assert answers.read([PRIORITY], text).values().get("priority") == value


@pytest.mark.parametrize(
    ("text", "consent"),
    [("yes, proceed", "yes"), ("2", None), ("yes, but make it blue", None), ("cancel", "no")],
)
def test_consent_is_the_whole_message(text: str, consent: str | None) -> None:
    assert answers.consent(text) == consent


def test_only_the_users_words_are_written() -> None:
    message = "It's for homeowners in Ontario, with hard water"
    assert answers.written("homeowners in  Ontario", message)
    assert not answers.written("#10.5% of the total", message)
    assert not answers.written("", message)
