"""Changing a conversation: its context, title, participants, focus and user (``PATCH
/api/conversations/{id}`` and the surfaces that map their own notions onto it), and the
checks a conversation's user passes wherever it is given (``domain/conversation_user.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, conversation_user
from hansa.engine import templates
from hansa.engine.rules.enqueue import enqueue_if_ruled
from hansa.engine.runtime.services import Services
from hansa.store import conversations, workspace


def user_of(raw: Any) -> Any:
    """What a surface calls the user, as a conversation's user: a string is the user's id
    (the OpenAI ``user`` field), an object is the user itself, None is nobody; anything
    else is left for :func:`checked_user` to refuse."""
    return {"id": raw} if isinstance(raw, str) else raw


def checked_user(
    services: Services, raw: Any, base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``raw`` as a conversation's user within the settings' bounds (merged into ``base``:
    a PATCH), or InvalidInput naming the field."""
    return conversation_user.checked(
        raw,
        max_keys=services.settings.max_conversation_user_keys,
        max_bytes=services.settings.max_conversation_user_bytes,
        base=base,
    )


def _focus_on(
    conn: Connection,
    tenant_id: str,
    convo: conversation.Conversation,
    entity_id: str,
    now: datetime,
) -> None:
    """Focus the conversation on a live entity of its tenant (and of its project, when it
    has one): its prompts then carry the entity pack. ``""`` ends the focus."""
    if entity_id:
        try:
            entity = workspace.get(conn, tenant_id, entity_id)
        except errors.NotFound:
            raise errors.InvalidInput(f"there is no workspace entity {entity_id}") from None
        if convo.project_id is not None and entity.project_id not in (None, convo.project_id):
            raise errors.InvalidInput(
                f"workspace entity {entity_id} belongs to another project than the conversation"
            )
    focus = {"entityId": entity_id} if entity_id else None
    conversations.set_metadata(conn, tenant_id, convo.id, "focus", focus, now)


async def update_conversation(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    *,
    context: dict[str, Any] | None = None,
    title: str | None = None,
    participants: list[str] | None = None,
    focus_entity_id: str | None = None,
    user: dict[str, Any] | None = None,
    forget_user: bool = False,
) -> conversation.Conversation:
    """Change the conversation's context (merged; a ``None`` value removes a key), title,
    participants, focus (a workspace entity's id; ``""`` ends the focus) or user (merged
    the same way, checked whole; ``forget_user``: nobody named any more).

    A context change fires ``context.updated`` for the tenant's rules, with the changed
    keys as ``changed`` facts.
    """
    now = services.clock()

    def go(conn: Connection) -> None:
        convo = conversations.get(conn, tenant_id, conversation_id)
        if focus_entity_id is not None:
            _focus_on(conn, tenant_id, convo, focus_entity_id, now)
        if title is not None:
            conversations.set_title(conn, tenant_id, conversation_id, title, now)
        if user is not None or forget_user:
            merged_user = None if forget_user else checked_user(services, user, convo.user or {})
            conversations.set_user(conn, tenant_id, conversation_id, merged_user, now)
        if participants is not None:
            conversations.set_metadata(
                conn, tenant_id, conversation_id, "participants", participants or None, now
            )
        if context is None:
            return
        merged = {**convo.context, **context}
        merged = {k: v for k, v in merged.items() if v is not None}
        limit = services.settings.max_conversation_context_bytes
        refused = templates.context_too_large(merged, limit)
        if refused is not None:  # before anything of this change is written
            raise errors.InvalidInput(refused, details={"field": "context", "limitBytes": limit})
        conversations.set_context(conn, tenant_id, conversation_id, merged, now)
        changed = {"changed": sorted(context), "context": merged}  # as of this change
        enqueue_if_ruled(
            conn,
            tenant_id,
            "context.updated",
            conversation_id,
            convo.project_id,
            now,
            facts=changed,
        )

    await services.db.write(go)
    return await services.db.read(lambda conn: conversations.get(conn, tenant_id, conversation_id))
