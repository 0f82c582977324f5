import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hansa.domain import conversation
from hansa.domain.base import new_id, utcnow
from hansa.store import conversations
from hansa.store.db import DEFAULT_TENANT_ID, Database
from hansa.store.migrate import _upgrade
from pg import fresh_schema


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path}/store.db"
        else:
            url = stack.enter_context(fresh_schema())
        database = Database(url)
        database.write_now(_upgrade)
        yield database
        database.close()


@pytest.fixture
def new_conversation(db: Database) -> Callable[[], str]:
    def create() -> str:
        now = utcnow()
        convo = conversation.Conversation(
            id=new_id(), tenant_id=DEFAULT_TENANT_ID, project_id=None, title=None,
            state=conversation.State.IDLE, current_agent="chief", last_seq=0,
            created_at=now, updated_at=now, metadata={},
        )  # fmt: skip
        db.write_now(lambda conn: conversations.create(conn, convo))
        return convo.id

    return create
