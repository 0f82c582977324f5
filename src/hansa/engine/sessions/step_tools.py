"""A session step's model call, with the agent's tools (seed 004): the tool loop
(``runs.ToolLoop``), with the step as its sink.

The step's model may call the agent's tools before it answers with its frame, under the
same laws, rounds and limits as a turn's. An irreversible call never runs: a session works
unattended, with nobody to confirm it, so the model reads ``needs_confirmation`` and may
say in its text what it wants done.

Nothing is written while the step works: the calls (``tool_call``), their answers
(``tool_result``) and what the executors reported (``operation``, ``entity_patch``) go into
the step's batch and commit with the step. A step run again after a crash (or after a
stop or pause landed while it ran: decision 0037) repeats its calls under the same
idempotency keys (``session:<id>:<n>`` and the call's place in the step, not the model's
call id, which a model asked again names anew), so an executor that honours them (the
entity tools do) does not do the work twice, and the record tells what it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hansa.domain import event
from hansa.domain.agent import AgentDefinition
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.domain.session import FRAME_SCHEMA, AgentSession
from hansa.engine import runs
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.engine.toolbox import Settled, Toolbox, Waits
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
        self.toolbox = Toolbox(
            services.registry,
            agent,
            project,
            trusted=runs.trusted_targets(services),
            without=frozenset({scratchpad.NAME}),  # the frame's state is the session's notes
        )
        self.caller = runs.ToolCaller(
            conversation_id=session.conversation_id,
            turn_id=None,
            agent_id=agent.id,
            project=project,
            node_id=f"session:{session.id}",
            origin=f"session:{session.id}:{session.iteration + 1}",
            keeps_state=False,
            keyed_by_place=True,
        )
        self.model = services.model_for(agent, project)
        self.params = RequestParams(output_schema=FRAME_SCHEMA, purpose="session_step")
        self.model_settings = ModelSettings(max_tokens=agent.model_settings.max_tokens)

    async def answer(self, prompt: list[ChatMessage], out: StepAnswer) -> None:
        """Ask until the model answers without tools; ``out`` holds what happened, also
        when a call fails (the error propagates)."""
        loop = runs.ToolLoop(
            self.services,
            self.session.tenant_id,
            self.caller,
            self.toolbox,
            self.model,
            self.model_settings,
            self.params,
            _Collected(out.batch, self.agent.id),
            out.calls,
        )
        try:
            out.text = await loop.answer(prompt)
        finally:
            out.tools.extend(_used(answer) for answer in loop.answered)


@dataclass
class _Collected:
    """The step as the tool loop's sink: everything goes into the step's batch."""

    batch: Batch
    agent_id: str

    async def say(self, delta: str, *, fresh: bool) -> None:
        """Nothing streams: the answer is the frame."""

    async def announce(self, batch: Batch) -> None:
        self.batch.extend(batch)

    async def hold(self, call: ToolCall, verdict: Waits) -> Settled:
        refused = event.ToolError(code="needs_confirmation", message=NEEDS_CONFIRMATION)
        answer = Settled(call, verdict.task_type.name, error=refused)
        self.batch.event(answer.payload(), agent_id=self.agent_id)
        return answer

    async def settled(self, answer: Settled, done: runs.ToolDone) -> Settled:
        self.batch.extend(done.batch)
        self.batch.event(answer.payload(), agent_id=self.agent_id)
        return answer


def _used(answer: Settled) -> dict[str, Any]:
    """A tool call as the step's record lists it."""
    used: dict[str, Any] = {"name": answer.name, "ok": answer.error is None}
    if answer.error is not None:
        used["error"] = answer.error.code
    return used
