"""The quality gate's deterministic checks and the evaluator's verdict."""

from __future__ import annotations

import pytest

from hansa.engine import quality_gate
from hansa.engine.quality_gate import check, claims, kinds_of, links

PAGE = "01JD3X5Q7N8W2R4T6Y8U0I2O4P"


def _codes(answer: str, performed: list[str] | None = None, **kw: object) -> list[str]:
    return [f.code for f in check(answer, performed or [], **kw)]  # type: ignore[arg-type]


@pytest.mark.parametrize("answer", ["", "   ", "\n\t"])
def test_an_empty_answer_fails(answer: str) -> None:
    assert _codes(answer) == ["empty_answer"]


@pytest.mark.parametrize(
    ("answer", "verbs"),
    [
        ("I created the page.", ["created"]),
        ("Done! I've just updated the FAQ and I removed the old block.", ["updated", "removed"]),
        ("We have sent the report.", ["sent"]),
        ("The page has been published.", ["published"]),
        ("Your ticket was filed, and I set  up the webhook.", ["filed", "set up"]),
        ("I successfully deleted it; I deleted the copy too.", ["deleted"]),
    ],
)
def test_claims_are_found(answer: str, verbs: list[str]) -> None:
    assert [c.verb for c in claims(answer)] == verbs


@pytest.mark.parametrize(
    "answer",
    [
        "I have not created the page yet.",
        "I haven't sent anything.",
        "I will create the page once you approve.",
        "I can update the FAQ if you like.",
        "Shall I delete it?",
        "Here is a draft you could publish: ...",
        "The created page would hold three sections.",
    ],
)
def test_no_claim_in_plans_questions_and_negations(answer: str) -> None:
    assert claims(answer) == []
    assert _codes(answer) == []


def test_a_claim_without_a_tool_call_of_its_kind_fails() -> None:
    (finding,) = check("I created the page and sent the link.", ["create_page"])
    assert finding.code == "unbacked_claim"
    assert "'sent'" in finding.reason and "'created'" not in finding.reason


@pytest.mark.parametrize(
    ("answer", "performed"),
    [
        ("I created the page.", ["create_page"]),
        ("I created the goal.", ["entity.create"]),
        ("I added a FAQ block.", ["update_content_block"]),
        ("I filed the ticket.", ["create_ticket"]),
        ("I removed the page.", ["delete_page"]),
        ("I triggered the deploy hook.", ["webhook.call"]),
        ("The page has been published.", ["create_page"]),
    ],
)
def test_a_claim_backed_by_a_tool_call_passes(answer: str, performed: list[str]) -> None:
    assert _codes(answer, performed) == []


def test_reads_and_the_agents_own_notes_back_no_claim() -> None:
    assert kinds_of("entity.read") == frozenset()
    assert kinds_of("run_audit") == frozenset()
    assert kinds_of("agent_state.update") == frozenset()
    assert _codes("I updated the page.", ["entity.read", "agent_state.update"]) == [
        "unbacked_claim"
    ]


def test_links_to_workspace_pages_and_products_are_found_once() -> None:
    answer = (
        f"See [the page](/api/workspace/pages/{PAGE}) or "
        f"http://127.0.0.1:8000/api/workspace/pages/{PAGE} and /api/workspace/products/{PAGE}."
    )
    assert links(answer) == [("page", PAGE), ("product", PAGE)]
    assert links("/api/workspace/pages/short") == []


def test_a_missing_linked_page_fails() -> None:
    answer = f"Here it is: /api/workspace/pages/{PAGE}"
    assert _codes(answer, missing=[("page", PAGE)]) == ["broken_link"]
    assert _codes(answer, missing=[]) == []


def test_the_retry_note_gives_the_reasons() -> None:
    findings = check("I created it.", [])
    note = quality_gate.retry_note(findings)
    assert findings[0].reason in note and note.startswith("Your previous answer was not sent")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"ok": true, "reason": ""}', None),
        ('{"ok": false, "reason": "It ignores the question."}', "evaluator"),
        ('{"ok": false, "reason": ""}', "evaluator"),
        ("not json", None),
        ("[]", None),
    ],
)
def test_the_evaluators_verdict(text: str, code: str | None) -> None:
    finding = quality_gate.evaluation(text)
    assert (finding.code if finding else None) == code
    if finding is not None:
        assert finding.reason


def test_the_evaluator_reads_the_request_the_tools_and_the_answer() -> None:
    system, user = quality_gate.evaluator_prompt("Make a page", "I made it.", ["create_page"])
    assert system.role == "system" and '"ok"' in system.content
    assert "Make a page" in user.content and "create_page" in user.content
    assert "I made it." in user.content
