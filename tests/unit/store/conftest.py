import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from factories import make_conversation
from hansa.domain.base import utcnow
from hansa.store import conversations
from hansa.store.db import Database
from hansa.store.migrate import _upgrade
from pg import fresh_schema


@pytest.fixture
def db(bare: Database) -> Database:
    """A migrated database, SQLite and PostgreSQL."""
    bare.write_now(_upgrade)
    return bare


@pytest.fixture(params=["sqlite", "postgresql"])
def bare(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A database with no schema yet (the migrations' tests)."""
    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path}/migrations.db"
        else:
            url = stack.enter_context(fresh_schema())
        database = Database(url)
        yield database
        database.close()


@pytest.fixture
def pg_db() -> Iterator[Database]:
    """PostgreSQL only: for what only a shared database has (several hosts' clocks)."""
    with fresh_schema() as url:
        database = Database(url)
        database.write_now(_upgrade)
        yield database
        database.close()


@pytest.fixture
def new_conversation(db: Database) -> Callable[[], str]:
    def create() -> str:
        now = utcnow()
        convo = make_conversation(created_at=now, updated_at=now)
        db.write_now(lambda conn: conversations.create(conn, convo))
        return convo.id

    return create
