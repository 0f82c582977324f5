from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hansa.domain import conversation
from hansa.domain.base import new_id, utcnow
from hansa.store import conversations
from hansa.store.db import DEFAULT_TENANT_ID, Database
from hansa.store.migrate import migrate


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite:///{tmp_path}/store.db")
    await migrate(database)
    yield database
    await database.dispose()


@pytest.fixture
def new_conversation(db: Database):  # noqa: ANN201 - a factory fixture
    return lambda: _new_conversation(db)


async def _new_conversation(db: Database) -> str:
    now = utcnow()
    convo = conversation.Conversation(
        id=new_id(), tenant_id=DEFAULT_TENANT_ID, project_id=None, title=None,
        state=conversation.State.IDLE, current_agent="chief", last_seq=0,
        created_at=now, updated_at=now, metadata={},
    )  # fmt: skip
    async with db.transaction() as conn:
        await conversations.create(conn, convo)
    return convo.id
