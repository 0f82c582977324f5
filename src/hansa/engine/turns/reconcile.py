"""The end of a turn reconciles the answering agent's state (issue 32 item 3; seed 002 §8.6).

During the turn the state changed by deltas, one tool result at a time (``scratchpad``).
When the turn ends, in ``finalize``'s transaction, the answering agent's state is
reconciled: a text said twice kept once, an open question a decision or a fact now
records let go (``agent_state_fields.settle``), and the whole cut to what its prompt
section may carry (``agent_notes.shrink`` to ``STATE_SHARE`` of the agent's model window:
307 tokens on the embedded model's 2,048), so the stored state never outgrows its prompt.
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
    budget = int(window * agent_notes.STATE_SHARE)
    at = len(batch.items)

    def step(conn: Connection) -> None:
        agent_states.lock(conn, ctx.tenant_id, ctx.conversation_id)
        current = agent_states.get(conn, ctx.tenant_id, ctx.conversation_id, agent.id)
        if not current.state:
            return
        settled, _ = agent_state_fields.settle(current.state)
        notes = agent_notes.Notes(agent.id, current.version + 1, settled)
        state, _ = agent_notes.shrink(notes, budget)
        if state == current.state:
            return
        stored = agent_states.put(conn, ctx.tenant_id, current, state, ctx.services.clock())
        announcement = Batch(ctx.conversation_id, ctx.turn_id)
        scratchpad.announce(announcement, stored)
        batch.items[at:at] = announcement.items  # steps run before the events are written

    batch.then(step)
