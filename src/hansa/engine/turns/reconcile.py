"""The end of a turn reconciles the answering agent's state (issue 32 item 3; seed 002 §8.6).

During the turn the state changed by deltas, one tool result at a time (``scratchpad``).
When the turn ends, in ``finalize``'s transaction, the answering agent's state is
reconciled (``agent_state_fields.reconcile``): a text said twice kept once, an open
question a decision or a fact now records let go, and the whole compacted to its share
of the agent's model window (``agent_notes.cap_bytes``: 1,228 bytes on the embedded
model's 2,048 tokens), so the stored state never grows past what its prompt can carry.
A change is a new version, announced by ``agent_state`` before the turn's ``done``.

No model is asked here: the summarizer's state updates (``summary_job``) are the model's
reconciliation, applied through the same delta path when the rolling summary runs, and
the next turn's end reconciles what they added.
"""

from __future__ import annotations

from sqlalchemy import Connection

from hansa.domain import agent_state_fields
from hansa.engine import agent_notes
from hansa.engine.runtime.recorder import Batch
from hansa.engine.turns import scratchpad
from hansa.engine.turns.pipeline import TurnContext
from hansa.store import agent_states


def at_turn_end(ctx: TurnContext, batch: Batch) -> None:
    """Reconcile the answering agent's state in ``batch``'s transaction; its ``agent_state``
    goes where the batch's events stand now (before ``done``, added after this)."""
    agent = ctx.agent
    if agent is None:
        return
    window = (
        ctx.fitted.window
        if ctx.fitted is not None
        else ctx.services.model_for(agent, ctx.project_context).context_window
    )
    cap = agent_notes.cap_bytes(window)
    at = len(batch.items)

    def step(conn: Connection) -> None:
        agent_states.lock(conn, ctx.tenant_id, ctx.conversation_id)
        current = agent_states.get(conn, ctx.tenant_id, ctx.conversation_id, agent.id)
        if not current.state:
            return
        state, _ = agent_state_fields.reconcile(current.state, cap)
        if state == current.state:
            return
        stored = agent_states.put(conn, ctx.tenant_id, current, state, ctx.services.clock())
        announcement = Batch(ctx.conversation_id, ctx.turn_id)
        scratchpad.announce(announcement, stored)
        batch.items[at:at] = announcement.items  # steps run before the events are written

    batch.then(step)
