"""OpenAI-compatible chat (``/v1``), so Open WebUI, LibreChat and the official ``openai``
clients can use Hansa as a backend: ``model`` is an agent's id, a completion is a turn.

The chat API is stateless (each request carries the whole history); Hansa's conversations
are not. A request continues the conversation named by the ``X-Hansa-Conversation-Id``
header or the body's ``conversation_id`` (the clients' ``extra_body``); else the one whose
last answer ended the history it sends (Open WebUI and LibreChat send no header: each
answered conversation keeps a digest of its user and assistant messages, and the body's
``user``, in its metadata, ``store/threads.py``); otherwise it opens a new conversation. Only
the last user message is posted: Hansa keeps the rest itself. Every answer names its
conversation in the same header.

Streamed answers send the turn's text as it is generated (``chat.completion.chunk``), then
``data: [DONE]``. A draft the quality gate held back cannot be taken back from a client:
its replacement follows after a blank line. ``usage`` is the turn's model calls summed
(``llm_calls``): on the completion, and streamed as a last chunk with no choices when
``stream_options.include_usage`` asks for it. Errors keep Hansa's shape (``{"error":
{"code", "message", "details"}}``), which the OpenAI clients read; a parameter Hansa does not
support (``UNSUPPORTED``) is refused 400 with OpenAI's ``type`` and ``param`` added, never
ignored.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncGenerator
from typing import Any

from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse

from hansa import errors
from hansa.api import sse
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.errors import error_body
from hansa.api.models.base import answers
from hansa.api.models.openai import (
    AssistantMessageOut,
    ChatCompletion,
    ChatCompletionRequest,
    ChoiceOut,
    CompletionUsage,
    ModelList,
    ModelOut,
    OpenAIMessageIn,
)
from hansa.domain import event
from hansa.domain.message import Author, Kind
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat, conversation_update
from hansa.store import llm_calls, threads
from hansa.store.threads import OPENAI_HISTORY

router = APIRouter(prefix="/v1", tags=["openai"])
CONVERSATION_HEADER = "X-Hansa-Conversation-Id"
_TALK = frozenset({"user", "assistant"})

UNSUPPORTED: dict[str, str] = {
    "n": "a turn has one answer: n must be 1",
    "tools": "client tools are not supported: the agent's own tools run inside its turn",
    "tool_choice": "client tools are not supported",
    "functions": "client functions are not supported",
    "function_call": "client functions are not supported",
    "response_format": "only the text response format is supported",
    "logprobs": "log probabilities are not supported",
}
"""The parameters refused (400) when set to anything but their default, and why."""


def _unsupported(body: ChatCompletionRequest) -> str | None:
    """The first parameter of ``body`` that Hansa cannot honour, if any."""
    given = {
        "n": body.n not in (None, 1),
        "tools": bool(body.tools),
        "tool_choice": body.tool_choice not in (None, "none", "auto"),
        "functions": bool(body.functions),
        "function_call": body.function_call not in (None, "none", "auto"),
        "response_format": (body.response_format or {}).get("type", "text") != "text",
        "logprobs": bool(body.logprobs),
    }
    return next((param for param in UNSUPPORTED if given[param]), None)


def _refused(param: str) -> JSONResponse:
    """A 400 in Hansa's error shape that OpenAI's clients read as theirs (``param``)."""
    body = error_body("unsupported_parameter", UNSUPPORTED[param], {"field": param})
    body["error"] |= {"type": "invalid_request_error", "param": param}
    return JSONResponse(body, status_code=400)


@router.get("/models")
async def list_models(services: ServicesDep, tenant: TenantDep) -> ModelList:
    """The agents a completion may name as its ``model``."""
    created = int(time.time())
    agents = await services.agents.listing(tenant)
    return ModelList(data=[ModelOut(id=a.id, created=created, owned_by="hansa") for a in agents])


@router.get("/models/{model}", responses=answers(ModelOut, 404))
async def retrieve_model(model: str, services: ServicesDep, tenant: TenantDep) -> ModelOut:
    """One agent as a model (``404`` for an id that is not an agent's)."""
    agent = await services.agents.require(tenant, model)
    return ModelOut(id=agent.id, created=int(time.time()), owned_by="hansa")


@router.post(
    "/chat/completions",
    response_model=None,
    responses={
        **answers(ChatCompletion, 400, 404, 409, 504),
        200: {
            "model": ChatCompletion,
            "description": "The turn's answer; with stream: true, chat.completion.chunk "
            "events (text/event-stream) ending with data: [DONE]",
        },
    },
)
async def create_chat_completion(
    body: ChatCompletionRequest,
    services: ServicesDep,
    tenant: TenantDep,
    conversation_header: str | None = Header(
        default=None, alias=CONVERSATION_HEADER, max_length=100
    ),
) -> Any:
    """Run a turn of agent ``model`` on the last user message; answer when it is done (or
    stream it)."""
    unsupported = _unsupported(body)
    if unsupported is not None:
        return _refused(unsupported)
    await services.agents.require(tenant, body.model)  # 404, as OpenAI's model_not_found
    text = _last_user_text(body.messages)
    conversation_id = conversation_header or body.conversation_id
    asked = _history(body, [*_before_last_user(body.messages)])
    if conversation_id is None and asked is not None:
        conversation_id = await services.db.read(threads.find, tenant, asked, OPENAI_HISTORY)
    if conversation_id is None:
        convo = await chat.create_conversation(
            services,
            tenant,
            active_agent_id=body.model,
            user=conversation_update.user_of(body.user),
        )
        conversation_id = convo.id
    posted = await chat.post_message(
        services, tenant, conversation_id, text, active_agent_id=body.model
    )
    headers = {CONVERSATION_HEADER: conversation_id}
    completion_id = f"chatcmpl-{posted.turn_id}"
    if body.stream:
        chunks = _chunks(services, tenant, conversation_id, posted, completion_id, body)
        return sse.stream(services, chunks, headers=headers)  # with keep-alive comments
    waited = await chat.wait_for_done(services, tenant, conversation_id, posted.turn_id, posted.seq)
    if not waited.finished:
        still = error_body(
            "turn_timeout",
            "the turn is still running; follow it on its conversation",
            {"conversationId": conversation_id, "turnId": posted.turn_id},
        )
        return JSONResponse(still, status_code=504, headers=headers)
    content = "\n\n".join(_said(waited.events))
    await _remember(services, tenant, conversation_id, body, content)
    answer = ChatCompletion(
        id=completion_id,
        created=int(time.time()),
        model=body.model,
        choices=[
            ChoiceOut(index=0, message=AssistantMessageOut(content=content), finish_reason="stop")
        ],
        usage=await _usage(services, tenant, conversation_id, posted.turn_id),
    )
    return JSONResponse(answer.model_dump(), headers=headers)


async def _usage(
    services: Services, tenant: str, conversation_id: str, turn_id: str
) -> CompletionUsage:
    """The turn's model calls summed (its ``done`` committed them)."""
    totals = await services.db.read(
        lambda conn: llm_calls.turn_totals(conn, tenant, conversation_id, turn_id)
    )
    return CompletionUsage(
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        total_tokens=totals.total_tokens,
    )


def _text(m: OpenAIMessageIn) -> str:
    if isinstance(m.content, str):
        return m.content
    parts = [p.get("text") for p in m.content or [] if p.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))


