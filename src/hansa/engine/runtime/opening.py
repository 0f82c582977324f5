"""Opening a conversation: the one step that stores a new conversation and fires
``conversation.created``.

A client's ``POST /api/conversations`` (``turns/chat.create_conversation``), a session
started without a conversation (``sessions/service.opening``) and a schedule's message to
a new conversation (``schedules/fire_job``) all open one with it, in their own
transactions: the same checks (its agent one the tenant may address, its project the
tenant's, its id free), the same idle conversation, the same trigger job when the tenant
has rules for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation
from hansa.engine.rules.enqueue import enqueue_if_ruled
from hansa.engine.runtime.services import Services
from hansa.store import conversations, projects


@dataclass(frozen=True, slots=True)
class NewConversation:
    """What a conversation is opened with."""

    id: str
    project_id: str | None = None
    title: str | None = None
    agent_id: str | None = None
    """The agent that holds it first; None: Hans."""
    metadata: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] | None = None
    """Who it is with (checked by ``domain/conversation_user.checked``); None: nobody named."""
    agent_field: str = "activeAgentId"
    """The caller's own name for ``agent_id``, named by the error when it is unknown."""


def opening_conversation(
    services: Services, tenant_id: str, new: NewConversation
) -> Callable[[Connection], conversation.Conversation]:
    """The step that opens ``new`` in the caller's transaction: 404 (or 422 naming
    ``agent_field``) for an agent or project the tenant cannot use, 409 for a taken id."""

    def step(conn: Connection) -> conversation.Conversation:
        now = services.clock()
        agent_id = new.agent_id or services.supervisor.id
        services.agents.addressable(conn, tenant_id, agent_id, field=new.agent_field)
        if new.project_id is not None:
            projects.get(conn, tenant_id, new.project_id)
        if conversations.taken(conn, new.id):
            raise errors.Conflict(f"id {new.id} is taken", details={"id": new.id})
        convo = conversation.Conversation(
            id=new.id,
            tenant_id=tenant_id,
            project_id=new.project_id,
            title=new.title,
            state=conversation.State.IDLE,
            current_agent=agent_id,
            last_seq=0,
            created_at=now,
            updated_at=now,
            metadata=dict(new.metadata),
            user=new.user,
        )
        conversations.create(conn, convo)
        enqueue_if_ruled(conn, tenant_id, "conversation.created", convo.id, new.project_id, now)
        return convo

    return step
