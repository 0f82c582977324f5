"""Triage recognises requests about workspace entities: the agent answers with its tools."""

from __future__ import annotations

import pytest

from hansa.engine.planning.triage import triage, workspace_kinds


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        (
            "Create a document called Brand book and link it to the goal Consistent brand",
            ("document", "goal"),
        ),
        ("List my tasks", ("task",)),
        ("Add a risk: the supplier may be late", ("risk",)),
        ("Find the docs about pricing", ("document",)),
    ],
)
def test_a_workspace_request_is_no_plan_and_names_its_kinds(
    text: str, kinds: tuple[str, ...]
) -> None:
    decision = triage(text)

    assert not decision.plan and decision.playbook is None
    assert decision.workspace == kinds
    assert decision.reason.startswith("workspace request")


@pytest.mark.parametrize(
    "text",
    [
        "What are our goals?",  # names a kind, asks for no change or lookup
        "How are you today?",
        "Create a new page called Services",  # a page: a planning run
        "Delete the page Drafts",  # a page may be gone for good: a planning run
    ],
)
def test_other_requests_are_not_workspace_requests(text: str) -> None:
    assert triage(text).workspace == ()


def test_kinds_are_named_once_in_order() -> None:
    assert workspace_kinds("Goals, docs and a document, then a goal") == ("goal", "document")
