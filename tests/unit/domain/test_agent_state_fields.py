"""The agent state's typed fields (issue 32 item 3): checked types, items removed, an
assumption never deleted, compaction to a cap."""

from __future__ import annotations

import pytest

from hansa import errors
from hansa.domain.agent_state import Delta, apply
from hansa.domain.agent_state_fields import compact, settle, size

HYPOTHESIS = {"id": "a1", "hypothesis": "The client pays monthly", "confidence": 0.6}


def test_typed_keys_take_their_types_and_other_keys_stay_free_notes() -> None:
    state = apply(
        {},
        Delta(
            set={"goal": "A faster site", "budgetMood": {"tight": True}},
            append={
                "facts": ["The shop runs on Shopify"],
                "openQuestions": ["Budget?"],
                "entities": [{"id": "e1", "kind": "goal", "name": "Speed"}],
                "assumptions": [HYPOTHESIS],
            },
        ),
    )

    assert state["goal"] == "A faster site" and state["budgetMood"] == {"tight": True}
    assert state["openQuestions"] == ["Budget?"]
    for wrong, field in [
        (Delta(set={"goal": 5}), "goal"),
        (Delta(append={"facts": [{"text": "x"}]}), "facts.1"),
        (Delta(append={"entities": [{"id": "e2"}]}), "entities.1.kind"),
        (
            Delta(append={"assumptions": [{**HYPOTHESIS, "id": "a2", "confidence": 2}]}),
            "assumptions.1.confidence",
        ),
    ]:
        with pytest.raises(errors.InvalidInput) as refused:
            apply(state, wrong)
        assert refused.value.details["field"].startswith(field)


def test_remove_takes_items_by_id_or_value_and_an_emptied_list_goes() -> None:
    state = {
        "openQuestions": ["Budget?", "Deadline?"],
        "entities": [{"id": "e1", "kind": "goal"}, {"id": "e2", "kind": "document"}],
    }

    after = apply(
        state, Delta(remove={"openQuestions": ["Budget?", "Deadline?"], "entities": ["e1"]})
    )

    assert after == {"entities": [{"id": "e2", "kind": "document"}]}
    with pytest.raises(errors.InvalidInput, match="holds no list"):
        apply({"goal": "launch"}, Delta(remove={"goal": ["launch"]}))


def test_an_assumption_is_never_deleted_only_set_to_confidence_zero() -> None:
    state = {"assumptions": [HYPOTHESIS]}

    for deleting in (
        Delta(unset=["assumptions"]),
        Delta(remove={"assumptions": ["a1"]}),
        Delta(set={"assumptions": []}),
    ):
        with pytest.raises(errors.InvalidInput, match="never deleted"):
            apply(state, deleting)
    spent = apply(state, Delta(append={"assumptions": [{**HYPOTHESIS, "confidence": 0}]}))

    assert spent["assumptions"] == [{**HYPOTHESIS, "confidence": 0}]


def test_compaction_drops_notes_then_the_oldest_facts_and_keeps_the_goal() -> None:
    state = {
        "goal": "A faster site",
        "facts": [f"fact {i} " + "x" * 40 for i in range(6)],
        "decisions": ["Use a CDN"],
        "scribble": "y" * 100,
        "assumptions": [HYPOTHESIS, {**HYPOTHESIS, "id": "a0", "confidence": 0}],
    }

    small, lost = compact(state, 400)

    assert size(small) <= 400 and lost == len(state["facts"]) - len(small["facts"]) + 1
    assert "scribble" not in small and small["facts"] == state["facts"][-len(small["facts"]) :]
    assert small["goal"] == "A faster site" and small["decisions"] == ["Use a CDN"]
    assert small["assumptions"] == state["assumptions"], "kept while facts could go"
    tiny, _ = compact(state, 10)
    assert tiny == {"goal": "A faster site"}, "the goal alone stays, past the cap"
    assert compact(state, size(state)) == (state, 0)


def test_a_turns_end_keeps_a_text_once_and_lets_an_answered_question_go() -> None:
    state = {
        "facts": ["The shop runs on Shopify", "the shop runs on  Shopify."],
        "decisions": ["Use a CDN"],
        "openQuestions": ["Use a CDN?", "What is the budget?", "What is the budget"],
        "scribble": "z" * 300,
    }

    settled, lost = settle(state)

    assert settled == {
        "facts": ["The shop runs on Shopify"],
        "decisions": ["Use a CDN"],
        "openQuestions": ["What is the budget?"],
        "scribble": "z" * 300,
    }
    assert lost == 3 and settle(settled) == (settled, 0)
