"""A registered agent speaks in a conversation with its own token (seed 001).

Its message is the agent's, never the user's: an assistant message under its agent id,
with no turn (nothing answers it; Hans keeps routing what the user says). An agent that
deferred on the latest message may not answer it (409 ``deferred``, ``claims.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, message
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.triggers import claims
from hansa.store import conversations


@dataclass(frozen=True, slots=True)
class Said:
    """A stored agent message and the seq of its event."""

    message_id: str
    seq: int


async def post_as_agent(
    services: Services, tenant_id: str, conversation_id: str, agent_id: str, content: str
) -> Said:
    """Store ``content`` as a message of ``agent_id`` (an agent principal acting as itself)."""
    text = content.strip()
    if not text:
        raise errors.InvalidInput("content must not be empty", details={"field": "content"})
    limit = services.settings.max_message_chars
    if len(text) > limit:
        raise errors.InvalidInput(
            f"content is longer than {limit} characters", details={"field": "content"}
        )
    batch = Batch(conversation_id, None)
    message_id = batch.message(
        message.Kind.ASSISTANT,
        message.Author.ASSISTANT,
        text,
        agent_id=agent_id,
        metadata={"principal": "agent"},
    )

    def check(conn: Connection) -> None:
        convo = conversations.get(conn, tenant_id, conversation_id)
        if convo.state is conversation.State.ARCHIVED:
            raise errors.Conflict("this conversation is archived")
        claims.refuse_if_deferred(conn, tenant_id, conversation_id, agent_id)

    batch.then(check)
    stored = await Recorder(services, tenant_id, conversation_id).write(batch)
    return Said(message_id=message_id, seq=stored[-1].seq)
