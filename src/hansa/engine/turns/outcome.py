"""A message and what came of it, as one piece of work: for clients (the Agent Protocol's
runs, ``api/routes/ap_runs.py``) that wait for a message's consequences and not only for
its answer.

A turn's work ends with its ``done``, unless the turn approved a plan ("yes, proceed"): then
it goes on until the run it started ends and Hans has summed it up, or until a step waits
for the user's confirmation. A conversation *waits for the user* when Hans asked a question,
shows a plan for approval or holds a step for confirmation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Connection

from hansa.domain import conversation, event, message, run, turn
from hansa.engine.runtime.follow import follow
from hansa.engine.runtime.services import Services
from hansa.store import conversations, events, messages, runs, turns
from hansa.store.db import growing

_AWAITING_USER = frozenset({run.RunStatus.PLANNING, run.RunStatus.AWAITING_APPROVAL})
_IN_FLIGHT = frozenset({run.RunStatus.RUNNING, run.RunStatus.PAUSED})


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one turn came to, as things stand."""

    turn: turn.Turn
    started: run.Run | None
    """The run this turn's approval started, as it is now."""
    asked: bool
    """The turn left the conversation waiting for the user (a question or a plan)."""
    confirming: bool
    """``started`` holds a step for the user's confirmation."""


WaitKind = Literal["question", "approval", "confirmation"]
"""What a conversation waits for: an answer, a plan's approval or a step's confirmation."""


@dataclass(frozen=True, slots=True)
class Waiting:
    """What the user is asked: a question, a plan to approve or a step to confirm."""

    kind: WaitKind
    question: str
    """Hans's last message."""
    run_id: str | None
    task_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Standing:
    """A conversation as a client that waits on it sees it."""

    conversation: conversation.Conversation
    busy: bool
    """A turn is queued or running, or a run is executing (and not held for the user)."""
    waiting: Waiting | None
    messages: list[message.Message]
    """The newest user and assistant messages, oldest first."""


def _started_by(moves: list[event.Event]) -> str | None:
    for ev in moves:
        data = ev.payload
        if (
            isinstance(data, event.RunStatusData)
            and data.status is run.RunStatus.RUNNING
            and data.previous is run.RunStatus.AWAITING_APPROVAL
        ):
            return ev.run_id
    return None


def _confirming(conn: Connection, run_id: str) -> tuple[str, ...]:
    held = run.TaskStatus.AWAITING_CONFIRMATION
    return tuple(t.id for t in runs.tasks_of(conn, run_id) if t.status is held)


@growing
def outcome(conn: Connection, tenant_id: str, turn_id: str) -> Outcome:
    """What turn ``turn_id`` came to; NotFound for a turn of another tenant."""
    t = turns.get(conn, tenant_id, turn_id)
    moves = events.run_moves_of_turn(conn, tenant_id, t)
    started_id = _started_by(moves)
    started = None if started_id is None else runs.get(conn, tenant_id, started_id)
    asked = False
    if started is None:
        asked = any(isinstance(ev.payload, event.RunCreatedData | event.PlanData) for ev in moves)
        convo = conversations.get(conn, tenant_id, t.conversation_id)
        if convo.state is conversation.State.WAITING_FOR_USER:
            newest = turns.of_conversation(conn, tenant_id, t.conversation_id, limit=1)
            asked = asked or bool(newest and newest[0].id == t.id)
    confirming = started is not None and bool(_confirming(conn, started.id))
    return Outcome(turn=t, started=started, asked=asked, confirming=confirming)


@growing
def standing(conn: Connection, tenant_id: str, conversation_id: str, *, last: int) -> Standing:
    """Conversation ``conversation_id`` now, with its newest ``last`` messages."""
    convo = conversations.get(conn, tenant_id, conversation_id)
    shown = messages.list_for(
        conn,
        tenant_id,
        conversation_id,
        kinds=(message.Kind.USER, message.Kind.ASSISTANT),
        last=last,
    )
    question = next((m.content for m in reversed(shown) if m.kind is message.Kind.ASSISTANT), "")
    open_runs = runs.open_of_conversation(conn, tenant_id, conversation_id)
    waiting: Waiting | None = None
    executing = False
    for r in open_runs:
        if r.status in _IN_FLIGHT:
            held = _confirming(conn, r.id)
            executing = executing or not held
            if held and waiting is None:
                waiting = Waiting("confirmation", question, r.id, held)
    proposed = [r for r in open_runs if r.status in _AWAITING_USER]
    if waiting is None and (proposed or convo.state is conversation.State.WAITING_FOR_USER):
        approval = any(r.status is run.RunStatus.AWAITING_APPROVAL for r in proposed)
        kind: WaitKind = "approval" if approval else "question"
        waiting = Waiting(kind, question, proposed[-1].id if proposed else None)
    busy = executing or bool(turns.unfinished(conn, tenant_id, conversation_id))
    return Standing(conversation=convo, busy=busy, waiting=waiting, messages=shown)


async def follow_work(
    services: Services, tenant_id: str, conversation_id: str, turn_id: str, after: int
) -> AsyncIterator[event.Event]:
    """The events of turn ``turn_id`` after seq ``after``, then those of the run it approved,
    as they are written: until the turn's ``done`` (and the run's end and Hans's summary of
    it, or a step held for confirmation); early after ``chat_timeout_seconds`` of quiet."""
    quiet = services.settings.chat_timeout_seconds
    started: set[str] = set()
    ended: set[str] = set()
    turn_done = False
    async for ev in follow(services, tenant_id, conversation_id, after, idle_seconds=quiet):
        if ev is None:
            return
        data = ev.payload
        ours = ev.turn_id == turn_id
        if not ours and (ev.run_id is None or ev.run_id not in started):
            continue
        yield ev
        if ours:
            started_id = _started_by([ev])
            if started_id is not None:
                started.add(started_id)
            turn_done = turn_done or isinstance(data, event.DoneData)
        if ev.run_id is not None and ev.run_id in started:
            if isinstance(data, event.RunStatusData) and data.status in run.RUN_FINAL:
                ended.add(ev.run_id)
            elif _is_summary(data) and ev.run_id in ended:
                started.discard(ev.run_id)
            elif (
                isinstance(data, event.TaskStatusData)
                and data.status is run.TaskStatus.AWAITING_CONFIRMATION
            ):
                return  # the user's turn: the work rests until they confirm
        if turn_done and not started:
            return


def _is_summary(data: event.Payload) -> bool:
    return (
        isinstance(data, event.MessageData)
        and data.kind is message.Kind.ASSISTANT
        and data.author is message.Author.ASSISTANT
    )


def seq_of_turn(conn: Connection, tenant_id: str, t: turn.Turn) -> int:
    """The seq just before turn ``t``'s user message: following from it replays the turn."""
    seq = messages.seq_of(conn, tenant_id, t.conversation_id, t.message_id)  # by its id
    return seq - 1 if seq else 0
