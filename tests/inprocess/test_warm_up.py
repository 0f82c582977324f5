"""Start-up warms the supervisor's model with the prompt a plain turn begins with, so the
embedded model has the turn's system prompt computed before the first message comes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hansa.models.base import ChatMessage, ModelResponse, ModelSettings, RequestParams
from hansa.models.function import FunctionModel
from inprocess.asgi import running_app, said

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


class Warmed(FunctionModel):
    """A function model that keeps what it was warmed with."""

    warmed: list[list[ChatMessage]]

    async def warm(self, messages: list[ChatMessage]) -> None:
        self.warmed.append(messages)


async def test_the_warm_up_prompt_begins_like_a_plain_turns(tmp_path: Path) -> None:
    prompts: list[list[ChatMessage]] = []

    def hans(messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> ModelResponse:
        prompts.append(messages)
        return ModelResponse("Here is one tip: keep it short.")

    model = Warmed(hans)
    model.warmed = []
    async with running_app(tmp_path, model) as hansa:
        assert len(model.warmed) == 1, "warmed once, before serving"
        cid = await hansa.conversation()
        events = await hansa.turn(cid, "Give me one tip about headlines.")

    assert said(events) == ["Here is one tip: keep it short."]
    (warm,) = model.warmed
    (prompt,) = prompts
    assert warm[0].role == "system" and warm[0] == prompt[0], "the same system prompt"
    assert [m.role for m in warm] == ["system", "system", "user"], "shared, the agent, message"
    assert warm[1] == prompt[1], "the supervisor's own part too (issue 34: it comes last)"
