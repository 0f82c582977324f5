"""The agent's tool loop, for a turn (``engine/turns/agent_loop.py``) and for a session's
step (``engine/sessions/step_tools.py``): one ``ToolLoop``, each call a task execution.

The model answers, calling tools on the way. A round judges every call by the laws
(``engine/toolbox.py``) and announces them all (``tool_call``, arguments masked); a call
out of scope, unclear or unknown gets a tool error the model reads; the reversible ones run
through their task types' executors, at most ``task_concurrency`` at once, as a run's step
does but with no task row (what they report is recorded with the caller); an irreversible
one does not run here. The calls and their answers join the prompt and the model is asked
again, until it answers without tools; one that still asks after ``max_tool_rounds``
rounds ends with ``tool_loop_limit``. Every model call is kept, for ``llm_calls``; one that
fails transiently before it streamed is made again (``llm.Retry``), each attempt kept.

A turn and a session's step differ only through their ``Sink``: a turn streams the text
and commits each announcement and answer as it comes, and holds an irreversible call as a
one-step run awaiting the user's confirmation (``hold_for_confirmation``, decision 0013);
a step collects everything for its own commit, and an irreversible call gets
``needs_confirmation`` (a session works unattended).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from sqlalchemy import Connection

from hansa.domain import event, run, secrets
from hansa.domain.base import new_id
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.engine.llm import CallScope, RecordedCall, Retry
from hansa.engine.runs import drafts, service
from hansa.engine.runs.asking import Doer
from hansa.engine.runs.invoke import Announce, Execution, perform
from hansa.engine.runtime.recorder import Batch, Later
from hansa.engine.runtime.services import Services
from hansa.engine.toolbox import Refused, Runs, Settled, Toolbox, ToolLoopLimit, Waits
from hansa.models.base import ChatMessage, Model, ModelSettings, RequestParams, ToolCall
from hansa.store import runs
from hansa.tasks.base import TaskFailed

T = TypeVar("T")


@dataclass(frozen=True)
class ToolCaller:
    """The turn or session step whose model calls tools."""

    conversation_id: str
    turn_id: str | None
    """The turn it is; None for a session's step."""
    agent_id: str
    project: ProjectContext
    node_id: str
    """Whom its model calls are recorded for: ``reply`` (a turn), ``session:<id>``."""
    origin: str
    """What the calls belong to, for their idempotency keys: the turn's id, or a session's
    step (``session:<id>:<n>``), so that a step run again after a crash repeats its keys."""
    announce: Announce | None = None
    """Commits an executor's ``start`` operations at once (the turn's ``Recorder.write``)."""
    keeps_state: bool = True
    """Whether executors may propose scratchpad deltas (a turn); a session's step keeps
    its state in its frame, so there ``agent_state.update`` fails (``no_agent_state``)."""
    keyed_by_place: bool = False
    """Key each call by its place in the loop (``#<n>``, counting from 0) instead of the
    model's call id (a session's step): a model asked again after a crash names its calls
    anew, so only their place repeats (decision 0037)."""


@dataclass
class ToolDone:
    """What a tool call's execution produced."""

    batch: Batch
    """The ``operation`` and ``entity_patch`` events it reported, tagged with the turn."""
    result: dict[str, Any] | None = None
    failure: TaskFailed | None = None
    calls: list[LlmCall] = field(default_factory=list)
    """Model calls the executor made (``TaskContext.generate``)."""
    deltas: list[dict[str, Any]] = field(default_factory=list)
    """Deltas to the agent's scratchpad the executor proposed (applied with the result)."""


