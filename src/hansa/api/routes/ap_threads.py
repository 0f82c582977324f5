"""The Agent Protocol's (LangGraph Platform's) assistants and threads, under ``/ap``, so
``langgraph-sdk``'s client (``get_client(url=".../ap", api_key=KEY)``) and Agent Protocol
clients can use Hansa. ``api/ap_shapes.py`` says what each is; runs are in ``ap_runs.py``,
the store in ``ap_store.py``.

Assistants are the tenant's agents, listed as they are (create, update and delete them
with ``/api/agents``). Threads are conversations: a thread's ``metadata`` is the client's,
kept in the conversation's metadata; a thread is not deleted (its conversation is the log of
what was done), and its state has one checkpoint, the conversation as it is now. A thread's
id is its conversation's, or the UUID its client chose, unique within the tenant only
(``store/threads.py``): every route finds the conversation with :func:`conversation_of`,
and answers name the thread as the request did.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sqlalchemy import Connection

from hansa import errors
from hansa.api import ap_shapes as shapes
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.agent_protocol import AssistantOut, ThreadOut, ThreadStateOut
from hansa.api.models.base import answers
from hansa.domain.agent import AgentDefinition
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat, conversation_update
from hansa.engine.turns.outcome import Standing, standing
from hansa.store import conversations, threads

router = APIRouter(prefix="/ap", tags=["agent-protocol"])
SEARCH_SCAN = 1_000
"""The newest conversations a thread search looks through (its filters are applied to
them)."""


def _matches(found: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return all(found.get(k) == v for k, v in (wanted or {}).items())


async def _assistants(
    services: Services, tenant: str, body: shapes.AssistantSearch
) -> list[AgentDefinition]:
    return [
        a
        for a in await services.agents.listing(tenant)
        if body.graph_id in (None, a.id)
        and (body.name is None or body.name.lower() in a.display_name.lower())
        and _matches(shapes.assistant(a, services.clock()).metadata, body.metadata)
    ]


@router.post("/assistants/search")
async def search_assistants(
    body: shapes.AssistantSearch, services: ServicesDep, tenant: TenantDep
) -> list[AssistantOut]:
    """The tenant's agents as assistants, Hans first."""
    found = await _assistants(services, tenant, body)
    now = services.clock()
    return [shapes.assistant(a, now) for a in found[body.offset : body.offset + body.limit]]


@router.post("/assistants/count", response_model=None, responses=answers(int))
async def count_assistants(
    body: shapes.AssistantSearch, services: ServicesDep, tenant: TenantDep
) -> int:
    """How many assistants a search finds."""
    return len(await _assistants(services, tenant, body))


@router.get("/assistants/{assistant_id}", responses=answers(None, 404))
async def get_assistant(
    assistant_id: str, services: ServicesDep, tenant: TenantDep
) -> AssistantOut:
    """One agent as an assistant."""
    agent = await services.agents.require(tenant, assistant_id)
    return shapes.assistant(agent, services.clock())


async def conversation_of(services: Services, tenant: str, thread_id: str) -> str:
    """The tenant's conversation that ``thread_id`` names (the id its client chose, or its
    own); 404 otherwise, also when only another tenant's client chose that id."""
    return await services.db.read(threads.conversation_of, tenant, thread_id)


async def _standing(services: Services, tenant: str, conversation_id: str) -> Standing:
    return await services.db.read(standing, tenant, conversation_id, last=shapes.MAX_VALUES)


async def _thread(services: Services, tenant: str, thread_id: str) -> ThreadOut:
    found = await _standing(services, tenant, await conversation_of(services, tenant, thread_id))
    return shapes.thread(found, thread_id=thread_id)


@router.post("/threads", response_model_exclude_unset=True, responses=answers(None, 409))
async def create_thread(
    body: shapes.ThreadCreate, services: ServicesDep, tenant: TenantDep
) -> ThreadOut:
    """A new thread (a conversation with Hans); ``thread_id`` may be the client's UUID (409
    when the tenant has a thread of that id; another tenant's is no matter)."""
    thread_id = None if body.thread_id is None else str(body.thread_id)
    if thread_id is not None and body.if_exists == "do_nothing":
        try:
            return await _thread(services, tenant, thread_id)
        except errors.NotFound:
            pass
    convo = await chat.create_conversation(
        services,
        tenant,
        client_id=thread_id,
        metadata={shapes.THREAD_METADATA: body.metadata} if body.metadata else None,
        user=conversation_update.user_of((body.metadata or {}).get("user")),
    )
    return shapes.thread(await _standing(services, tenant, convo.id), thread_id=thread_id)


