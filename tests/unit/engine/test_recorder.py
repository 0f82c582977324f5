"""A batch's step returns its value through a ``Later``: readable once the batch has
committed, never before and never after a rollback (a real SQLite database)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import Connection

from factories import make_conversation
from hansa import errors
from hansa.engine.runtime.recorder import Batch, NotCommitted, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.runtime.setup import build_services
from hansa.models.function import FunctionModel
from hansa.settings import Settings
from hansa.store import conversations
from hansa.store.db import DEFAULT_TENANT_ID as T

pytestmark = pytest.mark.anyio


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/recorder.db")
    built = await build_services(settings, model=FunctionModel(lambda messages, info: "ok"))
    yield built
    await built.models.aclose()
    await built.db.dispose()


async def _conversation(services: Services) -> str:
    convo = make_conversation()
    await services.db.write(lambda conn: conversations.create(conn, convo))
    return convo.id


async def test_a_steps_value_is_readable_after_the_commit(services: Services) -> None:
    conversation_id = await _conversation(services)
    batch = Batch(conversation_id, None)

    def count(conn: Connection) -> str:
        return conversations.get(conn, T, conversation_id).id

    later = batch.then(count)
    with pytest.raises(NotCommitted):
        _ = later.value
    await Recorder(services, T, conversation_id).write(batch)
    assert later.value == conversation_id


async def test_a_step_added_by_a_step_returns_its_value_too(services: Services) -> None:
    conversation_id = await _conversation(services)
    batch = Batch(conversation_id, None)
    inner: list[object] = []

    def outer(conn: Connection) -> int:
        inner.append(batch.then(lambda c: 2))
        return 1

    later = batch.then(outer)
    await Recorder(services, T, conversation_id).write(batch)
    (second,) = inner
    assert later.value == 1
    assert second.value == 2  # type: ignore[attr-defined]


async def test_a_rolled_back_batch_has_no_value(services: Services) -> None:
    conversation_id = await _conversation(services)
    batch = Batch(conversation_id, None)

    def refuse(conn: Connection) -> int:
        raise errors.Conflict("not now")

    ran = batch.then(lambda conn: 1)
    batch.then(refuse)
    with pytest.raises(errors.Conflict):
        await Recorder(services, T, conversation_id).write(batch)
    with pytest.raises(NotCommitted):
        _ = ran.value