class Sink(Protocol):
    """Where a turn and a session's step differ while the tool loop runs."""

    async def say(self, delta: str, *, fresh: bool) -> None:
        """A text delta of the model's answer (``fresh``: the first of a model call)."""

    async def announce(self, batch: Batch) -> None:
        """A round's ``tool_call`` events and the laws' refusals, in call order."""

    async def hold(self, call: ToolCall, verdict: Waits) -> Settled:
        """An irreversible call, which does not run here; the answer the model reads."""

    async def settled(self, answer: Settled, done: ToolDone) -> Settled:
        """An executed call's answer and what its executor reported, to record; the answer
        the model reads (it may differ: a scratchpad change refused as it is applied)."""


class ToolLoop:
    """Model calls and tool rounds until the model answers without tools."""

    def __init__(
        self,
        services: Services,
        tenant_id: str,
        caller: ToolCaller,
        toolbox: Toolbox,
        model: Model,
        model_settings: ModelSettings,
        params: RequestParams,
        sink: Sink,
        calls: list[LlmCall],
    ) -> None:
        self.services = services
        self.tenant_id = tenant_id
        self.caller = caller
        self.toolbox = toolbox
        self.model = model
        self.model_settings = model_settings
        self.max_rounds = services.settings.max_tool_rounds
        offered = toolbox.definitions() if self.max_rounds and model.agent_tools else ()
        self.params = dataclasses.replace(params, tools=offered)
        self.scope = CallScope(
            tenant_id=tenant_id,
            conversation_id=caller.conversation_id,
            turn_id=caller.turn_id,
            node_id=caller.node_id,
            agent_id=caller.agent_id,
        )
        self.sink = sink
        self.calls = calls
        """Every model call made (the loop's own and its executors'), for ``llm_calls``."""
        self.call: RecordedCall | None = None
        """The last model call of the loop's own."""
        self.retry = Retry.of(services.settings)
        self.answered: list[Settled] = []
        """Every tool call's answer, round by round, in call order."""
        self._slots = asyncio.Semaphore(services.settings.task_concurrency)

    async def answer(self, prompt: list[ChatMessage]) -> str:
        """Ask, run tools, ask again until the model answers without tools; the text of that
        last answer. The rounds join ``prompt``."""
        rounds = 0
        while True:
            text, calls = await self._ask(prompt)
            if not calls:
                return text
            if rounds == self.max_rounds:
                raise ToolLoopLimit(rounds)
            rounds += 1
            settled = await self._round(calls)
            prompt += [ChatMessage.calling(calls, text), *(s.message() for s in settled)]

    async def _ask(self, prompt: list[ChatMessage]) -> tuple[str, tuple[ToolCall, ...]]:
        """One model call; one that fails transiently before it streamed is made again, as
        ``retry`` says (each attempt kept)."""
        return await self.retry.run(
            lambda: self._attempt(prompt), lambda: self.call is not None and self.call.streamed
        )

    async def _attempt(self, prompt: list[ChatMessage]) -> tuple[str, tuple[ToolCall, ...]]:
        services = self.services
        call = self.call = RecordedCall(
            self.model, self.scope, services.clock, services.metrics.called
        )
        parts: list[str] = []
        try:
            async for delta in call.stream(prompt, self.model_settings, self.params):
                await self.sink.say(delta, fresh=bool(delta) and not parts)
                parts.append(delta)
        finally:
            if (record := call.settled()) is not None:
                self.calls.append(record)
        assert call.response is not None
        return "".join(parts), call.response.tool_calls

    async def _round(self, calls: tuple[ToolCall, ...]) -> list[Settled]:
        """Judge and announce every call, answer each; the answers in call order."""
        agent_id = self.caller.agent_id
        verdicts = [self.toolbox.judge(call) for call in calls]
        batch = Batch(self.caller.conversation_id, self.caller.turn_id)
        for call in calls:
            name = self.toolbox.name_of(call.name)
            arguments = secrets.mask(call.arguments)
            called = event.ToolCallData(tool_call_id=call.id, name=name, arguments=arguments)
            batch.event(called, agent_id=agent_id)
        answers: dict[int, Settled] = {}
        for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True)):
            if isinstance(verdict, Refused):
                refused = event.ToolError(code=verdict.code, message=verdict.message)
                answers[i] = Settled(call, self.toolbox.name_of(call.name), error=refused)
                batch.event(answers[i].payload(), agent_id=agent_id)
        await self.sink.announce(batch)
        before = len(self.answered)  # the calls of earlier rounds: this round's places follow
        executions = {
            asyncio.create_task(
                self._execute(i, call, verdict, before + i),
                name=f"tool {call.id} {verdict.task_type.name}",
            )
            for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True))
            if isinstance(verdict, Runs)
        }
        try:
            for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True)):
                if isinstance(verdict, Waits):
                    answers[i] = await self.sink.hold(call, verdict)
            for finished in asyncio.as_completed(executions):
                i, answer, done = await finished
                self.calls.extend(done.calls)
                answers[i] = await self.sink.settled(answer, done)
        finally:  # cancelled, or a write refused: no execution outlives its caller
            for execution in executions:
                execution.cancel()
            await asyncio.gather(*executions, return_exceptions=True)
        ordered = [answers[i] for i in range(len(calls))]
        self.answered.extend(ordered)
        return ordered

    async def _execute(
        self, i: int, call: ToolCall, verdict: Runs, place: int
    ) -> tuple[int, Settled, ToolDone]:
        """Run ``call``'s executor once a slot is free: its answer as the model reads it (a
        result, or its failure as a tool error), and what the execution produced. Cut (its
        turn cancelled), the model calls it made so far are the loop's all the same."""
        done = ToolDone(Batch(self.caller.conversation_id, self.caller.turn_id))
        try:
            async with self._slots:
                await _perform(
                    self.services, self.tenant_id, self.caller, call, verdict, done, place
                )
        except asyncio.CancelledError:
            self.calls.extend(done.calls)
            raise
        name = verdict.task_type.name
        if done.failure is not None:
            failed = event.ToolError(code=done.failure.code, message=done.failure.message)
            return i, Settled(call, name, error=failed), done
        return i, Settled(call, name, result=done.result), done


