"""``agent_state.update``: an agent keeps notes in its scratchpad (seed 002 §8.6).

The parameters are a delta (``domain/agent_state.py``): keys to ``unset``, list items
to ``remove``, keys to ``set``, lists to ``append`` to; the typed keys (goal, facts,
decisions, openQuestions, entities, dependencies, assumptions) must hold their types.
The executor only proposes it; the agent loop applies it to the stored state in the
transaction of the call's result and answers with the new version and state. Every
agent may use it (``ANY_AGENT``); a project's ``allowedTaskTypes`` may still leave it out.
A run's step has no scratchpad: there the call fails (``no_agent_state``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from hansa.domain import agent_state
from hansa.tasks.base import ANY_AGENT, Params, Result, TaskContext, TaskFailed, TaskType
from hansa.tasks.registry import Register

NAME = "agent_state.update"
"""The tool's name."""


class UpdateAgentState(Params):
    unset: list[str] = Field(default_factory=list, max_length=agent_state.MAX_KEYS)
    """Keys to remove."""
    remove: dict[str, list[Any]] = Field(default_factory=dict)
    """List items to remove, by key: an item's id, or the item itself."""
    set: dict[str, Any] = Field(default_factory=dict)
    """Keys and their new values."""
    append: dict[str, list[Any]] = Field(default_factory=dict)
    """Lists to extend; a dict item with an ``id`` replaces the item of that id."""

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateAgentState:
        if not (self.unset or self.remove or self.set or self.append):
            raise ValueError("give at least one of unset, remove, set or append")
        return self


async def _update(p: UpdateAgentState, ctx: TaskContext) -> Result:
    if ctx.state_deltas is None:
        raise TaskFailed(
            "an agent's state is kept in a conversation's turns, not in a run's steps",
            code="no_agent_state",
        )
    ctx.state_deltas.append(p.model_dump())
    return {"status": "proposed"}  # the agent loop answers with the applied state


def register(add: Register) -> None:
    """Register agent_state.update."""
    add(
        TaskType(
            NAME,
            "Update your notes for this conversation (your agent state): what you know, "
            "assume and expect. Keys: goal (text); facts, decisions, openQuestions (lists of "
            "texts); entities [{id, kind, name}]; assumptions [{id, hypothesis, confidence "
            "0-1}] (never removed: set confidence 0); any other key is a free note. unset "
            "removes keys, remove takes items out of lists (by id or value), set replaces "
            "keys, append extends lists. Your notes come back to you in later turns.",
            UpdateAgentState,
            _update,
            ANY_AGENT,
        )
    )
