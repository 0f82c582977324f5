"""The scratchpad's pure delta arithmetic and its limits."""

from __future__ import annotations

import pytest

from hansa import errors
from hansa.domain import agent_state
from hansa.domain.agent_state import Delta, StateTooLarge, apply, parse_delta


def test_unset_then_set_then_append_leaving_the_old_state_alone() -> None:
    before = {"goal": "launch", "draft": True, "entities": [{"id": "e1", "kind": "goal"}]}

    after = apply(
        before,
        Delta(
            unset=["draft", "absent"],
            set={"goal": "launch in May"},
            append={"entities": [{"id": "e2", "kind": "document"}], "questions": ["Budget?"]},
        ),
    )

    assert after == {
        "goal": "launch in May",
        "entities": [{"id": "e1", "kind": "goal"}, {"id": "e2", "kind": "document"}],
        "questions": ["Budget?"],
    }
    assert before == {
        "goal": "launch",
        "draft": True,
        "entities": [{"id": "e1", "kind": "goal"}],
    }, "apply is pure"


def test_an_item_with_a_known_id_replaces_it_and_a_repeated_item_is_kept_once() -> None:
    old, new = (
        {"id": "e1", "kind": "goal", "name": "Old"},
        {"id": "e1", "kind": "goal", "name": "New"},
    )
    state = {"entities": [old], "deps": [{"from": "a", "to": "b"}]}

    after = apply(state, Delta(append={"entities": [new], "deps": [{"from": "a", "to": "b"}]}))

    assert after == {"entities": [new], "deps": [{"from": "a", "to": "b"}]}


def test_appending_to_a_key_that_holds_no_list_is_refused() -> None:
    with pytest.raises(errors.InvalidInput, match="holds no list"):
        apply({"goal": "launch"}, Delta(append={"goal": ["x"]}))


def test_the_limits_refuse_a_delta_whole() -> None:
    full = {f"k{i}": i for i in range(agent_state.MAX_KEYS)}
    with pytest.raises(StateTooLarge, match="keys"):
        apply(full, Delta(set={"one_more": 1}))
    assert apply(full, Delta(unset=["k0"], set={"one_more": 1}))["one_more"] == 1

    with pytest.raises(StateTooLarge, match="bytes"):
        apply({}, Delta(set={"notes": "x" * agent_state.MAX_BYTES}))
    with pytest.raises(StateTooLarge, match="characters"):
        apply({}, Delta(set={"k" * (agent_state.MAX_KEY_CHARS + 1): 1}))
    assert StateTooLarge.code == "agent_state_too_large"


def test_the_byte_limit_counts_utf8() -> None:
    text = "é" * (agent_state.MAX_BYTES // 2)  # two bytes each: over the limit with the key
    with pytest.raises(StateTooLarge):
        apply({}, Delta(set={"n": text}))


def test_a_delta_is_parsed_with_a_clear_error() -> None:
    assert parse_delta({"set": {"a": 1}}).set == {"a": 1}
    assert parse_delta({}).empty()
    with pytest.raises(errors.InvalidInput, match="replace"):
        parse_delta({"replace": {"a": 1}})
    with pytest.raises(errors.InvalidInput, match="append"):
        parse_delta({"append": {"a": "not a list"}})
