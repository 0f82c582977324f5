"""The scratchpad in the prompt: a system block of its own, only when there are notes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hansa.domain.agent_state import AgentState
from hansa.engine.turns import scratchpad
from hansa.models.base import ChatMessage

pytestmark = pytest.mark.anyio

PROMPT = [ChatMessage("system", "You are Finn."), ChatMessage("user", "Hello")]


def _services(state: dict[str, Any], version: int) -> Any:
    stored = AgentState(conversation_id="c1", agent_id="fileAgent", version=version, state=state)

    async def read(fn: Any, *args: Any) -> AgentState:
        assert args == ("t1", "c1", "fileAgent")
        return stored

    return SimpleNamespace(db=SimpleNamespace(read=read))


async def test_notes_follow_the_system_prompt() -> None:
    services = _services({"entities": [{"id": "d1", "name": "Brand book"}]}, 3)

    prompt = await scratchpad.carry(services, "t1", "c1", "fileAgent", PROMPT)

    assert [m.role for m in prompt] == ["system", "system", "user"]
    assert prompt[1].content.startswith(scratchpad.NOTES_INTRO + ", version 3")
    assert '"name": "Brand book"' in prompt[1].content
    assert prompt[0] == PROMPT[0] and prompt[2] == PROMPT[1]


async def test_no_notes_no_block() -> None:
    assert await scratchpad.carry(_services({}, 2), "t1", "c1", "fileAgent", PROMPT) == PROMPT
