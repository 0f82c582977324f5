"""The seed-compatible chat route (seed 000 §12.1): it answers when the turn is done.

A turn that takes longer than ``chat_timeout_seconds`` goes on; the route answers 202
with its ids and what it produced so far (``"status": "running"``), an answer an
``Idempotency-Key`` keeps: a retry gets the same turn, not a second one.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import runs as models
from hansa.api.models.base import answers
from hansa.api.schemas import ChatRequest
from hansa.domain import event
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat
from hansa.store import projects

router = APIRouter(prefix="/api/assistant")


@router.post(
    "/chat",
    tags=["chat"],
    response_model=models.ChatAnswer,
    responses={
        **answers(None, 409),
        200: {"description": "The turn is done"},
        **answers(models.ChatRunning, status=202, description="The turn goes on"),
    },
)
async def assistant_chat(
    body: ChatRequest, services: ServicesDep, tenant: TenantDep
) -> models.ChatAnswer | JSONResponse:
    """Post the last user message, wait for its turn, answer with what it produced."""
    user_messages = [m for m in body.messages if m.role == "user"]
    if not user_messages:
        raise errors.InvalidInput(
            "messages must contain a user message", details={"field": "messages"}
        )
    content = user_messages[-1].content
    conversation_id = body.conversation_id
    if conversation_id is None:
        project_id = await _stored_project(services, tenant, body.project_context)
        convo = await chat.create_conversation(
            services, tenant, project_id=project_id, active_agent_id=body.active_agent_id
        )
        conversation_id = convo.id
    posted = await chat.post_message(
        services,
        tenant,
        conversation_id,
        content,
        active_agent_id=body.active_agent_id,
        project_context=body.project_context,
    )
    waited = await chat.wait_for_done(services, tenant, conversation_id, posted.turn_id, posted.seq)
    answer = _response(conversation_id, waited.events)
    if waited.finished:
        return answer
    running = models.ChatRunning(
        **dict(answer), status="running", message_id=posted.message_id, turn_id=posted.turn_id
    )
    return JSONResponse(running.model_dump(mode="json", by_alias=True), status_code=202)


async def _stored_project(
    services: Services, tenant: str, context: dict[str, Any] | None
) -> str | None:
    project_id = (context or {}).get("projectId")
    if not isinstance(project_id, str):
        return None
    try:
        await services.db.read(lambda conn: projects.get(conn, tenant, project_id))
    except errors.NotFound:
        return None  # described by the request only; the turn still gets its context
    return project_id


def _response(conversation_id: str, produced: list[event.Event]) -> models.ChatAnswer:
    out_messages: list[models.ChatMessageOut] = []
    thinking: list[models.ChatThinking] = []
    routed: str | None = None
    run_created: models.RunCreated | None = None
    for ev in produced:
        match ev.payload:
            case event.MessageData(author="assistant", message_id=mid, content=content):
                out_messages.append(
                    models.ChatMessageOut(
                        id=mid, role="assistant", agent_id=ev.agent_id, content=content
                    )
                )
            case event.ThinkingData(summary=summary, phase=phase):
                thinking.append(models.ChatThinking(kind=phase, summary=summary))
            case event.RoutingData(agent_id=agent_id):
                routed = agent_id
            case event.RunCreatedData(title=title) if ev.run_id is not None:
                run_created = models.RunCreated(run_id=ev.run_id, title=title)
            case _:
                pass
    return models.ChatAnswer(
        conversation_id=conversation_id,
        messages=out_messages,
        thinking=thinking,
        routed_agent_id=routed,
        run_created=run_created,
    )
