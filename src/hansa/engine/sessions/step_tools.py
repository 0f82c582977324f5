"""A session step's model call, with the agent's tools (seed 004, through the agent loop's
toolbox).

The step's model may call the agent's tools before it answers with its frame. Each call
is judged by the four laws (``engine/toolbox.py``): one out of scope, unclear or unknown
gets a tool error the model reads; the reversible ones run through their task types'
executors, at most ``task_concurrency`` at once; their answers join the prompt, for at
most ``max_tool_rounds`` rounds (then the step fails with ``tool_loop_limit``). An
irreversible call never runs: a session works unattended, with nobody to confirm it, so
the model reads ``needs_confirmation`` and may say in its text what it wants done.

Nothing is written while the step works: the calls (``tool_call``), their answers
(``tool_result``) and what the executors reported (``operation``, ``entity_patch``) go into
the step's batch and commit with the step. A step run again after a crash repeats its
calls under the same idempotency keys (``session:<id>:<n>`` and the call's id), so an
executor that honours them (the entity tools do) does not do the work twice.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from hansa.domain import event, secrets
from hansa.domain.agent import AgentDefinition
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.domain.session import FRAME_SCHEMA, AgentSession
from hansa.engine import runs
from hansa.engine.llm import CallScope, RecordedCall
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.engine.toolbox import Refused, Runs, Settled, Toolbox, ToolLoopLimit
from hansa.models.base import ChatMessage, ModelSettings, RequestParams, ToolCall
from hansa.tasks.builtin import scratchpad

NEEDS_CONFIRMATION = (
    "this tool cannot be undone, and a session's step runs with nobody to confirm it: it did "
    "not run. Say in your text what should be done, for a person to do or approve."
)


@dataclass
class StepAnswer:
    """What a step's model calls produced: the frame's text and everything to record."""

    batch: Batch
    """``tool_call``, ``tool_result`` and the executors' reports, in order."""
    text: str = ""
    """The model's last answer (the frame, as JSON)."""
    calls: list[LlmCall] = field(default_factory=list)
    """Every model call the step made (its own and its executors'), for ``llm_calls``."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The step's tool calls as recorded with it: ``{name, ok, error?}`` each, in order."""


class StepCall:
    """The model calls of one step of ``session``: ask, run tools, ask again."""

    def __init__(
        self,
        services: Services,
        session: AgentSession,
        agent: AgentDefinition,
        project: ProjectContext,
    ) -> None:
        self.services = services
        self.session = session
        self.agent = agent
        self.project = project
        settings = services.settings
        self.model = services.model_for(agent, project)
        self.toolbox = Toolbox(
            services.registry,
            agent,
            project,
            trusted=runs.trusted_targets(services),
            without=frozenset({scratchpad.NAME}),  # the frame's state is the session's notes
        )
        self.max_rounds = settings.max_tool_rounds
        offered = self.toolbox.definitions() if self.max_rounds and self.model.agent_tools else ()
        self.params = RequestParams(
            output_schema=FRAME_SCHEMA, purpose="session_step", tools=offered
        )
        self.model_settings = ModelSettings(max_tokens=agent.model_settings.max_tokens)
        self.scope = CallScope(
            tenant_id=session.tenant_id,
            conversation_id=session.conversation_id,
            node_id=f"session:{session.id}",
            agent_id=agent.id,
        )
        self.origin = f"session:{session.id}:{session.iteration + 1}"
        self._slots = asyncio.Semaphore(settings.task_concurrency)

    async def answer(self, prompt: list[ChatMessage], out: StepAnswer) -> None:
        """Ask until the model answers without tools; ``out`` holds what happened, also
        when a call fails (the error propagates)."""
        rounds = 0
        while True:
            text, calls = await self._ask(prompt, out)
            if not calls:
                out.text = text
                return
            if rounds == self.max_rounds:
                raise ToolLoopLimit(rounds)
            rounds += 1
            settled = await self._round(calls, out)
            prompt += [ChatMessage.calling(calls, text), *(s.message() for s in settled)]

    async def _ask(
        self, prompt: list[ChatMessage], out: StepAnswer
    ) -> tuple[str, tuple[ToolCall, ...]]:
        services = self.services
        call = RecordedCall(self.model, self.scope, services.clock, services.metrics.called)
        try:
            text = "".join([d async for d in call.stream(prompt, self.model_settings, self.params)])
        finally:
            if call.record is not None:
                out.calls.append(call.record)
        assert call.response is not None
        return text, call.response.tool_calls

    async def _round(self, calls: tuple[ToolCall, ...], out: StepAnswer) -> list[Settled]:
        """Announce and judge every call, answer each; the answers in call order."""
        agent_id = self.agent.id
        verdicts = [self.toolbox.judge(call) for call in calls]
        answers: dict[int, Settled] = {}
        for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True)):
            name = self.toolbox.name_of(call.name)
            arguments = secrets.mask(call.arguments)
            out.batch.event(
                event.ToolCallData(tool_call_id=call.id, name=name, arguments=arguments),
                agent_id=agent_id,
            )
            if isinstance(verdict, Refused):
                answers[i] = Settled(
                    call, name, error=event.ToolError(code=verdict.code, message=verdict.message)
                )
            elif not isinstance(verdict, Runs):
                refused = event.ToolError(code="needs_confirmation", message=NEEDS_CONFIRMATION)
                answers[i] = Settled(call, name, error=refused)
        executions = {
            asyncio.create_task(self._execute(i, call, verdict), name=f"session tool {call.id}")
            for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True))
            if isinstance(verdict, Runs)
        }
        reports: dict[int, Batch] = {}
        try:
            for finished in asyncio.as_completed(executions):
                i, answer, done = await finished
                out.calls.extend(done.calls)
                answers[i], reports[i] = answer, done.batch
        finally:  # stopped, or a step that failed: no execution outlives its step
            for execution in executions:
                execution.cancel()
            await asyncio.gather(*executions, return_exceptions=True)
        for i in range(len(calls)):
            if i in reports:
                out.batch.extend(reports[i])
            out.batch.event(answers[i].payload(), agent_id=agent_id)
            error = answers[i].error
            used: dict[str, Any] = {"name": answers[i].name, "ok": error is None}
            if error is not None:
                used["error"] = error.code
            out.tools.append(used)
        return [answers[i] for i in range(len(calls))]

    async def _execute(
        self, i: int, call: ToolCall, verdict: Runs
    ) -> tuple[int, Settled, runs.ToolDone]:
        tool = runs.ToolRun(
            call_id=call.id,
            task_type=verdict.task_type,
            params=verdict.params,
            conversation_id=self.session.conversation_id,
            turn_id=None,
            agent_id=self.agent.id,
            project=self.project,
            origin=self.origin,
            keeps_state=False,
        )
        answer, done = await runs.settle_tool(
            self.services, self.session.tenant_id, tool, call, self._slots
        )
        return i, answer, done
