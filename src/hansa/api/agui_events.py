"""A turn's events as AG-UI events (``api/routes/agui.py`` streams them).

- ``text_delta`` and the assistant's ``message``: ``TEXT_MESSAGE_START`` / ``_CONTENT`` /
  ``_END`` under the Hansa message's id (a message that came whole, not as deltas, is sent
  in one ``_CONTENT``). Any other event ends the open text first (strict AG-UI clients
  allow nothing else inside one); text of the same message after it, e.g. after a tool
  call, goes on as a new AG-UI message, ``<id>-2``, ``<id>-3``…
- ``tool_call``: ``TOOL_CALL_START`` / ``_ARGS`` (the arguments as JSON) / ``_END``;
  ``tool_result``: ``TOOL_CALL_RESULT`` (the result, or ``{"error": {code, message}}``).
- ``thinking``: its phase as a step (``STEP_STARTED`` when the phase changes, the last
  one ``STEP_FINISHED`` at the end), and the entry as ``CUSTOM hansa.thinking``.
- ``agent_state``: a new ``STATE_SNAPSHOT`` (see :func:`snapshot`).
- every other event: ``CUSTOM`` named ``hansa.<type>``, its value the event as on
  ``GET /api/conversations/{id}/events`` (secrets masked).

Which events end the run (``RUN_FINISHED``, ``RUN_ERROR``) is :meth:`Translation.end`'s. A
turn that leaves the conversation waiting for the user (a question, a plan to approve, a step
to confirm) finishes with AG-UI's interrupt outcome: one :class:`ag_ui.core.Interrupt` named
as ``/ap`` names it (``approval:<run id>``…), answered by the next run's ``resume``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ag_ui import core

from hansa.api import ap_shapes
from hansa.domain import conversation, event, secrets
from hansa.domain.agent_state import AgentState
from hansa.domain.message import Author, Kind
from hansa.engine.turns.outcome import Waiting

TIMED_OUT = "timed_out"
"""The ``end`` of a turn that went quiet for ``chat_timeout_seconds`` (it goes on)."""
ANSWERS: dict[str, dict[str, Any]] = {
    "approval": {
        "type": ["boolean", "string"],
        "description": "true (or 'yes, proceed') approves the plan, false (or 'cancel') drops "
        "it, other text asks Hans to change it",
    },
    "question": {"type": "string", "description": "the answer to Hans's question"},
    "confirmation": {
        "type": "string",
        "description": "not answered by resume: confirm each held step with POST "
        "/api/tasks/{taskId}/confirm and its parametersHash (law 4)",
    },
}
"""What a resume entry's ``payload`` may be, per kind of interrupt (its ``responseSchema``)."""


def interrupt(thread_id: str, waiting: Waiting) -> core.Interrupt:
    """What the conversation waits for, as an AG-UI interrupt."""
    named = {"runId": waiting.run_id, "taskIds": list(waiting.task_ids)}
    return core.Interrupt(
        id=ap_shapes.interrupt_id(thread_id, waiting),
        reason=waiting.kind,
        message=waiting.question,
        response_schema=ANSWERS[waiting.kind],
        metadata={k: v for k, v in named.items() if v},
    )


def snapshot(convo: conversation.Conversation, states: list[AgentState]) -> dict[str, Any]:
    """The state a run shows: its conversation and the agents' scratchpads (masked)."""
    return {
        "conversationId": convo.id,
        "conversationState": convo.state.value,
        "activeAgentId": convo.current_agent,
        "title": convo.title,
        "agentStates": {
            s.agent_id: {"version": s.version, "state": secrets.mask(s.state)} for s in states
        },
    }


