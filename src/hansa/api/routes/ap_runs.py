"""The Agent Protocol's (LangGraph Platform's) runs, under ``/ap``: a run is a turn, with
what came of it (``engine/turns/outcome.py``, ``api/ap_shapes.py``).

A run posts its input's last user message (or, with ``command: {"resume": …}``, the answer
to what the thread waits for) to the thread's conversation, for the assistant (agent) it
names; Hans's id lets him route. ``wait`` and ``join`` answer the thread's values once the
run is done (with ``__interrupt__`` when the thread waits for the user, ``__error__`` when
the turn failed); ``stream`` sends ``metadata``, then the stream modes asked for
(``values``, ``updates``, ``messages-tuple`` as ``messages``, ``messages`` as
``messages/partial`` and ``messages/complete``, ``custom``: each Hansa event in its wire
shape), then ``end``. Other modes (``events``, ``debug``) are refused (422 naming them),
before anything is posted. A run that approved a plan
is done when the plan's run has ended and Hans has summed it up, or when a step waits for
confirmation. ``multitask_strategy`` ``rollback`` interrupts like ``interrupt``.

A thread is named by its conversation's id or by the UUID its client chose
(``ap_threads.conversation_of``); answers, streams and ``Content-Location`` name it as the
request did.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from hansa import errors
from hansa.api import ap_shapes as shapes
from hansa.api import limits, sse
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.agent_protocol import RunOut, Values
from hansa.api.models.base import answers
from hansa.api.routes.ap_threads import conversation_of
from hansa.domain import base, event, message
from hansa.engine import runs
from hansa.engine.runtime.services import Services
from hansa.engine.turns import cancel, chat
from hansa.engine.turns.outcome import Outcome, follow_work, outcome, seq_of_turn, standing
from hansa.store import turns

router = APIRouter(prefix="/ap", tags=["agent-protocol"])
MAX_LISTED = 100
_SSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events: `metadata`, the stream modes' events, then `end` "
        "(`error` first when the turn failed); each `data` line JSON",
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "description": "One event of the stream: its name and its `data` line.",
                    "properties": {
                        "event": {"type": "string"},
                        "data": {"type": "string", "contentMediaType": "application/json"},
                    },
                    "required": ["data"],
                }
            }
        },
    }
}


def _hold(request: Request, tenant: str, thread: Thread) -> limits.Slot:
    """One of the thread's subscriber slots, its conversation's, as ``/api`` streams hold
    (429 past the stream limits)."""
    return limits.of(request.app).subscribers.hold(tenant, thread.conversation_id)


_TURN_AGENT = frozenset({message.Kind.USER, message.Kind.ASSISTANT})


@dataclass(frozen=True, slots=True)
class Thread:
    """The thread a run is for: what the client calls it, its conversation, and whether the
    run opens it (``if_not_exists: create``; its conversation's id is chosen beforehand)."""

    thread_id: str
    conversation_id: str
    new: bool = False


@dataclass(frozen=True, slots=True)
class Started:
    """A run's message, posted in its thread."""

    thread: Thread
    posted: chat.Posted
    stream_mode: str | list[str]


async def _thread(
    services: Services, tenant: str, thread_id: str, body: shapes.ApRunCreate
) -> Thread:
    """The tenant's thread a run's path names; with ``if_not_exists: create``, a new one for
    an id the tenant has no thread of. A client chooses only a UUID, as ``POST /ap/threads``
    takes, so no id Hansa issued (another tenant's conversation, say) is one a client may
    claim. Ids a client chose are unique within its tenant only: one another tenant's client
    chose opens a thread of the caller's, as a free UUID does (security review 2026-11-27,
    L2)."""
    try:
        return Thread(thread_id, await conversation_of(services, tenant, thread_id))
    except errors.NotFound:
        if body.if_not_exists != "create":
            raise
    try:
        chosen = str(uuid.UUID(thread_id))
    except ValueError:
        chosen = None
    if chosen != thread_id.lower():
        raise errors.InvalidInput(
            "a thread a run creates needs a UUID for its id, as POST /ap/threads does",
            details={"field": "thread_id"},
        )
    return Thread(thread_id, base.new_id(), new=True)


async def _start(
    services: Services, tenant: str, thread: Thread | None, body: shapes.ApRunCreate
) -> Started:
    """Post the run's message; a new conversation for a run without a thread, or for a new
    one."""
    text = shapes.text_of(body)
    await services.agents.require(tenant, body.assistant_id)
    active = None if body.assistant_id == services.supervisor.id else body.assistant_id
    if thread is None:
        cid = (await chat.create_conversation(services, tenant, active_agent_id=active)).id
        thread = Thread(cid, cid)
    elif thread.new:
        thread = await _open(services, tenant, thread)
    cid = thread.conversation_id
    if body.command is not None:
        now = await services.db.read(standing, tenant, cid, last=1)
        if now.waiting is None:
            raise errors.Conflict(
                "the thread is not waiting for an answer: there is nothing to resume",
                details={"threadId": thread.thread_id},
            )
        active = None  # the answer goes to whoever asked
    strategy = "interrupt" if body.multitask_strategy == "rollback" else body.multitask_strategy
    posted = await chat.post_message(
        services, tenant, cid, text, active_agent_id=active, strategy=strategy
    )
    return Started(thread, posted, body.stream_mode)


async def _open(services: Services, tenant: str, thread: Thread) -> Thread:
    """Open the new thread a run names, under the client's id; the tenant's thread of that id
    if another request of the tenant opened it meanwhile."""
    try:
        await chat.create_conversation(
            services, tenant, conversation_id=thread.conversation_id, client_id=thread.thread_id
        )
    except errors.Conflict:
        return Thread(thread.thread_id, await conversation_of(services, tenant, thread.thread_id))
    return Thread(thread.thread_id, thread.conversation_id)


def _location(thread_id: str, run_id: str) -> dict[str, str]:
    return {"Content-Location": f"/ap/threads/{thread_id}/runs/{run_id}"}


async def _of(services: Services, tenant: str, thread_id: str) -> Thread:
    """The tenant's thread ``thread_id`` names (404 otherwise)."""
    return Thread(thread_id, await conversation_of(services, tenant, thread_id))


async def _run(services: Services, tenant: str, thread: Thread, run_id: str) -> Outcome:
    found = await services.db.read(outcome, tenant, run_id)
    if found.turn.conversation_id != thread.conversation_id:
        raise errors.NotFound(f"run {run_id} is not a run of thread {thread.thread_id}")
    return found


async def _final(services: Services, tenant: str, thread: Thread, failed: str | None) -> Values:
    now = await services.db.read(standing, tenant, thread.conversation_id, last=shapes.MAX_VALUES)
    return shapes.final_values(now, failed, thread_id=thread.thread_id)


async def _waited(
    services: Services, tenant: str, thread: Thread, run_id: str, after: int
) -> Values:
    failed = None
    async for ev in follow_work(services, tenant, thread.conversation_id, run_id, after):
        if isinstance(ev.payload, event.ErrorData) and ev.turn_id == run_id:
            failed = ev.payload.message
    return await _final(services, tenant, thread, failed)


def _out(services: Services, found: Outcome, thread: Thread) -> RunOut:
    return shapes.run_out(found, services.supervisor.id, thread_id=thread.thread_id)


async def _created(services: Services, tenant: str, run: Started, response: Response) -> RunOut:
    found = await _run(services, tenant, run.thread, run.posted.turn_id)
    response.headers.update(_location(run.thread.thread_id, run.posted.turn_id))
    return _out(services, found, run.thread)


async def _answered(services: Services, tenant: str, run: Started, response: Response) -> Values:
    turn_id, after = run.posted.turn_id, run.posted.seq - 1
    response.headers.update(_location(run.thread.thread_id, turn_id))
    return await _waited(services, tenant, run.thread, turn_id, after)


def _streamed(services: Services, tenant: str, run: Started, slot: limits.Slot) -> sse.HeldStream:
    turn_id, after = run.posted.turn_id, run.posted.seq - 1
    return _streaming(services, tenant, run.thread, turn_id, after, run.stream_mode, slot)


@router.post("/threads/{thread_id}/runs", responses=answers(None, 404, 409, 422, 429))
async def create_thread_run(
    thread_id: str,
    body: shapes.ApRunCreate,
    response: Response,
    services: ServicesDep,
    tenant: TenantDep,
) -> RunOut:
    """Start a run in the background: follow it with ``join``, ``stream`` or ``get``."""
    run = await _start(services, tenant, await _thread(services, tenant, thread_id, body), body)
    return await _created(services, tenant, run, response)


@router.post("/runs", responses=answers(None, 404, 409, 422, 429))
async def create_stateless_run(
    body: shapes.ApRunCreate, response: Response, services: ServicesDep, tenant: TenantDep
) -> RunOut:
    """Start a run on a new thread (``thread_id`` in the answer)."""
    return await _created(services, tenant, await _start(services, tenant, None, body), response)


@router.post(
    "/threads/{thread_id}/runs/wait",
    response_model_exclude_unset=True,
    responses=answers(None, 404, 409, 422, 429),
)
async def wait_thread_run(
    thread_id: str,
    body: shapes.ApRunCreate,
    response: Response,
    services: ServicesDep,
    tenant: TenantDep,
) -> Values:
    """Run, and answer the thread's values when the run is done."""
    run = await _start(services, tenant, await _thread(services, tenant, thread_id, body), body)
    return await _answered(services, tenant, run, response)


@router.post(
    "/runs/wait", response_model_exclude_unset=True, responses=answers(None, 404, 409, 422, 429)
)
async def wait_stateless_run(
    body: shapes.ApRunCreate, response: Response, services: ServicesDep, tenant: TenantDep
) -> Values:
    """Run on a new thread, and answer its values when the run is done."""
    run = await _start(services, tenant, None, body)
    return await _answered(services, tenant, run, response)


@router.post(
    "/threads/{thread_id}/runs/stream",
    status_code=200,  # FastAPI cannot read it off sse.HeldStream's __init__ (its slot first)
    response_model=None,
    response_class=sse.HeldStream,
    responses={**answers(None, 404, 409, 422, 429), **_SSE},
)
async def stream_thread_run(
    thread_id: str,
    body: shapes.ApRunCreate,
    request: Request,
    services: ServicesDep,
    tenant: TenantDep,
) -> sse.HeldStream:
    """Run, streamed as Server-Sent Events."""
    thread = await _thread(services, tenant, thread_id, body)
    slot = _hold(request, tenant, thread)  # before the run starts: a 429 starts nothing
    try:
        run = await _start(services, tenant, thread, body)
    except BaseException:
        slot.release()
        raise
    return _streamed(services, tenant, run, slot)


@router.post(
    "/runs/stream",
    status_code=200,  # FastAPI cannot read it off sse.HeldStream's __init__ (its slot first)
    response_model=None,
    response_class=sse.HeldStream,
    responses={**answers(None, 404, 409, 422, 429), **_SSE},
)
async def stream_stateless_run(
    body: shapes.ApRunCreate, request: Request, services: ServicesDep, tenant: TenantDep
) -> sse.HeldStream:
    """Run on a new thread, streamed as Server-Sent Events."""
    run = await _start(services, tenant, None, body)
    return _streamed(services, tenant, run, _hold(request, tenant, run.thread))


@router.get("/threads/{thread_id}/runs", responses=answers(None, 404))
async def list_thread_runs(
    thread_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    limit: int = Query(default=10, ge=1, le=MAX_LISTED),
    offset: int = Query(default=0, ge=0, le=100_000),
) -> list[RunOut]:
    """The thread's runs (its turns), newest first."""
    thread = await _of(services, tenant, thread_id)  # 404 for an unknown thread
    cid = thread.conversation_id
    page = await services.db.read(
        lambda conn: [
            outcome(conn, tenant, t.id)
            for t in turns.of_conversation(conn, tenant, cid, limit=limit, offset=offset)
        ]
    )
    return [_out(services, o, thread) for o in page]


@router.get(
    "/threads/{thread_id}/runs/{run_id}",
    responses=answers(None, 404),
)
async def get_thread_run(
    thread_id: str, run_id: str, services: ServicesDep, tenant: TenantDep
) -> RunOut:
    """One run: its status is the turn's, then that of the plan it approved."""
    thread = await _of(services, tenant, thread_id)
    return _out(services, await _run(services, tenant, thread, run_id), thread)


@router.get(
    "/threads/{thread_id}/runs/{run_id}/join",
    response_model_exclude_unset=True,
    responses=answers(None, 404),
)
async def join_thread_run(
    thread_id: str, run_id: str, services: ServicesDep, tenant: TenantDep
) -> Values:
    """Wait for the run to be done; the thread's values."""
    thread = await _of(services, tenant, thread_id)
    found = await _run(services, tenant, thread, run_id)
    after = await services.db.read(seq_of_turn, tenant, found.turn)
    return await _waited(services, tenant, thread, run_id, after)


@router.get(
    "/threads/{thread_id}/runs/{run_id}/stream",
    status_code=200,  # FastAPI cannot read it off sse.HeldStream's __init__ (its slot first)
    response_model=None,
    response_class=sse.HeldStream,
    responses={**answers(None, 404, 429), **_SSE},
)
async def join_thread_run_stream(
    thread_id: str,
    run_id: str,
    request: Request,
    services: ServicesDep,
    tenant: TenantDep,
    stream_mode: Annotated[list[str], Query(max_length=10)] = ["values"],  # noqa: B006
) -> sse.HeldStream:
    """The run's stream from its start, then live until it is done."""
    refused = shapes.unstreamed(stream_mode)
    if refused:
        raise errors.InvalidInput(refused, details={"field": "stream_mode"})
    thread = await _of(services, tenant, thread_id)
    found = await _run(services, tenant, thread, run_id)
    after = await services.db.read(seq_of_turn, tenant, found.turn)
    slot = _hold(request, tenant, thread)
    return _streaming(services, tenant, thread, run_id, after, stream_mode, slot)


@router.post(
    "/threads/{thread_id}/runs/{run_id}/cancel",
    status_code=204,
    response_model=None,
    responses=answers(None, 404, 409, status=204, description="Cancelled"),
)
async def cancel_thread_run(
    thread_id: str, run_id: str, services: ServicesDep, tenant: TenantDep
) -> Response:
    """Cancel the run: its turn while it is queued or running, else the plan's run it
    started while that executes (409 once both have ended)."""
    found = await _run(services, tenant, await _of(services, tenant, thread_id), run_id)
    if shapes.run_status(found) in ("pending", "running") and found.started is None:
        await cancel.cancel_turn(services, tenant, run_id)
    elif found.started is not None and shapes.run_status(found) in ("running", "interrupted"):
        await runs.cancel(services, tenant, found.started.id)
    else:
        raise errors.Conflict(f"run {run_id} has ended", details={"runId": run_id})
    return Response(status_code=204)


def _streaming(
    services: Services,
    tenant: str,
    thread: Thread,
    run_id: str,
    after: int,
    modes: str | list[str],
    slot: limits.Slot,
) -> sse.HeldStream:
    named = frozenset([modes] if isinstance(modes, str) else modes) - {""}
    wanted = named or frozenset({"values"})  # the SDK's join_stream sends an empty mode
    frames = _events(services, tenant, thread, run_id, after, wanted)
    return sse.stream(services, frames, slot=slot, headers=_location(thread.thread_id, run_id))


def _sse(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, default=str)}\n\n"


