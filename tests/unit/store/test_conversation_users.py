"""A conversation's user (store/conversations.py, migration 0020): stored with the
conversation, changed and cleared with ``set_user``, only in its own tenant; 0020 leaves the
conversations it finds without one and its downgrade drops the column. On SQLite and
PostgreSQL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from factories import make_conversation
from hansa import errors
from hansa.domain.base import utcnow
from hansa.store import conversations, tables, tenants
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database
from hansa.store.migrate import alembic_config

VIP = {"id": "u-1", "displayName": "Ada", "email": "ada@vip.example", "tier": "gold"}


def _open(db: Database, **fields: object) -> str:
    now = utcnow()
    convo = make_conversation(created_at=now, updated_at=now, **fields)

    def go(conn: sa.Connection) -> None:
        tenants.ensure(conn, T, now)
        conversations.create(conn, convo)

    db.write_now(go)
    return convo.id


def _user(db: Database, conversation_id: str) -> object:
    return db.write_now(lambda c: conversations.get(c, T, conversation_id).user)


def test_a_conversation_keeps_its_user_and_changes_it(db: Database) -> None:
    with_user, without = _open(db, user=VIP), _open(db)
    assert _user(db, with_user) == VIP
    assert _user(db, without) is None
    gold = {**VIP, "tier": "platinum", "seats": 12, "tags": ["a", "b"]}
    db.write_now(lambda c: conversations.set_user(c, T, without, gold, utcnow()))
    assert _user(db, without) == gold
    db.write_now(lambda c: conversations.set_user(c, T, with_user, None, utcnow()))
    assert _user(db, with_user) is None  # SQL NULL, not JSON null
    nulls = db.write_now(
        lambda c: c.execute(
            sa.select(sa.func.count()).where(tables.assistant_conversations.c.user.is_(None))
        ).scalar_one()
    )
    assert nulls == 1


def test_another_tenants_conversation_is_not_found(db: Database) -> None:
    mine = _open(db)
    with pytest.raises(errors.NotFound):
        db.write_now(lambda c: conversations.set_user(c, "other", mine, VIP, utcnow()))
    assert _user(db, mine) is None


def test_0020_adds_the_user_column_and_its_downgrade_drops_it(bare: Database) -> None:
    bare.write_now(lambda conn: command.upgrade(alembic_config(conn), "0019"))
    conv = tables.assistant_conversations
    before = sa.Table(  # the table as 0019 left it: no user
        conv.name, sa.MetaData(), *(sa.Column(c.name, c.type) for c in conv.c if c.name != "user")
    )
    old = make_conversation()

    def seed(conn: sa.Connection) -> None:
        now = utcnow()
        conn.execute(tables.tenants.insert().values(id=T, name="t", created_at=now))
        row = old.model_dump(exclude={"user"}) | {"state": "idle", "active_flag": True}
        conn.execute(before.insert().values(**row))

    bare.write_now(seed)
    bare.write_now(lambda conn: command.upgrade(alembic_config(conn), "0020"))
    assert _user(bare, old.id) is None
    bare.write_now(lambda c: conversations.set_user(c, T, old.id, VIP, utcnow()))
    assert _user(bare, old.id) == VIP
    bare.write_now(lambda conn: command.downgrade(alembic_config(conn), "0019"))
    columns = bare.write_now(lambda c: [x["name"] for x in sa.inspect(c).get_columns(conv.name)])
    assert "user" not in columns
    bare.write_now(lambda conn: command.upgrade(alembic_config(conn), "head"))
