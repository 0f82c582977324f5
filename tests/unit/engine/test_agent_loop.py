"""The agent loop's rounds, with a function model and a recorder that keeps what it is given.

Only calls the laws refuse are made here (no executor runs, nothing reaches a database):
the rounds, the limit, the prompt the model reads again, the events and the records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from hansa.domain import event
from hansa.domain.base import new_id, utcnow
from hansa.domain.job import Job, JobKind, TurnJob
from hansa.domain.project import ProjectContext
from hansa.engine.metrics import Metrics
from hansa.engine.roster import default_roster
from hansa.engine.runtime.recorder import Batch
from hansa.engine.toolbox import MAX_RESULT_CHARS, Settled, Toolbox, ToolLoopLimit
from hansa.engine.turns.agent_loop import AgentLoop
from hansa.engine.turns.pipeline import TurnContext
from hansa.models.base import (
    ChatMessage,
    ModelResponse,
    ModelSettings,
    RequestParams,
    ToolCall,
)
from hansa.models.function import FunctionModel
from hansa.settings import MAX_TOOL_ROUNDS, Settings
from hansa.tasks.registry import default_registry

pytestmark = pytest.mark.anyio

HANS = next(a for a in default_roster() if a.id == "chief")
PROJECT = ProjectContext(project_id="p1", project_name="Aquaverter")


@dataclass
class KeepingRecorder:
    """Keeps every batch it is asked to write."""

    batches: list[Batch] = field(default_factory=list)

    async def write(self, batch: Batch) -> list[event.Event]:
        self.batches.append(batch)
        return []

    def payloads(self) -> list[Any]:
        return [e.payload for b in self.batches for e, _ in b.items]


@dataclass
class Asked:
    """What the model was asked, call by call."""

    prompts: list[list[ChatMessage]] = field(default_factory=list)
    params: list[RequestParams] = field(default_factory=list)


def _context(model: FunctionModel, **settings: Any) -> tuple[TurnContext, KeepingRecorder]:
    services = SimpleNamespace(
        settings=Settings(delta_flush_ms=5000, **settings),
        model_for=lambda agent, project=None, action=None: model,
        clock=utcnow,
        metrics=Metrics(),
        supervisor=HANS,
    )
    work = TurnJob(turn_id=new_id(), conversation_id=new_id(), message_id=new_id())
    job = Job(
        id=1,
        tenant_id="t1",
        kind=JobKind.TURN,
        key=work.conversation_id,
        payload=work.model_dump(),
        attempts=1,
        max_attempts=3,
        epoch=1,
        lease_owner="test",
        lease_until=utcnow(),
    )
    recorder = KeepingRecorder()
    ctx = TurnContext(
        services=services,  # type: ignore[arg-type]
        job=job,
        tenant_id="t1",
        work=work,
        recorder=recorder,  # type: ignore[arg-type]
        agent=HANS,
        project_context=PROJECT,
        prompt=[ChatMessage("system", "You are Hans."), ChatMessage("user", "Help")],
    )
    return ctx, recorder


def _model(asked: Asked, answers: list[ModelResponse]) -> FunctionModel:
    async def answer(
        messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        asked.prompts.append(list(messages))
        asked.params.append(params)
        return answers[min(len(asked.prompts), len(answers)) - 1]

    return FunctionModel(answer)


def _asks(n: int, name: str = "launch_rockets") -> ModelResponse:
    return ModelResponse("", tool_calls=(ToolCall(f"call_{n}", name, {}),))


async def test_a_refused_call_is_fed_back_and_the_model_then_answers() -> None:
    asked = Asked()
    model = _model(asked, [_asks(1, "delete_page"), ModelResponse("I cannot do that.")])
    ctx, recorder = _context(model)

    text = await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert text == "I cannot do that."
    assert len(asked.prompts) == 2 == len(ctx.reply_calls)
    assert ctx.call is not None and ctx.call.record is ctx.reply_calls[-1]
    offered = {tool.name for tool in asked.params[0].tools}
    assert "wait" in offered and "delete_page" not in offered
    *_, calling, result = asked.prompts[1]
    assert calling.role == "assistant" and [c.name for c in calling.tool_calls] == ["delete_page"]
    assert result.role == "tool" and result.tool_call_id == "call_1" and result.is_error
    assert '"error": "scope_denied"' in result.content
    call, answer = recorder.payloads()
    assert isinstance(call, event.ToolCallData) and call.tool_call_id == "call_1"
    assert isinstance(answer, event.ToolResultData) and answer.ok is False
    assert answer.error is not None and answer.error.code == "scope_denied"


async def test_a_model_that_keeps_asking_for_tools_stops_at_the_round_limit() -> None:
    asked = Asked()
    ctx, recorder = _context(_model(asked, [_asks(n) for n in range(1, 10)]), max_tool_rounds=3)

    with pytest.raises(ToolLoopLimit) as stopped:
        await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert stopped.value.rounds == 3 and stopped.value.code == "tool_loop_limit"
    assert len(asked.prompts) == 4, "three rounds of tools, then one more ask"
    assert len(ctx.reply_calls) == 4, "every model call is recorded"
    kinds = [p.type for p in recorder.payloads()]
    assert kinds == ["tool_call", "tool_result"] * 3, "the last calls were not announced"
    assert len(asked.prompts[-1]) == 2 + 3 * 2, "each round added its calls and answers"


async def test_the_default_limit_is_the_named_constant() -> None:
    assert Settings().max_tool_rounds == MAX_TOOL_ROUNDS == 6


async def test_no_tools_are_offered_when_the_limit_is_zero() -> None:
    asked = Asked()
    ctx, _ = _context(_model(asked, [ModelResponse("Plain answer.")]), max_tool_rounds=0)

    text = await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert text == "Plain answer." and asked.params[0].tools == ()


async def test_a_model_that_takes_no_agent_tools_is_offered_none() -> None:
    asked = Asked()
    model = _model(asked, [ModelResponse("Plain answer.")])
    model.agent_tools = False  # as the embedded model says of itself
    ctx, _ = _context(model)

    text = await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert text == "Plain answer." and asked.params[0].tools == ()


async def test_text_said_before_a_tool_call_and_after_becomes_one_answer() -> None:
    asked = Asked()
    first = ModelResponse("Let me look.", tool_calls=(ToolCall("c1", "nope", {}),))
    ctx, recorder = _context(_model(asked, [first, ModelResponse("Done.")]))

    text = await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert text == "Let me look.\n\nDone."
    kinds = [p.type for p in recorder.payloads()]
    assert kinds == ["text_delta", "tool_call", "tool_result"], "said before it asked"
    assert ctx.pending is not None, "the last text waits for the final message's transaction"
    rest, gate = [e.payload for e, _ in ctx.pending.items]
    assert isinstance(rest, event.TextDeltaData) and rest.delta == "\n\nDone."
    assert isinstance(gate, event.ThinkingData) and "checked" in gate.summary, "the gate ran"
    assert asked.prompts[1][-2].content == "Let me look."


def test_a_long_result_is_cut_for_the_prompt_but_not_for_the_event() -> None:
    call = ToolCall("c1", "entity.read", {})
    settled = Settled(call, "entity.read", result={"text": "x" * (MAX_RESULT_CHARS * 2)})

    assert len(settled.message().content) == MAX_RESULT_CHARS
    assert settled.payload().result == settled.result


async def test_a_false_claim_is_superseded_and_asked_for_once_more() -> None:
    asked = Asked()
    honest = "I have not created the page yet; shall I?"
    model = _model(asked, [ModelResponse("I created the page."), ModelResponse(honest)])
    ctx, recorder = _context(model)
    draft_id = ctx.reply_message_id

    text = await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert text == honest
    assert len(asked.prompts) == 2
    retry = asked.prompts[1]
    assert [m.role for m in retry[-2:]] == ["assistant", "user"]
    assert retry[-2].content == "I created the page."
    assert "'created'" in retry[-1].content and "not sent" in retry[-1].content
    written = recorder.payloads()
    kinds = [p.type for p in written]
    assert kinds == ["text_delta", "draft_superseded", "thinking"], kinds
    superseded = written[1]
    assert isinstance(superseded, event.DraftSupersededData)
    assert superseded.message_id == draft_id and superseded.reasons == ["unbacked_claim"]
    assert ctx.reply_message_id != draft_id, "the answer streams under a new id"
    assert ctx.pending is not None
    last, gate = [e.payload for e, _ in ctx.pending.items]
    assert isinstance(last, event.TextDeltaData) and last.message_id == ctx.reply_message_id
    assert isinstance(gate, event.ThinkingData) and "the new answer" in gate.summary


async def test_an_answer_that_fails_the_gate_twice_goes_out_with_a_note() -> None:
    asked = Asked()
    model = _model(asked, [ModelResponse("I deleted it."), ModelResponse("It has been deleted.")])
    ctx, recorder = _context(model)

    text = await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert len(asked.prompts) == 2, "one retry, no more"
    assert text.startswith("It has been deleted.\n\nNote: an automatic check could not confirm")
    assert ctx.pending is not None
    gate = ctx.pending.items[-1][0].payload
    assert isinstance(gate, event.ThinkingData) and "sent with a note" in gate.summary
    assert [p.type for p in recorder.payloads()].count("draft_superseded") == 1


async def test_an_empty_answer_is_asked_for_again() -> None:
    asked = Asked()
    ctx, _ = _context(_model(asked, [ModelResponse("  "), ModelResponse("Here you go.")]))

    text = await AgentLoop(ctx, Toolbox(default_registry(), HANS, PROJECT)).run()

    assert text == "Here you go."
    assert asked.prompts[1][-1].role == "user", "no empty assistant message in the prompt"
    assert "empty" in asked.prompts[1][-1].content