async def _events(
    services: Services,
    tenant: str,
    thread: Thread,
    run_id: str,
    after: int,
    modes: frozenset[str],
) -> AsyncGenerator[str]:
    yield _sse("metadata", {"run_id": run_id, "thread_id": thread.thread_id, "attempt": 1})
    failed: str | None = None
    texts: dict[str, str] = {}  # message id -> text streamed so far
    async for ev in follow_work(services, tenant, thread.conversation_id, run_id, after):
        data = ev.payload
        if isinstance(data, event.ErrorData) and ev.turn_id == run_id:
            failed = data.message
        if "custom" in modes:
            yield _sse("custom", ev.to_wire())
        if isinstance(data, event.TextDeltaData):
            texts[data.message_id] = texts.get(data.message_id, "") + data.delta
            chunk = {"type": "AIMessageChunk", "content": data.delta, "id": data.message_id}
            if "messages-tuple" in modes:
                yield _sse("messages", [chunk, {"langgraph_node": ev.agent_id, "run_id": run_id}])
            if "messages" in modes:
                whole = {**chunk, "type": "ai", "content": texts[data.message_id]}
                yield _sse("messages/partial", [whole])
        elif isinstance(data, event.MessageData) and data.kind in _TURN_AGENT:
            async for out in _message_events(services, tenant, ev, data, texts, modes):
                yield out
    final = shapes.wire(await _final(services, tenant, thread, failed))
    if "values" in modes:
        yield _sse("values", final)
    if failed is not None:
        yield _sse("error", final["__error__"])
    found = await _run(services, tenant, thread, run_id)
    yield _sse("end", {"run_id": run_id, "status": shapes.run_status(found)})


async def _message_events(
    services: Services,
    tenant: str,
    ev: event.Event,
    data: event.MessageData,
    texts: dict[str, str],
    modes: frozenset[str],
) -> AsyncIterator[str]:
    """What a whole message sends in each stream mode."""
    as_lc: dict[str, Any] = {
        "type": "human" if data.kind is message.Kind.USER else "ai",
        "content": data.content,
    }
    as_lc |= {"id": data.message_id, "name": ev.agent_id}
    if "values" in modes:
        now = await services.db.read(standing, tenant, ev.conversation_id, last=shapes.MAX_VALUES)
        yield _sse("values", shapes.wire(shapes.values(now)))
    if "updates" in modes:
        yield _sse("updates", {ev.agent_id or services.supervisor.id: {"messages": [as_lc]}})
    if data.kind is message.Kind.ASSISTANT:
        if "messages-tuple" in modes and data.message_id not in texts:
            chunk = {**as_lc, "type": "AIMessageChunk"}
            yield _sse("messages", [chunk, {"langgraph_node": ev.agent_id}])
        if "messages" in modes:
            yield _sse("messages/complete", [as_lc])