class Translation:
    """One run: Hansa events in, AG-UI events out, with what is open in between."""

    def __init__(self, thread_id: str, run_id: str, state: dict[str, Any]) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.state = state
        """The last ``STATE_SNAPSHOT`` sent (or to send)."""
        self._open: tuple[str, str] | None = None  # (Hansa message id, AG-UI message id)
        self._parts: dict[str, int] = {}  # AG-UI messages started per Hansa message
        self._step: str | None = None
        self._error: event.ErrorData | None = None

    def started(self) -> list[core.BaseEvent]:
        """``RUN_STARTED`` and the first ``STATE_SNAPSHOT``."""
        return [
            core.RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id),
            core.StateSnapshotEvent(snapshot=copy.deepcopy(self.state)),
        ]

    def events(self, ev: event.Event) -> list[core.BaseEvent]:
        """What ``ev`` (an event of the run's turn, before its ``done``) becomes."""
        data = ev.payload
        if isinstance(data, event.TextDeltaData) and self._open_for(data.message_id):
            return self._content(data.delta)
        return [*self._end_text(), *self._translated(ev)]

    def _translated(self, ev: event.Event) -> list[core.BaseEvent]:
        data = ev.payload
        if isinstance(data, event.TextDeltaData):
            return [self._start(data.message_id, ev.agent_id), *self._content(data.delta)]
        if isinstance(data, event.MessageData) and _said(data):
            if data.message_id in self._parts:  # its text came as deltas
                return []
            start = self._start(data.message_id, ev.agent_id)
            return [start, *self._content(data.content), *self._end_text()]
        if isinstance(data, event.ToolCallData):
            args = json.dumps(ev.to_wire()["data"]["arguments"])
            return [
                core.ToolCallStartEvent(tool_call_id=data.tool_call_id, tool_call_name=data.name),
                core.ToolCallArgsEvent(tool_call_id=data.tool_call_id, delta=args),
                core.ToolCallEndEvent(tool_call_id=data.tool_call_id),
            ]
        if isinstance(data, event.ToolResultData):
            wire = ev.to_wire()["data"]
            answer = wire["result"] if data.ok else {"error": wire["error"]}
            return [
                core.ToolCallResultEvent(
                    message_id=f"{data.tool_call_id}-result",
                    tool_call_id=data.tool_call_id,
                    content=json.dumps(answer),
                    role="tool",
                )
            ]
        if isinstance(data, event.AgentStateData):
            states = self.state.setdefault("agentStates", {})
            masked = ev.to_wire()["data"]["state"]
            states[data.agent_id] = {"version": data.version, "state": masked}
            return [core.StateSnapshotEvent(snapshot=copy.deepcopy(self.state))]
        if isinstance(data, event.ThinkingData):
            return [*self._enter_step(data.phase.value), _custom(ev)]
        if isinstance(data, event.ErrorData):
            self._error = data
        return [_custom(ev)]

    def close(self) -> list[core.BaseEvent]:
        """End what is open (a text, a step): before the last snapshot and the run's end."""
        return [*self._end_text(), *self._enter_step(None)]

    def end(
        self,
        status: str,
        waiting: Waiting | None = None,
        usage: list[core.TokenUsage] | None = None,
    ) -> core.BaseEvent:
        """``RUN_FINISHED`` for a turn ``done`` ``completed`` (an interrupt when the
        conversation then waits for the user: ``waiting``) or ``cancelled``, with the
        ``usage`` of its model calls; else ``RUN_ERROR`` (``failed``, or :data:`TIMED_OUT`)."""
        if status in ("completed", "cancelled"):
            outcome: core.RunFinishedOutcome
            if status == "cancelled":
                outcome = core.RunFinishedCancelledOutcome()
            elif waiting is not None:
                waits = [interrupt(self.thread_id, waiting)]
                outcome = core.RunFinishedInterruptOutcome(interrupts=waits)
            else:
                outcome = core.RunFinishedSuccessOutcome()
            result = {"conversationId": self.state.get("conversationId")}
            return core.RunFinishedEvent(
                thread_id=self.thread_id,
                run_id=self.run_id,
                result=result,
                outcome=outcome,
                usage=usage or None,
            )
        if status == TIMED_OUT:
            message = "the turn is still running; follow it on its conversation"
            return core.RunErrorEvent(message=message, code="turn_timeout")
        error = self._error
        message = error.message if error else "the turn failed"
        return core.RunErrorEvent(message=message, code=error.code if error else "turn_failed")

    def _open_for(self, message_id: str) -> bool:
        return self._open is not None and self._open[0] == message_id

    def _start(self, message_id: str, agent_id: str | None) -> core.BaseEvent:
        part = self._parts.get(message_id, 0) + 1
        self._parts[message_id] = part
        agui_id = message_id if part == 1 else f"{message_id}-{part}"
        self._open = (message_id, agui_id)
        return core.TextMessageStartEvent(message_id=agui_id, role="assistant", name=agent_id)

    def _content(self, text: str) -> list[core.BaseEvent]:
        if not text or self._open is None:  # AG-UI refuses an empty delta
            return []
        return [core.TextMessageContentEvent(message_id=self._open[1], delta=text)]

    def _end_text(self) -> list[core.BaseEvent]:
        if self._open is None:
            return []
        agui_id = self._open[1]
        self._open = None
        return [core.TextMessageEndEvent(message_id=agui_id)]

    def _enter_step(self, step: str | None) -> list[core.BaseEvent]:
        if step == self._step:
            return []
        out: list[core.BaseEvent] = []
        if self._step is not None:
            out.append(core.StepFinishedEvent(step_name=self._step))
        if step is not None:
            out.append(core.StepStartedEvent(step_name=step))
        self._step = step
        return out


def _said(data: event.MessageData) -> bool:
    """An agent's answer (not a status chip, a thinking line or the user's message)."""
    return data.kind is Kind.ASSISTANT and data.author is Author.ASSISTANT


def _custom(ev: event.Event) -> core.BaseEvent:
    return core.CustomEvent(name=f"hansa.{ev.type}", value=ev.to_wire())
