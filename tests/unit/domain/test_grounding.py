"""The one checker of invented claims (domain/grounding.py): what no input holds is found;
the same claim, held by an input however it is written, is not."""

from __future__ import annotations

import pytest

from hansa.domain.grounding import SHOWN, Invented, describe, invented


@pytest.mark.parametrize(
    ("text", "kind", "said"),
    [
        ("35.9% of the total page views came from search.", "statistic", "35.9%"),
        ("Nine in ten? No: 9 out of 10 homeowners agree.", "statistic", "9 out of 10"),
        ("Filters last 3x longer.", "statistic", "3x"),
        (
            "Read more at https://www4mccai.example/stats.",
            "link",
            "https://www4mccai.example/stats",
        ),
        ("Write to info@aquaverter.ca for a quote.", "link", "info@aquaverter.ca"),
        ("Visit aquaverter-filters.com today", "link", "aquaverter-filters.com"),
        ("Trusted by 12,000 families.", "figure", "12,000"),
        ("Plans start at $499.", "figure", "$499"),
        ("Call 416-555-0199.", "figure", "416-555-0199"),
        ("We opened in 2018.", "date", "2018"),
        ("Prices hold until 28th of November.", "date", "28th of November"),
        ("The offer ends on Friday.", "date", "Friday"),
        (
            "All your requests will be completed by tomorrow morning.",
            "promise",
            "will be completed by tomorrow morning",
        ),
        ("I'll have it done within 2 hours.", "promise", "I'll have it done within 2 hours"),
        ("Results are guaranteed.", "promise", "guaranteed"),
    ],
)
def test_a_claim_no_input_holds_is_invented(text: str, kind: str, said: str) -> None:
    assert Invented(kind, said) in invented(text, ["Aquaverter, aquaverter.ca"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "ground"),
    [
        ("35.9% of visits", "visits rose by 35.9 percent"),
        ("Trusted by 12,000 families.", "we served 12000 families"),
        ("See https://www.aquaverter.ca/spring/", "details at aquaverter.ca/spring"),
        ("Visit https://aquaverter.ca", "Project: Aquaverter, domain aquaverter.ca."),
        ("Prices hold until November 28th, 2026.", "until 28 Nov 2026"),
        ("The fix will be live by Friday.", "the client said it will be live by Friday"),
        ("Open from 10pm.", "tonight after 10 pm is fine"),
        ('{"price": "499"}, $499', '{"price": "499.00"}'),
        ("Ticket 01M8E527R2 is open.", '{"ticketId": "01M8E527R2XYZ"}'),
    ],
)
def test_a_claim_an_input_holds_is_not(text: str, ground: str) -> None:
    assert invented(text, [ground]) == []


def test_what_is_no_claim() -> None:
    text = "1. Draft the copy\n2. Build the page\nThree plans, 3 steps, 10 minutes to read."
    assert invented(text, []) == []
    assert invented("Our id is ABC123DEF.", []) == [], "digits inside a word are an id"


def test_a_page_s_links_and_description_are_read_from_its_tags() -> None:
    html = (
        '<meta name="description" content="Save 40% today">'
        '<p>See <a href="https://made.up/x">our study</a></p>'
    )
    found = invented(html, [])
    assert Invented("statistic", "40%") in found
    assert Invented("link", "https://made.up/x") in found


def test_each_claim_is_named_once_and_the_description_is_cut() -> None:
    text = "35.9% here, 35.9% there. " + " ".join(f"{n}%" for n in range(20, 30))
    found = invented(text, [])
    assert [f.text for f in found].count("35.9%") == 1
    said = describe(found)
    assert said.startswith("the statistic “35.9%”, the statistic “20%”")
    assert said.endswith(f"and {len(found) - SHOWN} more")


def test_every_part_of_a_claim_must_be_held() -> None:
    assert invented("9 out of 10 agree.", ["out of 10 people"]) == [
        Invented("statistic", "9 out of 10")
    ]
    assert invented("Open on 28 November 2027.", ["28 November 2026"]) == [
        Invented("date", "28 November 2027")
    ]


def test_a_year_in_a_timestamp_grounds_the_year() -> None:
    assert invented("Since 2026 we ship faster.", ['{"createdAt": "2026-11-27T10:00:00"}']) == []
