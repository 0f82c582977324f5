"""A request to undo a run is Hans's own (issue 30, gap 5): recognised, however it is put."""

from __future__ import annotations

import pytest

from hansa.engine.planning.triage import triage
from hansa.engine.planning.undoing import is_yes, named_words


@pytest.mark.parametrize(
    "text",
    [
        "undo that",
        "roll back the last run",
        "please revert what you just did",
        "can you undo the Services page run?",
        "Hey Hans, could you please rollback the last change",
        "I want you to undo it",
        "Undo the page you just made",
    ],
)
def test_undo_requests_are_hans_own(text: str) -> None:
    sorted_ = triage(text)
    assert sorted_.undo and sorted_.plan
    assert sorted_.playbook is None, "no new-page plan for an undo"


@pytest.mark.parametrize(
    "text",
    [
        "create a page about undo",
        "how do I undo a run?",
        "add an undo button to the contact form",
        "undo " + "x" * 400,
    ],
)
def test_other_messages_are_not_undo_requests(text: str) -> None:
    assert not triage(text).undo


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("undo that", []),
        ("roll back the last run", []),
        ("please revert what you just did", []),
        ("can you undo the Services page run?", ["services", "page"]),
    ],
)
def test_the_words_that_name_a_run(text: str, words: list[str]) -> None:
    assert named_words(text) == words


@pytest.mark.parametrize(
    "text", ["yes", "yes, undo it", "go ahead", "Yes please", "ok, roll it back"]
)
def test_consent(text: str) -> None:
    assert is_yes(text)


@pytest.mark.parametrize("text", ["no", "wait", "", "undo the Services page run instead"])
def test_no_consent(text: str) -> None:
    assert not is_yes(text)