async def _perform(
    services: Services,
    tenant_id: str,
    caller: ToolCaller,
    call: ToolCall,
    verdict: Runs,
    done: ToolDone,
    place: int,
) -> None:
    """Run the call's executor under the task time limit into ``done``; a failure is a
    ``TaskFailed``."""
    named = f"#{place}" if caller.keyed_by_place else call.id
    key = hashlib.sha256(f"{caller.origin}:{named}".encode()).hexdigest()[:40]
    execution = Execution(
        verdict.task_type,
        verdict.params,
        caller.project,
        caller.project.project_id,
        Doer(caller.conversation_id, caller.agent_id),
        new_id(),
        f"hansa-tool-{key}",
        {},
        done.batch,
        done.calls,
        announce=caller.announce,
        state_deltas=done.deltas if caller.keeps_state else None,
    )
    done.result, done.failure = await perform(services, tenant_id, execution)


def hold_for_confirmation(
    services: Services,
    tenant_id: str,
    batch: Batch,
    draft: drafts.TaskDraft,
    title: str,
    held: Callable[[str, run.Task], T],
) -> Later[T]:
    """Add to ``batch`` the steps that store a one-step run of ``draft`` (checked by the
    laws again) and start it, so that the scheduler holds its irreversible task for consent.

    ``held(run_id, task)`` runs in the same transaction, once the task is stored (to
    announce it); what it returns is readable once the batch has committed.
    """
    new = service.NewRun(batch.conversation_id, title[:200], draft.project_id, [draft])
    run_id = new_id()

    def read_task(conn: Connection) -> T:
        (task,) = runs.tasks_of(conn, run_id)
        return held(run_id, task)

    batch.then(
        service.on_run(services, tenant_id, run_id, batch, lambda c: service.store_run(c, new))
    )
    batch.then(service.approving(services, tenant_id, run_id, batch))
    return batch.then(read_task)
