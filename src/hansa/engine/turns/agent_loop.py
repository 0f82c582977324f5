"""The agent loop (seeds 002, 003): the agent's model answers, calling tools on the way.

A round streams the model's answer (text deltas coalesced into ``text_delta`` events, as
for any reply) and collects the tools it asked for. Each call is announced
(``tool_call``) and judged by the laws (``toolbox``): a call out of scope, unclear or
unknown gets a tool error the model reads; an irreversible one does not run but becomes
a run awaiting the user's confirmation (decision 0013), which the answer then names; the
reversible ones run through their task types' executors, at most ``task_concurrency`` at
once. Each answer is announced (``tool_result``) as it comes, the calls and their answers
join the prompt, and the model is asked again, until it answers without tools. A model
that still asks for tools after ``max_tool_rounds`` rounds ends the turn with
``tool_loop_limit``. Every model call is recorded: one ``llm_calls`` row each.

Before the answer goes out, the quality gate (``turns/quality.py``) checks it; a draft it
holds back is marked ``draft_superseded`` and the model answers once more (``MAX_RETRIES``)
under a new message id, reading why. A thinking entry says what the gate found.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, message, secrets
from hansa.domain.base import new_id
from hansa.engine import quality_gate, runs, thinking
from hansa.engine.llm import CallScope, RecordedCall
from hansa.engine.runtime.recorder import Batch
from hansa.engine.toolbox import Refused, Runs, Settled, Toolbox, ToolLoopLimit, Waits
from hansa.engine.turns import quality, scratchpad
from hansa.engine.turns.deltas import DeltaCoalescer
from hansa.engine.turns.pipeline import TurnContext
from hansa.models.base import ChatMessage, ModelSettings, RequestParams, ToolCall
from hansa.tasks.builtin import scratchpad as scratchpad_tool


class AgentLoop:
    """One turn's reply: model calls and tool rounds until the model answers."""

    def __init__(self, ctx: TurnContext, toolbox: Toolbox) -> None:
        assert ctx.agent is not None and ctx.project_context is not None
        self.ctx = ctx
        self.agent = ctx.agent
        self.project = ctx.project_context
        self.toolbox = toolbox
        settings = ctx.services.settings
        self.max_rounds = settings.max_tool_rounds
        self.model = ctx.services.model_for(self.agent, self.project)
        self.model_settings = ModelSettings(
            temperature=self.agent.model_settings.temperature,
            max_tokens=self.agent.model_settings.max_tokens,
        )
        offered = toolbox.definitions() if self.max_rounds and self.model.agent_tools else ()
        self.params = RequestParams(tools=offered)
        self.scope = CallScope(
            tenant_id=ctx.tenant_id,
            conversation_id=ctx.conversation_id,
            turn_id=ctx.turn_id,
            node_id="reply",
            agent_id=self.agent.id,
        )
        self.coalescer = DeltaCoalescer(
            self._write_delta,
            max_chars=settings.delta_flush_chars,
            max_age=settings.delta_flush_ms / 1000,
        )
        self._slots = asyncio.Semaphore(settings.task_concurrency)
        self._said: list[str] = []
        self.held: list[str] = []
        """Summaries of the irreversible steps held for confirmation."""
        self.performed: list[str] = []
        """The task types of the turn's tool calls that succeeded, in the order they ended."""

    async def run(self) -> str:
        """Answer, pass the quality gate (or retry once), and return the answer's text (the
        deltas are written meanwhile, the last of them added to the turn's pending batch)."""
        prompt = list(self.ctx.prompt)
        for attempt in range(quality_gate.MAX_RETRIES + 1):
            text = await self._answer(prompt)
            review = await quality.review(self.ctx, text, self.performed)
            if not review.findings or attempt == quality_gate.MAX_RETRIES:
                break
            await self._supersede(review)
            if text:
                prompt.append(ChatMessage("assistant", text))
            prompt.append(ChatMessage("user", quality_gate.retry_note(review.findings)))
        codes = review.codes
        supervisor = self.ctx.supervisor
        if codes:
            entry = thinking.gate_failed_entry(supervisor, codes)
            await self._say(
                f"\n\n{thinking.gate_note(codes)}" if text else thinking.gate_note(codes)
            )
        else:
            entry = thinking.gate_passed_entry(
                supervisor, self.agent, evaluated=review.evaluated, retried=attempt > 0
            )
        if self.held:
            note = thinking.awaiting_confirmation_note(self.held)
            await self._say(f"\n\n{note}" if "".join(self._said).strip() else note)
        rest = await self.coalescer.take()
        batch = self.ctx.batch()
        if rest:
            self._delta(batch, rest)
        batch.thinking(entry, agent_id=supervisor.id, phase=message.Phase.VALIDATION)
        return "".join(self._said).strip()

    async def _answer(self, prompt: list[ChatMessage]) -> str:
        """Ask, run tools, ask again until the model answers without tools; this answer's
        text. The rounds join ``prompt``."""
        start = len(self._said)
        rounds = 0
        while True:
            text, calls = await self._ask(prompt)
            if not calls:
                break
            if rounds == self.max_rounds:
                raise ToolLoopLimit(rounds)
            rounds += 1
            settled = await self._round(calls)
            prompt += [ChatMessage.calling(calls, text), *(s.message() for s in settled)]
        return "".join(self._said[start:]).strip()

    async def _supersede(self, review: quality.Review) -> None:
        """Mark the draft streamed so far as not the answer (its last deltas, then
        ``draft_superseded`` and the gate's thinking entry: one transaction); what follows
        streams under a new message id."""
        batch = Batch(self.ctx.conversation_id, self.ctx.turn_id)
        rest = await self.coalescer.take()
        if rest:
            self._delta(batch, rest)
        supervisor = self.ctx.supervisor
        why = thinking.gate_retry_entry(supervisor, self.agent, review.codes)
        superseded = event.DraftSupersededData(
            message_id=self.ctx.reply_message_id, reasons=review.codes, reason=why
        )
        batch.event(superseded, agent_id=self.agent.id)
        batch.thinking(why, agent_id=supervisor.id, phase=message.Phase.VALIDATION)
        await self.ctx.recorder.write(batch)
        self.ctx.reply_message_id = new_id()
        self._said.clear()

    async def _ask(self, prompt: list[ChatMessage]) -> tuple[str, tuple[ToolCall, ...]]:
        call = RecordedCall(
            self.model, self.scope, self.ctx.services.clock, self.ctx.services.metrics.called
        )
        self.ctx.call = call
        parts: list[str] = []
        try:
            async for delta in call.stream(prompt, self.model_settings, self.params):
                if delta and not parts and "".join(self._said).strip():
                    await self._say("\n\n")  # a new round's text starts a new paragraph
                parts.append(delta)
                await self._say(delta)
        finally:
            if call.record is not None:
                self.ctx.reply_calls.append(call.record)
        assert call.response is not None
        return "".join(parts), call.response.tool_calls

    async def _say(self, text: str) -> None:
        self._said.append(text)
        await self.coalescer.add(text)

    async def _write_delta(self, text: str) -> None:
        batch = Batch(self.ctx.conversation_id, self.ctx.turn_id)
        self._delta(batch, text)
        await self.ctx.recorder.write(batch)

    def _delta(self, batch: Batch, text: str) -> None:
        payload = event.TextDeltaData(message_id=self.ctx.reply_message_id, delta=text)
        batch.event(payload, agent_id=self.agent.id)

    async def _round(self, calls: tuple[ToolCall, ...]) -> list[Settled]:
        """Announce and judge every call, answer each, and return the answers in call order."""
        batch = Batch(self.ctx.conversation_id, self.ctx.turn_id)
        rest = await self.coalescer.take()
        if rest:  # what the model said before asking comes first
            self._delta(batch, rest)
        verdicts = [self.toolbox.judge(call) for call in calls]
        for call in calls:
            name = self.toolbox.name_of(call.name)
            arguments = secrets.mask(call.arguments)
            batch.event(
                event.ToolCallData(tool_call_id=call.id, name=name, arguments=arguments),
                agent_id=self.agent.id,
            )
        answers: dict[int, Settled] = {}
        for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True)):
            if isinstance(verdict, Refused):
                refused = event.ToolError(code=verdict.code, message=verdict.message)
                answers[i] = Settled(call, self.toolbox.name_of(call.name), error=refused)
                batch.event(answers[i].payload(), agent_id=self.agent.id)
        await self.ctx.recorder.write(batch)
        executions = {
            asyncio.create_task(
                self._execute(i, call, verdict), name=f"tool {call.id} {verdict.task_type.name}"
            )
            for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True))
            if isinstance(verdict, Runs)
        }
        try:
            for i, (call, verdict) in enumerate(zip(calls, verdicts, strict=True)):
                if isinstance(verdict, Waits):
                    answers[i] = await self._hold(call, verdict)
            for finished in asyncio.as_completed(executions):
                i, answer, done = await finished
                self.ctx.reply_calls.extend(done.calls)
                answers[i] = await self._settle(answer, done)
                if answers[i].error is None:
                    self.performed.append(answers[i].name)
        finally:  # cancelled, or a write refused: no execution outlives its turn
            for execution in executions:
                execution.cancel()
            await asyncio.gather(*executions, return_exceptions=True)
        return [answers[i] for i in range(len(calls))]

    async def _settle(self, answer: Settled, done: runs.ToolDone) -> Settled:
        """Write the call's answer with what its executor reported and, when it proposed
        scratchpad deltas, the changed state (``agent_state``): one transaction."""
        batch = done.batch
        if not done.deltas or answer.error is not None:
            batch.event(answer.payload(), agent_id=self.agent.id)
            await self.ctx.recorder.write(batch)
            return answer
        final: list[Settled] = []
        own = answer.name == scratchpad_tool.NAME

        def remember(conn: Connection) -> None:
            ctx, settled = self.ctx, answer
            try:
                stored = scratchpad.change(
                    conn,
                    ctx.services,
                    ctx.tenant_id,
                    ctx.conversation_id,
                    self.agent.id,
                    done.deltas,
                )
            except errors.InvalidInput as exc:  # the state stays as it was
                if own:
                    refused = event.ToolError(code=exc.code, message=exc.message)
                    settled = Settled(answer.call, answer.name, error=refused)
                batch.event(settled.payload(), agent_id=self.agent.id)
            else:
                if own:
                    result = {"version": stored.version, "state": stored.state}
                    settled = Settled(answer.call, answer.name, result=result)
                batch.event(settled.payload(), agent_id=self.agent.id)
                scratchpad.announce(batch, stored)
            final[:] = [settled]

        batch.then(remember)
        await self.ctx.recorder.write(batch)
        return final[0]

    async def _execute(
        self, i: int, call: ToolCall, verdict: Runs
    ) -> tuple[int, Settled, runs.ToolDone]:
        tool = runs.ToolRun(
            call_id=call.id,
            task_type=verdict.task_type,
            params=verdict.params,
            conversation_id=self.ctx.conversation_id,
            turn_id=self.ctx.turn_id,
            agent_id=self.agent.id,
            project=self.project,
            origin=self.ctx.turn_id,
            announce=self.ctx.recorder.write,
        )
        answer, done = await runs.settle_tool(
            self.ctx.services, self.ctx.tenant_id, tool, call, self._slots
        )
        return i, answer, done

    async def _hold(self, call: ToolCall, verdict: Waits) -> Settled:
        """Store the irreversible call as a started one-step run: its task waits for consent."""
        name = verdict.task_type.name
        summary = runs.default_summary(name, verdict.parameters)
        draft = runs.TaskDraft(
            "A",
            name,
            verdict.parameters,
            self.agent.id,
            summary,
            project_id=self.project.project_id,
        )
        batch = Batch(self.ctx.conversation_id, self.ctx.turn_id)
        title = f"{self.agent.display_name}: {summary}"
        run_id, stored = runs.hold_for_confirmation(
            self.ctx.services, self.ctx.tenant_id, batch, draft, title
        )
        answer: list[Settled] = []

        def announce(conn: object) -> None:
            (task,) = stored
            result = {
                "status": "awaiting_confirmation",
                "runId": run_id,
                "taskId": task.id,
                "parametersHash": task.parameters_hash,
                "message": "This step cannot be undone, so it did not run: it waits for the "
                "user's confirmation in the run card.",
            }
            answer.append(Settled(call, name, result=result))
            batch.event(answer[0].payload(), agent_id=self.agent.id)

        batch.then(announce)
        try:
            await self.ctx.recorder.write(batch)
        except errors.UserError as exc:  # the laws, checked again as the run is stored
            refused = Settled(call, name, error=event.ToolError(code=exc.code, message=exc.message))
            again = Batch(self.ctx.conversation_id, self.ctx.turn_id)
            again.event(refused.payload(), agent_id=self.agent.id)
            await self.ctx.recorder.write(again)
            return refused
        self.held.append(summary)
        return answer[0]