def _before_last_user(messages: list[OpenAIMessageIn]) -> list[tuple[str, str]]:
    """The user and assistant messages before the last user message (the history it
    continues), as (role, text)."""
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=0)
    return [(m.role, _text(m).strip()) for m in messages[:last] if m.role in _TALK]


def _history(body: ChatCompletionRequest, said: list[tuple[str, str]]) -> str | None:
    """A digest of a chat's user and assistant messages (and the body's ``user``); None for
    a chat with none yet."""
    if not said:
        return None
    user = getattr(body, "user", None)
    canonical = json.dumps([user if isinstance(user, str) else None, said], ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


async def _remember(
    services: Services, tenant: str, conversation_id: str, body: ChatCompletionRequest, answer: str
) -> None:
    """Keep the digest of the chat with its answer: the client's next request sends it."""
    said = [
        *_before_last_user(body.messages),
        ("user", _last_user_text(body.messages).strip()),
        ("assistant", answer.strip()),
    ]
    digest = _history(body, said)
    assert digest is not None
    now = services.clock()
    await services.db.write(
        lambda conn: threads.remember(conn, tenant, conversation_id, digest, now, OPENAI_HISTORY)
    )


def _last_user_text(messages: list[OpenAIMessageIn]) -> str:
    for m in reversed(messages):
        if m.role == "user":
            return _text(m)
    raise errors.InvalidInput("messages must contain a user message", details={"field": "messages"})


def _said(events: list[event.Event]) -> list[str]:
    """What the turn's agents answered (not status chips or the user's own message)."""
    return [
        ev.payload.content
        for ev in events
        if isinstance(ev.payload, event.MessageData)
        and ev.payload.kind is Kind.ASSISTANT
        and ev.payload.author is Author.ASSISTANT
    ]


async def _chunks(
    services: Services,
    tenant: str,
    conversation_id: str,
    posted: chat.Posted,
    completion_id: str,
    body: ChatCompletionRequest,
) -> AsyncGenerator[str]:
    created = int(time.time())
    model = body.model
    sent: list[str] = []  # what the client puts together as the answer
    with_usage = body.stream_options is not None and body.stream_options.include_usage

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> str:
        body: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if with_usage:  # null on every chunk but the last, as OpenAI sends it
            body["usage"] = usage
        return f"data: {json.dumps(body)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    streamed: set[str] = set()  # messages whose text came as deltas
    async for ev in chat.turn_events(services, tenant, conversation_id, posted):
        data = ev.payload
        if isinstance(data, event.TextDeltaData):
            separator = "\n\n" if streamed and data.message_id not in streamed else ""
            streamed.add(data.message_id)
            sent.append(separator + data.delta)
            yield chunk({"content": separator + data.delta})
        elif isinstance(data, event.MessageData) and data.message_id not in streamed:
            if data.kind is Kind.ASSISTANT and data.author is Author.ASSISTANT:
                separator = "\n\n" if streamed else ""
                streamed.add(data.message_id)
                sent.append(separator + data.content)
                yield chunk({"content": separator + data.content})
    await _remember(services, tenant, conversation_id, body, "".join(sent))
    yield chunk({}, "stop")
    if with_usage:
        used = await _usage(services, tenant, conversation_id, posted.turn_id)
        yield chunk(None, usage=used.model_dump())
    yield "data: [DONE]\n\n"
