"""Cancel one turn (``POST /api/turns/{id}/cancel``): it ends with ``done`` ``cancelled``.

The turn's job ends in the same transaction, so its worker can write nothing more: its
next write is refused and its heartbeat stops it (cooperative cancellation). Every tool
call the turn announced without an answer is sealed here, before the ``done``: it gets a
``tool_result`` with ``ok`` false and the error ``cancelled``, so no call is left open.
"""

from __future__ import annotations

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, turn
from hansa.engine.runtime import interrupt
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import events, queue, turns

WHY = "cancelled by the user"
"""The cancelled turn's error, as stored."""
SEALED = "the turn was cancelled before this tool answered"
"""The error of a tool call sealed by a cancellation."""


async def cancel_turn(services: Services, tenant_id: str, turn_id: str) -> turn.Turn:
    """End a queued or running turn; cancelling a cancelled turn changes nothing.

    Raises:
        errors.NotFound: The tenant has no such turn.
        errors.Conflict: The turn has completed or failed already.
    """
    found = await services.db.read(lambda conn: turns.get(conn, tenant_id, turn_id))
    batch = Batch(found.conversation_id, turn_id)

    def step(conn: Connection) -> None:
        current = turns.get(conn, tenant_id, turn_id)
        if current.status is turn.TurnStatus.CANCELLED:
            return
        if current.status in (turn.TurnStatus.COMPLETED, turn.TurnStatus.FAILED):
            raise errors.Conflict(
                f"turn {turn_id} has {current.status.value} already; there is nothing to cancel",
                details={"status": current.status.value},
            )
        stop = _end(conn, services, tenant_id, current)
        stop.put_first(_seals(conn, tenant_id, current))  # after the job ended: no more calls
        batch.put_first(stop)

    batch.then(step)
    await Recorder(services, tenant_id, found.conversation_id).write(batch)
    return await services.db.read(lambda conn: turns.get(conn, tenant_id, turn_id))


def _end(conn: Connection, services: Services, tenant_id: str, current: turn.Turn) -> Batch:
    """End the turn and its job; the ``done`` that says so."""
    now = services.clock()
    conversation_id = current.conversation_id
    if current.status is turn.TurnStatus.RUNNING:  # it holds the conversation: free it
        return interrupt.end_turns(conn, services, tenant_id, conversation_id, [current], now, WHY)
    # queued: another turn of the conversation may be running; leave the conversation be
    queue.cancel_key_job(conn, conversation_id, {"turnId": current.id}, now)
    turns.set_status(conn, tenant_id, current.id, turn.TurnStatus.CANCELLED, now, error=WHY)
    stop = Batch(conversation_id, current.id)
    stop.event(event.DoneData(status="cancelled"), agent_id=services.supervisor.id)
    return stop


def _seals(conn: Connection, tenant_id: str, current: turn.Turn) -> Batch:
    """A failed ``tool_result`` for each ``tool_call`` of the turn that has none."""
    seals = Batch(current.conversation_id, current.id)
    logged = events.tools_of_turn(conn, tenant_id, current)
    answered = {
        e.payload.tool_call_id for e in logged if isinstance(e.payload, event.ToolResultData)
    }
    for e in logged:
        call = e.payload
        if isinstance(call, event.ToolCallData) and call.tool_call_id not in answered:
            sealed = event.ToolResultData(
                tool_call_id=call.tool_call_id,
                name=call.name,
                ok=False,
                error=event.ToolError(code="cancelled", message=SEALED),
            )
            seals.event(sealed, agent_id=e.agent_id)
    return seals
