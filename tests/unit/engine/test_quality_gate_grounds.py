"""The answer check's invented claims (quality_gate.check with grounds): the one checker of
domain/grounding.py, said to the model on the retry in words that name the claims."""

from __future__ import annotations

import pytest

from hansa.engine import quality_gate

GROUNDS = ["Please check my order", "Project: Aquaverter, domain aquaverter.ca."]


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("All your requests will be completed by tomorrow morning.", "the promise “will be"),
        ("Your order ships within 3 days.", "the date “within 3 days”"),
        ("98.6% of our customers are happy.", "the statistic “98.6%”"),
        ("See https://aquaverter.example/help for more.", "the link “https://aquaverter"),
    ],
)
def test_an_invented_claim_is_a_finding_that_names_it(answer: str, named: str) -> None:
    (finding,) = quality_gate.check(answer, [], grounds=GROUNDS)
    assert finding.code == "invented_claim"
    assert named in finding.reason
    assert "nothing in the request, the project or the tools' results holds" in finding.reason
    assert named in quality_gate.retry_note([finding])


def test_grounded_claims_and_unchecked_answers_pass() -> None:
    said = "Your site aquaverter.ca is fine; the note says 20% off until May 4."
    assert quality_gate.check(said, [], grounds=[*GROUNDS, '{"text": "20% off until May 4"}']) == []
    assert quality_gate.check("98.6% of customers are happy.", []) == [], "no grounds: no check"


def test_invented_claims_come_after_the_other_findings() -> None:
    found = quality_gate.check("I created it; it goes live on Friday.", [], grounds=GROUNDS)
    assert [f.code for f in found] == ["unbacked_claim", "invented_claim"]
