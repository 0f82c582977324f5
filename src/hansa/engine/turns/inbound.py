"""A message from a messaging service (seed 001's ``POST /api/webhook/message``).

The body is the seed's, as written: ``{id, conversationId, orgId, from, to, content,
contentType, sequence, priority, createdAt}``. The message enters through the one way in
(``chat.posting``) as a user message whose turn the addressed assistant (``to.principalId``,
``assistant:`` prefix optional) answers, whatever the keywords say (a rule may still route:
rules come first). The conversation is the caller's tenant's whose client chose that
``conversationId`` (as an Agent Protocol thread does), or opened with it when there is none,
in the same transaction as the message; a user's message opens it with that user (``user.id``
is ``from.principalId``: rules see it as ``user.id``).

Idempotent by the message's ``id``: the message's and the turn's ids are derived from the
tenant and that id (:func:`derived_id`), so a second delivery of it finds the turn (a
primary-key read) and gets the same answer, and two at once cannot both be stored (the
second's insert fails on the key; it then finds the first). No time limit: the message is
the record.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import datetime

from pydantic import ConfigDict, Field
from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from hansa import errors
from hansa.domain.base import Wire, new_id
from hansa.engine.runtime.opening import NewConversation, opening_conversation
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.turns.chat import posting
from hansa.store import threads, turns

ASSISTANT = "assistant"
"""The only ``to.principalType`` a message may be addressed to here."""


class Principal(Wire):
    """Who sent the message, or whom it is for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    principal_id: str = Field(min_length=1, max_length=200)
    principal_type: str = Field(min_length=1, max_length=32)


class InboundMessage(Wire):
    """``POST /api/webhook/message``: a message of the messaging service, as the seed
    sends it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    """The messaging service's id for it: a second delivery of it is answered as the first."""
    conversation_id: str = Field(min_length=1, max_length=36)
    """The messaging service's conversation: found by it, or opened with it."""
    org_id: str = Field(min_length=1, max_length=36)
    """The caller's tenant (refused, 403, when it is another)."""
    sender: Principal = Field(alias="from")
    to: Principal
    content: str
    content_type: str = Field(default="text/plain", min_length=1, max_length=100)
    sequence: int | None = None
    priority: str | int | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Received:
    """The stored message and the turn that answers it; ``duplicate``: an earlier delivery
    of the same message stored them."""

    id: str
    """The messaging service's id of the message."""
    message_id: str
    turn_id: str
    conversation_id: str
    duplicate: bool


def derived_id(tenant_id: str, external_id: str, kind: str) -> str:
    """A 26-character id (as Hansa's own) for the ``kind`` of the tenant's external
    message ``external_id``: the same each time, another tenant's another."""
    digest = hashlib.sha256(f"{kind}\0{tenant_id}\0{external_id}".encode()).digest()
    return base64.b32encode(digest).decode()[:26]


async def receive(services: Services, tenant_id: str, msg: InboundMessage) -> Received:
    """Store ``msg`` and its turn (or find them: a message delivered again)."""
    if msg.org_id != tenant_id:
        raise errors.InvalidInput(
            "orgId is not the tenant of this API key", details={"field": "orgId"}
        )
    if msg.to.principal_type != ASSISTANT:
        raise errors.InvalidInput(
            f"to.principalType must be {ASSISTANT!r}: only assistants are answered here",
            details={"field": "to.principalType"},
        )
    turn_id = derived_id(tenant_id, msg.id, "turn")
    earlier = await services.db.read(lambda conn: _earlier(conn, tenant_id, msg.id, turn_id))
    if earlier is not None:
        return earlier
    agent_id = msg.to.principal_id.removeprefix(f"{ASSISTANT}:")
    await services.agents.require(tenant_id, agent_id, field="to.principalId")
    found = await services.db.read(lambda conn: _conversation(conn, tenant_id, msg))
    conversation_id = found or new_id()
    batch = Batch(conversation_id, turn_id)
    if found is None:
        sender = msg.sender
        named = sender.principal_type == "user" and sender.principal_id.strip()
        user = {"id": sender.principal_id} if named else None
        new = NewConversation(
            id=conversation_id, agent_id=agent_id, agent_field="to.principalId", user=user
        )
        opening = opening_conversation(services, tenant_id, new)

        def open_it(conn: Connection) -> None:
            opening(conn)
            threads.name(conn, tenant_id, conversation_id, msg.conversation_id)

        batch.then(open_it)
    message_id = posting(
        services,
        tenant_id,
        batch,
        msg.content,
        active_agent_id=agent_id,
        metadata={"webhook": msg.model_dump(mode="json", by_alias=True)},
        message_id=derived_id(tenant_id, msg.id, "message"),
        addressed=True,
    )
    try:
        await Recorder(services, tenant_id, conversation_id).write(batch)
    except (IntegrityError, errors.Conflict):  # the same message, stored meanwhile
        again = await services.db.read(lambda conn: _earlier(conn, tenant_id, msg.id, turn_id))
        if again is None:
            raise
        return again
    return Received(msg.id, message_id, turn_id, conversation_id, duplicate=False)


def _earlier(conn: Connection, tenant_id: str, external_id: str, turn_id: str) -> Received | None:
    if not turns.exists(conn, tenant_id, turn_id):
        return None
    found = turns.get(conn, tenant_id, turn_id)
    return Received(external_id, found.message_id, turn_id, found.conversation_id, True)


def _conversation(conn: Connection, tenant_id: str, msg: InboundMessage) -> str | None:
    try:
        return threads.conversation_of(conn, tenant_id, msg.conversation_id)
    except errors.NotFound:
        return None
