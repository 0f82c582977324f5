"""Conversations, their messages and their timeline."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import ConfigDict, Field

from hansa.api.deps import PrincipalDep, ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.api.models.conversations import ConversationOut, MessageOut, Posted, TimelineEntry
from hansa.api.schemas import ConversationCreate, MessageCreate
from hansa.domain.base import Wire
from hansa.domain.principal import Kind
from hansa.engine.turns import agent_message, chat, conversation_update, timeline
from hansa.store import conversations, events, messages

router = APIRouter(prefix="/api/conversations", tags=["conversations"])


@router.post("", status_code=201, responses=answers(None, 404))
async def create_conversation(
    body: ConversationCreate, services: ServicesDep, tenant: TenantDep
) -> ConversationOut:
    """Start a conversation."""
    convo = await chat.create_conversation(
        services,
        tenant,
        project_id=body.project_id,
        title=body.title,
        active_agent_id=body.active_agent_id,
        user=body.user,
    )
    return ConversationOut.of(convo)


@router.get("")
async def list_conversations(services: ServicesDep, tenant: TenantDep) -> list[ConversationOut]:
    """The newest conversations."""
    found = await services.db.read(conversations.list_recent, tenant)
    return [ConversationOut.of(c) for c in found]


@router.get("/{conversation_id}")
async def get_conversation(
    conversation_id: str, services: ServicesDep, tenant: TenantDep
) -> ConversationOut:
    """One conversation."""
    found = await services.db.read(lambda conn: conversations.get(conn, tenant, conversation_id))
    return ConversationOut.of(found)


@router.get("/{conversation_id}/messages")
async def list_messages(
    conversation_id: str, services: ServicesDep, tenant: TenantDep
) -> list[MessageOut]:
    """Every message, in order."""
    found = await services.db.read(messages.all_of, tenant, conversation_id)
    return [MessageOut.of(m) for m in found]


@router.post(
    "/{conversation_id}/messages",
    status_code=202,
    responses=answers(None, 409),
)
async def post_message(
    conversation_id: str, body: MessageCreate, services: ServicesDep, principal: PrincipalDep
) -> Posted:
    """Store the message and start its turn in the background (an agent's token: the
    agent's own message, which starts no turn)."""
    tenant = principal.tenant_id
    if principal.kind is Kind.AGENT:
        said = await agent_message.post_as_agent(
            services, tenant, conversation_id, principal.id, body.content
        )
        return Posted(message_id=said.message_id, turn_id=None, seq=said.seq)
    posted = await chat.post_message(
        services,
        tenant,
        conversation_id,
        body.content,
        active_agent_id=body.active_agent_id,
        project_context=body.project_context,
        strategy=body.multitask_strategy,
    )
    return Posted(message_id=posted.message_id, turn_id=posted.turn_id, seq=posted.seq)


@router.get("/{conversation_id}/timeline")
async def get_timeline(
    conversation_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    runId: str | None = None,  # noqa: N803 - the query parameter's name in API.md
) -> list[TimelineEntry]:
    """The experience timeline (seed 000 §9.2), optionally of one run."""
    log = await services.db.read(events.all_of, tenant, conversation_id, run_id=runId)
    authors = await services.agents.display_names(tenant, (e.agent_id for e in log))
    names = {**services.agents.names(), **authors}
    return [TimelineEntry.of(e) for e in timeline.build(log, names, services.registry)]


class ConversationPatch(Wire):
    """``PATCH /api/conversations/{id}``: context values to merge (``null`` removes one),
    a new title."""

    model_config = ConfigDict(extra="forbid")

    context: dict[str, Any] | None = None
    title: str | None = Field(default=None, min_length=1, max_length=200)
    participants: list[str] | None = Field(default=None, max_length=50)
    """Who takes part in turn-taking: roster agents, and external assistants by key."""
    focus_entity_id: str | None = Field(default=None, min_length=1, max_length=36)
    """The workspace entity the conversation focuses on (its prompts carry the entity
    pack); ``null`` ends the focus."""
    user: dict[str, Any] | None = None
    """Merged into the conversation's user (a ``null`` value removes a key; ``id`` stays
    required); ``user: null`` forgets who it is with."""


@router.patch(
    "/{conversation_id}",
    operation_id="updateConversation",
    responses=answers(None, 409),
)
async def patch_conversation(
    conversation_id: str, body: ConversationPatch, services: ServicesDep, tenant: TenantDep
) -> ConversationOut:
    """Change the context, title, participants, focus or user; a context change fires
    ``context.updated``."""
    focus = body.focus_entity_id
    if focus is None and "focus_entity_id" in body.model_fields_set:
        focus = ""  # null: the focus ends
    changed = await conversation_update.update_conversation(
        services,
        tenant,
        conversation_id,
        context=body.context,
        title=body.title,
        participants=body.participants,
        focus_entity_id=focus,
        user=body.user,
        forget_user=body.user is None and "user" in body.model_fields_set,
    )
    return ConversationOut.of(changed)
