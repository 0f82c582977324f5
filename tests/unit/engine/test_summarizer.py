"""The summarizer's structured answer (seed 002 §5.4): its schema and what is kept of it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hansa.domain.summary import StateUpdate
from hansa.engine import summarizer
from hansa.models.openai import strict

FOLDED = ["m1", "m2", "m3"]
AGENTS = ["chief", "builder"]


def _answer(**over: Any) -> str:
    body = {
        "summary": "The user reviews a contract.",
        "keptMessageIds": ["m2"],
        "droppedMessageIds": ["m1", "m3"],
        "stateUpdates": [{"agentId": "chief", "op": "set", "key": "goal", "value": "review"}],
    }
    return json.dumps({**body, **over})


def test_the_schema_holds_ids_and_agents_to_what_was_offered_and_forbids_removals() -> None:
    schema = summarizer.schema(FOLDED, AGENTS)
    props = schema["properties"]

    assert schema["required"] == [
        "summary",
        "keptMessageIds",
        "droppedMessageIds",
        "stateUpdates",
    ]
    assert props["keptMessageIds"]["items"]["enum"] == FOLDED
    update = props["stateUpdates"]["items"]
    assert update["properties"]["agentId"]["enum"] == AGENTS
    assert update["properties"]["op"]["enum"] == ["set", "append"], "no unset"
    assert strict(schema), "closed objects only: the providers' strict structured output"


def test_a_good_answer_is_read_whole() -> None:
    answer = summarizer.parse(_answer(), FOLDED, AGENTS)

    assert answer is not None and answer.summary == "The user reviews a contract."
    assert answer.kept == ["m2"] and answer.dropped == ["m1", "m3"]
    assert answer.state_updates == [StateUpdate(agent_id="chief", set={"goal": "review"})]


@pytest.mark.parametrize(
    "raw",
    [
        "The user reviews a contract.",  # prose, no JSON
        '{"summary": "cut off", "keptMessageIds": [',
        json.dumps(["a list"]),
        _answer(summary="   "),
        _answer(summary=7),
    ],
)
def test_an_unusable_answer_is_none(raw: str) -> None:
    assert summarizer.parse(raw, FOLDED, AGENTS) is None


def test_ids_agents_and_updates_that_do_not_fit_are_left_out() -> None:
    raw = _answer(
        keptMessageIds=["m9", "m1", "m1", 3, "m2", "m3"],
        droppedMessageIds="m1",
        stateUpdates=[
            {"agentId": "chief", "op": "unset", "key": "goal", "value": ""},  # a removal
            {"agentId": "stranger", "op": "set", "key": "a", "value": "1"},  # not offered
            {"agentId": "chief", "op": "append", "key": "facts", "value": ["not text"]},
            {"agentId": "chief", "op": "set", "key": " ", "value": "no key"},
            {"agentId": "chief", "set": {"goal": "the old shape"}},
            {"agentId": "builder", "op": "append", "key": "facts", "value": "ships in 14 days"},
        ],
    )

    answer = summarizer.parse(raw, FOLDED, AGENTS)

    assert answer is not None
    assert answer.kept == ["m1", "m2"], "known ids, once each, at most MAX_KEPT"
    assert answer.dropped == []
    assert answer.state_updates == [
        StateUpdate(agent_id="builder", append={"facts": ["ships in 14 days"]})
    ]


def test_the_scope_names_the_focus_and_the_project() -> None:
    assert summarizer.scope_of(None, None) == "global"
    assert summarizer.scope_of("p1", None) == "project p1"
    assert summarizer.scope_of("p1", "e1") == "entity e1 in project p1"
    assert summarizer.scope_of(None, "e1") == "entity e1"
