"""Agent Protocol thread ids (store/threads.py): a client's chosen id is unique within its
tenant, not across tenants (security review 2026-11-27, L2); a thread is found by that id or
by its conversation's own; migration 0019 gives threads opened before it their id. On
SQLite and PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from alembic import command

from factories import make_conversation
from hansa import errors
from hansa.domain.base import utcnow
from hansa.store import conversations, tables, tenants, threads
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database
from hansa.store.migrate import alembic_config

OTHER = "other-tenant"


def _open(db: Database, tenant: str = T, chosen: str | None = None) -> str:
    now = utcnow()
    convo = make_conversation(tenant_id=tenant, created_at=now, updated_at=now)

    def go(conn: sa.Connection) -> None:
        tenants.ensure(conn, tenant, now)
        conversations.create(conn, convo)
        if chosen is not None:
            threads.name(conn, tenant, convo.id, chosen)

    db.write_now(go)
    return convo.id


def test_a_chosen_id_is_unique_per_tenant_not_across_tenants(db: Database) -> None:
    chosen = str(uuid.uuid4())
    mine = _open(db, T, chosen)
    theirs = _open(db, OTHER, chosen)  # the same id, another tenant: no conflict
    assert mine != theirs
    assert db.write_now(lambda c: threads.conversation_of(c, T, chosen)) == mine
    assert db.write_now(lambda c: threads.conversation_of(c, OTHER, chosen)) == theirs
    with pytest.raises(errors.Conflict, match="already exists"):
        _open(db, T, chosen)  # the tenant's own id again (rolled back: one conversation)
    count = sa.select(sa.func.count()).select_from(tables.assistant_conversations)
    assert db.write_now(lambda c: c.execute(count).scalar()) == 2


def test_a_thread_is_found_by_its_chosen_id_or_its_own_and_shown_by_the_chosen(
    db: Database,
) -> None:
    chosen = str(uuid.uuid4())
    named, plain = _open(db, T, chosen), _open(db)
    assert db.write_now(lambda c: threads.conversation_of(c, T, named)) == named
    assert db.write_now(lambda c: threads.conversation_of(c, T, plain)) == plain
    assert db.write_now(lambda c: threads.thread_id_of(c, T, named)) == chosen
    assert db.write_now(lambda c: threads.thread_id_of(c, T, plain)) == plain


def test_another_tenants_ids_are_not_found(db: Database) -> None:
    chosen = str(uuid.uuid4())
    theirs = _open(db, OTHER, chosen)
    _open(db, T)
    for unknown in (chosen, theirs, str(uuid.uuid4())):
        with pytest.raises(errors.NotFound, match="thread .* not found"):
            db.write_now(lambda c, i=unknown: threads.conversation_of(c, T, i))
    with pytest.raises(errors.NotFound):
        db.write_now(lambda c: threads.thread_id_of(c, T, theirs))


def test_0019_gives_threads_opened_with_a_clients_id_that_id(bare: Database) -> None:
    bare.write_now(lambda conn: command.upgrade(alembic_config(conn), "0018"))
    chosen, issued = str(uuid.uuid4()), make_conversation().id
    conv = tables.assistant_conversations
    before = sa.Table(  # the table as 0018 left it: no client_id (nor 0020's user)
        conv.name,
        sa.MetaData(),
        *(sa.Column(c.name, c.type) for c in conv.c if c.name not in ("client_id", "user")),
    )

    def seed(conn: sa.Connection) -> None:
        now = utcnow()
        conn.execute(tables.tenants.insert().values(id=T, name="t", created_at=now))
        for cid in (chosen, issued):  # before 0019 a client's id was its conversation's
            convo = make_conversation(id=cid, created_at=now, updated_at=now)
            row = convo.model_dump(exclude={"user"})
            row |= {"state": row["state"].value, "active_flag": True}
            conn.execute(before.insert().values(**row))

    bare.write_now(seed)
    bare.write_now(lambda conn: command.upgrade(alembic_config(conn), "0019"))
    rows = bare.write_now(lambda c: dict(c.execute(sa.select(conv.c.id, conv.c.client_id)).all()))
    assert rows == {chosen: chosen, issued: None}
    assert bare.write_now(lambda c: threads.conversation_of(c, T, chosen)) == chosen
    assert bare.write_now(lambda c: threads.thread_id_of(c, T, chosen)) == chosen
    bare.write_now(lambda conn: command.downgrade(alembic_config(conn), "0018"))
    columns = bare.write_now(lambda c: [x["name"] for x in sa.inspect(c).get_columns(conv.name)])
    assert "client_id" not in columns
    bare.write_now(lambda conn: command.upgrade(alembic_config(conn), "head"))