@router.get("/threads/{thread_id}", response_model_exclude_unset=True, responses=answers(None, 404))
async def get_thread(thread_id: str, services: ServicesDep, tenant: TenantDep) -> ThreadOut:
    """The thread: its status, values (newest messages) and interrupts."""
    return await _thread(services, tenant, thread_id)


@router.patch(
    "/threads/{thread_id}", response_model_exclude_unset=True, responses=answers(None, 404)
)
async def update_thread(
    thread_id: str, body: shapes.ThreadPatch, services: ServicesDep, tenant: TenantDep
) -> ThreadOut:
    """Merge ``metadata`` into the thread's (its ``user``: the conversation's user)."""
    now = services.clock()

    def merge(conn: Connection) -> None:
        cid = threads.conversation_of(conn, tenant, thread_id)
        merged = {**_metadata(conversations.get(conn, tenant, cid).metadata), **body.metadata}
        conversations.set_metadata(conn, tenant, cid, shapes.THREAD_METADATA, merged, now)
        if "user" in body.metadata:
            raw = conversation_update.user_of(body.metadata["user"])
            user = None if raw is None else conversation_update.checked_user(services, raw)
            conversations.set_user(conn, tenant, cid, user, now)

    await services.db.write(merge)
    return await _thread(services, tenant, thread_id)


async def _search(
    services: Services, tenant: str, body: shapes.ThreadSearch, *, page: bool
) -> tuple[int, list[ThreadOut]]:
    """How many threads match, and those of the page (all of them when ``page`` is false).
    A status filter reads each matching conversation's standing; without one, only the
    page's."""

    def read(conn: Connection) -> tuple[int, list[ThreadOut]]:
        recent = conversations.list_recent(conn, tenant, limit=SEARCH_SCAN)
        matched = [c.id for c in recent if _matches(_metadata(c.metadata), body.metadata)]
        if body.status is None:
            ids = matched[body.offset : body.offset + body.limit] if page else []
            found = [standing(conn, tenant, i, last=shapes.MAX_VALUES) for i in ids]
            return len(matched), [_shown(conn, s) for s in found]
        found = [standing(conn, tenant, i, last=shapes.MAX_VALUES) for i in matched]
        found = [s for s in found if shapes.thread_status(s) == body.status]
        return len(found), [_shown(conn, s) for s in found[body.offset : body.offset + body.limit]]

    def _shown(conn: Connection, found: Standing) -> ThreadOut:
        shown = threads.thread_id_of(conn, tenant, found.conversation.id)
        return shapes.thread(found, thread_id=shown)

    return await services.db.read(read)


def _metadata(stored: dict[str, Any]) -> dict[str, Any]:
    kept = stored.get(shapes.THREAD_METADATA)
    return kept if isinstance(kept, dict) else {}


@router.post("/threads/search", response_model_exclude_unset=True)
async def search_threads(
    body: shapes.ThreadSearch, services: ServicesDep, tenant: TenantDep
) -> list[ThreadOut]:
    """Threads by metadata and status, most recently active first (among the newest
    ``SEARCH_SCAN`` conversations)."""
    _, found = await _search(services, tenant, body, page=True)
    return found


@router.post("/threads/count", response_model=None, responses=answers(int))
async def count_threads(body: shapes.ThreadSearch, services: ServicesDep, tenant: TenantDep) -> int:
    """How many threads a search finds."""
    count, _ = await _search(services, tenant, body, page=False)
    return count


@router.get(
    "/threads/{thread_id}/state", response_model_exclude_unset=True, responses=answers(None, 404)
)
async def get_thread_state(
    thread_id: str, services: ServicesDep, tenant: TenantDep
) -> ThreadStateOut:
    """The thread's state: values, what it waits for (``tasks``, ``interrupts``, ``next``)."""
    found = await _standing(services, tenant, await conversation_of(services, tenant, thread_id))
    return shapes.thread_state(found, services.supervisor.id, thread_id=thread_id)


@router.post(
    "/threads/{thread_id}/history",
    response_model_exclude_unset=True,
    responses=answers(None, 404),
)
async def get_thread_history(
    thread_id: str, services: ServicesDep, tenant: TenantDep
) -> list[ThreadStateOut]:
    """The thread's checkpoints: the one it has, now."""
    found = await _standing(services, tenant, await conversation_of(services, tenant, thread_id))
    return [shapes.thread_state(found, services.supervisor.id, thread_id=thread_id)]
