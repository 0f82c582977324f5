"""Decision 0008 by structure: the store marks the reads that grow with the data, and
``Database.read`` routes them to a reader thread; callers only name the function."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.event import Event
from hansa.store import conversations, events, llm_calls, messages, projects, runs, workspace
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database, growing, is_growing

GROWING = [
    events.all_of,  # a whole timeline
    messages.all_of,  # every message of a conversation
    conversations.list_recent,  # a tenant's conversations
    projects.list_all,  # a tenant's projects
    llm_calls.list_for,  # model calls
    workspace.list_kind,  # every entity of a kind
]
BOUNDED = [
    conversations.get,
    events.read_after,
    messages.list_for,
    projects.get,
    runs.get,
    runs.tasks_of,
    workspace.get,
    workspace.find_by_slug,
]


@pytest.mark.parametrize("fn", GROWING, ids=lambda fn: f"{fn.__module__}.{fn.__name__}")
def test_reads_that_grow_with_the_data_are_marked(fn: Callable[..., Any]) -> None:
    assert is_growing(fn), f"{fn.__module__}.{fn.__name__} grows with the data: mark it @growing"


@pytest.mark.parametrize("fn", BOUNDED, ids=lambda fn: f"{fn.__module__}.{fn.__name__}")
def test_bounded_reads_are_not(fn: Callable[..., Any]) -> None:
    assert not is_growing(fn), f"{fn.__module__}.{fn.__name__} is bounded: it runs on the loop"


def test_read_passes_arguments_on_and_raises_what_the_function_raises(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    conversation_id = new_conversation()

    async def scenario() -> tuple[list[str], str, list[Event]]:
        recent = await db.read(conversations.list_recent, T, limit=1)
        one = await db.read(conversations.get, T, conversation_id)
        log = await db.read(events.all_of, T, conversation_id, run_id=None)
        with pytest.raises(errors.NotFound):
            await db.read(messages.all_of, T, "no-such-conversation")
        return [c.id for c in recent], one.id, log

    assert asyncio.run(scenario()) == ([conversation_id], conversation_id, [])


def test_a_marked_function_runs_on_a_reader_thread_with_its_arguments(db: Database) -> None:
    @growing
    def where(conn: Connection, prefix: str, *, suffix: str) -> str:
        return f"{prefix}{threading.current_thread().name}{suffix}"

    def here(conn: Connection) -> str:
        return threading.current_thread().name

    async def scenario() -> tuple[str, str]:
        return await db.read(where, "<", suffix=">"), await db.read(here)

    marked, unmarked = asyncio.run(scenario())
    assert marked.startswith("<hansa-db-read") and marked.endswith(">")
    if db.dialect == "sqlite":  # PostgreSQL reads every time on a thread of its pool
        assert unmarked == threading.main_thread().name
