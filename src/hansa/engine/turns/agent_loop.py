"""The agent loop of a turn (seeds 002, 003): the agent's model answers, calling tools on
the way, through the tool loop (``runs.ToolLoop``), with the turn as its sink.

The turn streams the answer (text deltas coalesced into ``text_delta`` events, as for any
reply), commits each round's ``tool_call`` events and the laws' refusals at once, and
each call's answer (``tool_result``) as it comes, with the scratchpad change its executor
proposed (``agent_state``). An irreversible call does not run but becomes a run awaiting
the user's confirmation (decision 0013), which the answer then names.

Before the answer goes out, the quality gate (``turns/quality.py``) checks it; a draft it
holds back is marked ``draft_superseded`` and the model answers once more (``MAX_RETRIES``)
under a new message id, reading why. A thinking entry says what the gate found.
"""

from __future__ import annotations

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, message, run
from hansa.domain.base import new_id
from hansa.engine import quality_gate, runs, thinking
from hansa.engine.runtime.recorder import Batch
from hansa.engine.toolbox import Settled, Toolbox, Waits
from hansa.engine.turns import deltas, quality, scratchpad
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
        settings = ctx.services.settings
        agent = self.agent
        caller = runs.ToolCaller(
            conversation_id=ctx.conversation_id,
            turn_id=ctx.turn_id,
            agent_id=agent.id,
            project=self.project,
            node_id="reply",
            origin=ctx.turn_id,
            announce=ctx.recorder.write,
        )
        self.tools = runs.ToolLoop(
            ctx.services,
            ctx.tenant_id,
            caller,
            toolbox,
            ctx.services.model_for(agent, self.project),
            ModelSettings(
                temperature=agent.model_settings.temperature,
                max_tokens=agent.model_settings.max_tokens,
            ),
            RequestParams(),
            self,
            ctx.reply_calls,
        )
        self.coalescer = DeltaCoalescer(
            self._write_delta,
            max_chars=settings.delta_flush_chars,
            max_age=settings.delta_flush_ms / 1000,
        )
        self._said: list[str] = []
        self.held: list[str] = []
        """Summaries of the irreversible steps held for confirmation."""
        self.performed: list[str] = []
        """The task types of the turn's tool calls that succeeded, in the order they ended."""
        self.landed: list[str] = []
        """Where the turn's changes landed, when not on the project's live site."""

    async def run(self) -> str:
        """Answer, pass the quality gate (or retry once), and return the answer's text (the
        deltas are written meanwhile, the last of them added to the turn's pending batch)."""
        prompt = list(self.ctx.prompt)
        notes: list[ChatMessage] = []  # the gate's own words ground nothing
        for attempt in range(quality_gate.MAX_RETRIES + 1):
            text = await self._answer(prompt)
            read = [m for m in prompt if m not in notes]
            review = await quality.review(self.ctx, text, self.performed, read)
            if not review.findings or attempt == quality_gate.MAX_RETRIES:
                break
            await self._supersede(review)
            if text:
                prompt.append(ChatMessage("assistant", text))
            notes.append(ChatMessage("user", quality_gate.retry_note(review.findings)))
            prompt.append(notes[-1])
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
        if self.landed:  # Hans says where it landed, whatever the model said
            note = thinking.landed_note(self.landed)
            await self._say(f"\n\n{note}" if "".join(self._said).strip() else note)
        rest = await self.coalescer.take()
        batch = self.ctx.batch()
        if rest:
            self._delta(batch, rest)
        batch.thinking(entry, agent_id=supervisor.id, phase=message.Phase.VALIDATION)
        return "".join(self._said).strip()

    async def _answer(self, prompt: list[ChatMessage]) -> str:
        """The tool loop's answer to ``prompt`` (which its rounds join): all it said."""
        start = len(self._said)
        try:
            await self.tools.answer(prompt)
        finally:
            self.ctx.call = self.tools.call
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

    async def say(self, delta: str, *, fresh: bool) -> None:
        """Stream a delta of the model's answer (a new call's text, a new paragraph)."""
        if fresh and "".join(self._said).strip():
            await self._say("\n\n")
        await self._say(delta)

    async def announce(self, batch: Batch) -> None:
        """Commit a round's calls now, after what the model said before asking."""
        rest = await self.coalescer.take()
        if rest:
            said = Batch(self.ctx.conversation_id, self.ctx.turn_id)
            self._delta(said, rest)
            batch.put_first(said)
        await self.ctx.recorder.write(batch)

    async def _say(self, text: str) -> None:
        self._said.append(text)
        await self.coalescer.add(text)

    async def _write_delta(self, text: str) -> None:
        batch = Batch(self.ctx.conversation_id, self.ctx.turn_id)
        self._delta(batch, text)
        await self.ctx.recorder.write(batch)

    def _delta(self, batch: Batch, text: str) -> None:
        deltas.delta(batch, self.ctx.reply_message_id, text, agent_id=self.agent.id)

    async def settled(self, answer: Settled, done: runs.ToolDone) -> Settled:
        """Write the call's answer (``performed`` when it succeeded) with what its executor
        reported."""
        final = await self._settle(answer, done)
        if final.error is None:
            self.performed.append(final.name)
            target = final.result.get("target") if isinstance(final.result, dict) else None
            if isinstance(target, dict) and target.get("draft"):
                self.landed.append(f"{final.name}: {target['said']} ({target.get('reason')})")
        return final

    async def _settle(self, answer: Settled, done: runs.ToolDone) -> Settled:
        """Write the call's answer with what its executor reported and, when it proposed
        scratchpad deltas, the changed state (``agent_state``): one transaction."""
        batch = done.batch
        if not done.deltas or answer.error is not None:
            batch.event(answer.payload(), agent_id=self.agent.id)
            await self.ctx.recorder.write(batch)
            return answer
        own = answer.name == scratchpad_tool.NAME

        def remember(conn: Connection) -> Settled:
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
            return settled

        return await self.ctx.recorder.write_then(batch, remember)

    async def hold(self, call: ToolCall, verdict: Waits) -> Settled:
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

        def announce(run_id: str, task: run.Task) -> Settled:
            result = {
                "status": "awaiting_confirmation",
                "runId": run_id,
                "taskId": task.id,
                "parametersHash": task.parameters_hash,
                "message": "This step cannot be undone, so it did not run: it waits for the "
                "user's confirmation in the run card.",
            }
            settled = Settled(call, name, result=result)
            batch.event(settled.payload(), agent_id=self.agent.id)
            return settled

        answer = runs.hold_for_confirmation(
            self.ctx.services, self.ctx.tenant_id, batch, draft, title, announce
        )
        try:
            await self.ctx.recorder.write(batch)
        except errors.UserError as exc:  # the laws, checked again as the run is stored
            refused = Settled(call, name, error=event.ToolError(code=exc.code, message=exc.message))
            again = Batch(self.ctx.conversation_id, self.ctx.turn_id)
            again.event(refused.payload(), agent_id=self.agent.id)
            await self.ctx.recorder.write(again)
            return refused
        self.held.append(summary)
        return answer.value
