"""The agent's state as a section of the context budget (issue 32 item 3): carried after the
persona, counted in ``context_usage``'s sections, cut to its share of the window (what is
left out named), and swapped when another agent answers than the one routed to."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hansa.domain.agent_state import AgentState
from hansa.engine import agent_notes
from hansa.engine.agent_notes import Notes
from hansa.engine.context_budget import PromptParts, fit
from hansa.engine.context_packs import estimate_tokens
from hansa.engine.turns import scratchpad
from hansa.models.base import ChatMessage

pytestmark = pytest.mark.anyio

STATE: dict[str, Any] = {
    "goal": "A faster site for Aquaverter",
    "openQuestions": ["What is the budget?"],
    "decisions": ["Use a CDN"],
    "facts": [f"Fact number {i}: " + "detail " * 12 for i in range(40)],
    "entities": [{"id": "e1", "kind": "goal", "name": "Speed"}],
    "clientMood": "impatient",
}


def _parts(window: int, state: dict[str, Any], agent_id: str = "webEngineer") -> PromptParts:
    return PromptParts(
        window=window,
        reply=100,
        system="You are one of a team.",
        tools=0,
        message="What next?",
        agent="You are Wes.",
        history=(ChatMessage("user", "hello"),),
        state=Notes(agent_id, 7, state),
    )


def test_the_state_rides_after_the_persona_and_is_counted() -> None:
    small = {k: STATE[k] for k in ("goal", "openQuestions", "decisions", "clientMood")}

    fitted = fit(_parts(8_000, small))
    notes = fitted.prompt[-2]

    assert [m.role for m in fitted.prompt] == ["system", "user", "system", "system", "user"]
    assert fitted.prompt[-3].content == "You are Wes." and notes.role == "system"
    assert notes.content.startswith(agent_notes.INTRO + ", version 7")
    for line in ("Goal: A faster site", "Open question: What is the budget?", "Use a CDN"):
        assert line in notes.content
    assert 'Note clientMood: "impatient"' in notes.content
    assert fitted.sections["state"] == estimate_tokens(notes.content) + 4
    assert fitted.budgets["state"] == int(8_000 * agent_notes.STATE_SHARE)
    assert fitted.dropped == [] and fitted.state_of == "webEngineer"


def test_a_state_past_its_share_is_cut_notes_and_oldest_facts_first_and_reported() -> None:
    fitted = fit(_parts(2_048, STATE))  # the embedded model's window
    notes = next(m.content for m in fitted.prompt if m.content.startswith(agent_notes.INTRO))
    (cut,) = [d for d in fitted.dropped if d.section == "state"]

    assert fitted.sections["state"] <= fitted.budgets["state"] == int(2_048 * 0.15)
    assert "Goal: A faster site" in notes and "What is the budget?" in notes
    assert "clientMood" not in notes, "a free note goes before the typed items"
    assert "Fact number 39" in notes and "Fact number 0:" not in notes, "oldest facts first"
    assert cut.what.startswith("agent state v7: ") and cut.tokens > 0
    whole = agent_notes.render(Notes("webEngineer", 7, STATE))
    assert cut.tokens == estimate_tokens(whole) + 4 - fitted.sections["state"]
    assert fitted.prompt[1].content == "hello", "the history still has room"


def test_no_state_no_message_and_a_zero_section() -> None:
    fitted = fit(_parts(8_000, {}))

    assert [m.role for m in fitted.prompt] == ["system", "user", "system", "user"]
    assert fitted.sections["state"] == 0 and fitted.state_of == "webEngineer"


def _services(stored: AgentState) -> Any:
    async def read(fn: Any, *args: Any) -> AgentState:
        assert args == ("t1", "c1", stored.agent_id)
        return stored

    return SimpleNamespace(db=SimpleNamespace(read=read))


async def test_a_hand_over_swaps_the_notes_for_the_answering_agents() -> None:
    fitted = fit(_parts(2_048, STATE, agent_id="webEngineer"))
    theirs = AgentState(
        conversation_id="c1", agent_id="fileAgent", version=2, state={"goal": "File the brief"}
    )

    prompt = await scratchpad.carry(
        _services(theirs), "t1", "c1", "fileAgent", fitted.prompt, fitted
    )

    notes = [m.content for m in prompt if m.content.startswith(agent_notes.INTRO)]
    assert len(notes) == 1 and "Goal: File the brief" in notes[0] and "version 2" in notes[0]
    assert prompt[-2].content == notes[0] and prompt[-1].content == "What next?"
    assert fitted.state_of == "fileAgent"
    assert fitted.sections["state"] == estimate_tokens(notes[0]) + 4
    assert [d for d in fitted.dropped if d.section == "state"] == [], "their notes fit"


async def test_the_same_agent_keeps_its_fitted_notes_without_reading_again() -> None:
    fitted = fit(_parts(2_048, STATE))
    unread = SimpleNamespace(db=None)  # a read would fail

    prompt = await scratchpad.carry(unread, "t1", "c1", "webEngineer", fitted.prompt, fitted)

    assert prompt == fitted.prompt


async def test_an_answering_agent_without_notes_gets_none() -> None:
    fitted = fit(_parts(8_000, STATE))
    empty = AgentState(conversation_id="c1", agent_id="chief", version=0, state={})

    prompt = await scratchpad.carry(_services(empty), "t1", "c1", "chief", fitted.prompt, fitted)

    assert not any(m.content.startswith(agent_notes.INTRO) for m in prompt)
    assert fitted.sections["state"] == 0 and len(prompt) == len(fitted.prompt) - 1


def test_a_state_shrunk_at_a_turns_end_fits_its_section_whole_next_time() -> None:
    budget = int(2_048 * agent_notes.STATE_SHARE)

    state, lost = agent_notes.shrink(Notes("webEngineer", 8, STATE), budget)
    fitted = fit(_parts(2_048, state))

    assert lost > 0 and state["goal"] == STATE["goal"] and "clientMood" not in state
    assert [d for d in fitted.dropped if d.section == "state"] == [], "nothing more to cut"
    assert fitted.sections["state"] <= budget


def test_shrinking_drops_the_fewest_items_that_fit_in_one_pass() -> None:
    many = {"goal": "g", "facts": [f"f{i:04}" for i in range(1_500)], "mood": "calm"}
    notes = Notes("webEngineer", 3, many)

    state, lost = agent_notes.shrink(notes, 300)
    one_less = {**state, "facts": many["facts"][-len(state["facts"]) - 1 :]}

    assert "mood" not in state and state["facts"] == many["facts"][-len(state["facts"]) :]
    assert lost == 1 + 1_500 - len(state["facts"])
    assert agent_notes.cost(agent_notes.render(Notes("webEngineer", 3, state))) <= 300
    assert agent_notes.cost(agent_notes.render(Notes("webEngineer", 3, one_less))) > 300
