"""Triage of requests for ongoing work: an agent session, with its cadence."""

from __future__ import annotations

import pytest

from hansa.engine.planning.triage import DEFAULT_CADENCE, triage


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Keep an eye on our SEO and report weekly", "every week"),
        ("Please monitor the pricing page every day", "every day"),
        ("Can you keep track of our backlinks and report monthly?", "every month"),
        ("Keep watch over the checkout", DEFAULT_CADENCE[0]),
    ],
)
def test_ongoing_work_is_a_session_with_its_cadence(text: str, words: str) -> None:
    decision = triage(text)
    assert decision.ongoing is not None and decision.ongoing.words == words
    assert not decision.plan and decision.reason.startswith("agent session")


@pytest.mark.parametrize(
    "text",
    ["How do I monitor my site?", "Please improve our SEO traffic", "Check on my order"],
)
def test_other_requests_start_no_session(text: str) -> None:
    assert triage(text).ongoing is None
