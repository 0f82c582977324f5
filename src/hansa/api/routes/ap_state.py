"""A thread's state under ``/ap`` beyond reading it (``ap_threads.py``): its checkpoint read
by id (``RemoteGraph.get_state`` posts to ``…/state/checkpoint``), ``update_state``, and the
thread operations Hansa does not do, refused with what to do instead.

A thread has one checkpoint, the conversation as it is now; its id is the conversation's
newest event seq, so a client that read it can ask for it again. An older one is 404: the
conversation's events are its history, not checkpoints. ``update_state`` merges its
``values`` into the conversation's *context* (``PATCH /api/conversations/{id}``'s
``context``: a ``null`` value removes a key, ``context.updated`` fires for rules, the
agents' prompts carry it), which the thread's values then show beside ``messages``; the
messages themselves are the conversation's log: a run posts them. Threads are neither
copied nor deleted: 501 ``not_supported``, naming the alternative.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from hansa import errors
from hansa.api import ap_shapes as shapes
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.agent_protocol import StateUpdated, ThreadStateOut
from hansa.api.models.base import answers
from hansa.api.routes.ap_threads import conversation_of
from hansa.engine.runtime.services import Services
from hansa.engine.turns import conversation_update
from hansa.engine.turns.outcome import standing

router = APIRouter(prefix="/ap", tags=["agent-protocol"])


class CheckpointRef(shapes.Open):
    """A checkpoint as the protocol names one (``thread_id``, ``checkpoint_ns`` are accepted)."""

    checkpoint_id: str | None = Field(default=None, max_length=40)


class CheckpointAsked(shapes.Open):
    """``POST …/state/checkpoint``: the checkpoint wanted (``checkpoint_id`` unset: now)."""

    checkpoint: CheckpointRef = Field(default_factory=CheckpointRef)
    subgraphs: bool = False


class StateUpdate(shapes.Open):
    """``update_state``'s body: context keys and their values (``as_node`` is accepted and
    has no meaning here)."""

    values: dict[str, Any] = Field(min_length=1)
    checkpoint: CheckpointRef | None = None
    checkpoint_id: str | None = Field(default=None, max_length=40)
    as_node: str | None = Field(default=None, max_length=100)


async def _state(services: Services, tenant: str, thread_id: str) -> ThreadStateOut:
    cid = await conversation_of(services, tenant, thread_id)
    found = await services.db.read(standing, tenant, cid, last=shapes.MAX_VALUES)
    return shapes.thread_state(found, services.supervisor.id, thread_id=thread_id)


def _at(state: ThreadStateOut, thread_id: str, checkpoint_id: str | None) -> ThreadStateOut:
    """``state`` if ``checkpoint_id`` names it (or is unset); 404 for any other."""
    if checkpoint_id in (None, "", state.checkpoint.checkpoint_id):
        return state
    raise errors.NotFound(
        f"thread {thread_id} has one checkpoint, its state now "
        f"({state.checkpoint.checkpoint_id}): earlier states are not kept as checkpoints "
        "(the conversation's events are its history)",
        details={"field": "checkpoint_id", "checkpointId": state.checkpoint.checkpoint_id},
    )


@router.post(
    "/threads/{thread_id}/state/checkpoint",
    response_model_exclude_unset=True,
    responses=answers(None, 404),
)
async def get_thread_state_at_checkpoint(
    thread_id: str, body: CheckpointAsked, services: ServicesDep, tenant: TenantDep
) -> ThreadStateOut:
    """The thread's state at a checkpoint: its one checkpoint, now."""
    wanted = body.checkpoint.checkpoint_id
    return _at(await _state(services, tenant, thread_id), thread_id, wanted)


@router.get(
    "/threads/{thread_id}/state/{checkpoint_id}",
    response_model_exclude_unset=True,
    responses=answers(None, 404),
)
async def get_thread_state_by_checkpoint_id(
    thread_id: str, checkpoint_id: str, services: ServicesDep, tenant: TenantDep
) -> ThreadStateOut:
    """The thread's state at checkpoint ``checkpoint_id``: its one checkpoint, now."""
    return _at(await _state(services, tenant, thread_id), thread_id, checkpoint_id)


@router.post(
    "/threads/{thread_id}/state", response_model=StateUpdated, responses=answers(None, 404)
)
async def update_thread_state(
    thread_id: str, body: StateUpdate, services: ServicesDep, tenant: TenantDep
) -> StateUpdated:
    """Merge ``values`` into the conversation's context (``null`` removes a key)."""
    taken = sorted(shapes.RESERVED_VALUES & set(body.values))
    if taken:
        raise errors.InvalidInput(
            f"{', '.join(taken)} cannot be set: a thread's messages are its conversation's "
            "log (post one with a run); update_state sets context keys",
            details={"field": f"values.{taken[0]}"},
        )
    before = await _state(services, tenant, thread_id)
    asked = body.checkpoint_id or (body.checkpoint.checkpoint_id if body.checkpoint else None)
    if asked not in (None, "", before.checkpoint.checkpoint_id):
        raise errors.Conflict(
            "only the thread's state now can be updated: earlier checkpoints are not kept",
            details={"field": "checkpoint", "checkpointId": before.checkpoint.checkpoint_id},
        )
    cid = await conversation_of(services, tenant, thread_id)
    await conversation_update.update_conversation(services, tenant, cid, context=body.values)
    return StateUpdated(checkpoint=(await _state(services, tenant, thread_id)).checkpoint)


@router.post(
    "/threads/{thread_id}/copy", status_code=501, responses=answers(None, 404, 501)
)  # never succeeds: no 200 is documented
async def copy_thread(thread_id: str, services: ServicesDep, tenant: TenantDep) -> None:
    """Not supported: a conversation is the log of what was done."""
    await conversation_of(services, tenant, thread_id)  # 404 first, as for any thread
    raise shapes.NotSupported(
        "threads are not copied: a conversation is the log of what was done; create a new "
        "thread (its context can be set with update_state)",
        details={"threadId": thread_id},
    )


@router.delete(
    "/threads/{thread_id}", status_code=501, responses=answers(None, 404, 501)
)  # never succeeds: no 200 is documented
async def delete_thread(thread_id: str, services: ServicesDep, tenant: TenantDep) -> None:
    """Not supported: a conversation is the log of what was done."""
    await conversation_of(services, tenant, thread_id)
    raise shapes.NotSupported(
        "threads are not deleted: a conversation is the log of what was done; start a new "
        "thread instead",
        details={"threadId": thread_id},
    )
