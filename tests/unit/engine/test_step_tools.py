"""A session's step runs the one tool loop with the step as its sink: nothing is written
while it works, everything joins the step's batch, and an irreversible call does not run
but reads ``needs_confirmation`` (a function model; no executor runs, no database)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hansa.domain import event
from hansa.domain.base import new_id, utcnow
from hansa.domain.project import ProjectContext
from hansa.domain.session import AgentSession, SessionStatus
from hansa.engine.metrics import Metrics
from hansa.engine.roster import default_roster
from hansa.engine.runtime.recorder import Batch
from hansa.engine.sessions.step_tools import StepAnswer, StepCall
from hansa.models.base import ChatMessage, ModelResponse, ModelSettings, RequestParams, ToolCall
from hansa.models.function import FunctionModel
from hansa.settings import Settings
from hansa.tasks.registry import default_registry

pytestmark = pytest.mark.anyio

WEB = next(a for a in default_roster() if a.id == "webEngineer")
FRAME = '{"nextStep": "2", "state": {}, "done": true}'


def _session() -> AgentSession:
    now = utcnow()
    return AgentSession(
        id=new_id(),
        tenant_id="t1",
        agent_id=WEB.id,
        conversation_id=new_id(),
        goal="Tidy the site",
        status=SessionStatus.RUNNING,
        iteration=0,
        step="1",
        state={},
        guidance=None,
        max_steps=3,
        max_runtime_seconds=None,
        next_run_at=None,
        reason=None,
        created_at=now,
        updated_at=now,
    )


async def test_a_steps_calls_join_its_batch_and_an_irreversible_one_does_not_run() -> None:
    asked: list[RequestParams] = []
    calls = (ToolCall("c1", "delete_page", {"pageId": "home"}), ToolCall("c2", "nope", {}))

    async def answer(
        messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        asked.append(params)
        return ModelResponse("", tool_calls=calls) if len(asked) == 1 else ModelResponse(FRAME)

    model = FunctionModel(answer)
    services = SimpleNamespace(
        settings=Settings(),
        registry=default_registry(),
        model_for=lambda agent, project=None, action=None: model,
        clock=utcnow,
        metrics=Metrics(),
    )
    session = _session()
    out = StepAnswer(Batch(session.conversation_id, None))

    step = StepCall(services, session, WEB, ProjectContext(project_id=None))  # type: ignore[arg-type]
    await step.answer([ChatMessage("user", "{}")], out)

    assert out.text == FRAME and len(out.calls) == 2
    assert asked[0].purpose == "session_step" and asked[0].output_schema is not None
    assert "delete_page" in {tool.name for tool in asked[0].tools}
    assert out.tools == [
        {"name": "delete_page", "ok": False, "error": "needs_confirmation"},
        {"name": "nope", "ok": False, "error": "unknown_tool"},
    ]
    kinds = [e.payload.type for e, _ in out.batch.items]
    assert kinds == ["tool_call", "tool_call", "tool_result", "tool_result"]
    refused, held = (e.payload for e, _ in out.batch.items[2:])
    assert isinstance(refused, event.ToolResultData) and refused.tool_call_id == "c2"
    assert isinstance(held, event.ToolResultData) and held.tool_call_id == "c1"
    assert all(e.turn_id is None for e, _ in out.batch.items), "a step is no turn"
