"""API keys at rest: only a hash is stored, a key finds its tenant and role, a revoked or
foreign key finds nothing, and the first key creates its tenant (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from hansa import errors
from hansa.domain.agent import AgentDefinition, Category
from hansa.domain.base import new_id, utcnow
from hansa.domain.principal import Kind, Role
from hansa.store import keys, principals, tables, tenants
from hansa.store.db import DEFAULT_TENANT_ID, Database


def _issue(db: Database, tenant: str, role: Role = Role.ADMIN, **kw: object) -> tuple[str, str]:
    key, secret = db.write_now(
        lambda conn: keys.issue(conn, tenant, role, "ci", utcnow(), key_id=new_id(), **kw)
    )
    return key.id, secret


def test_a_secret_is_stored_only_as_its_hash(db: Database) -> None:
    key_id, secret = _issue(db, DEFAULT_TENANT_ID)
    assert secret.startswith("hk_") and len(secret) >= 40
    stored = db.write_now(
        lambda conn: (
            conn.execute(sa.select(tables.api_keys).where(tables.api_keys.c.id == key_id))
            .mappings()
            .one()
        )
    )
    assert secret not in {str(v) for v in stored.values()}
    assert stored["token_hash"] == keys.digest(secret)
    assert stored["hint"] == secret[:9] + "…"


def test_a_secret_finds_its_key_and_principal(db: Database) -> None:
    key_id, secret = _issue(db, DEFAULT_TENANT_ID, Role.MEMBER)
    found = db.write_now(lambda conn: keys.find(conn, secret))
    assert found is not None and found.id == key_id and found.role is Role.MEMBER
    principal = found.principal()
    assert (principal.tenant_id, principal.kind, principal.id) == (
        DEFAULT_TENANT_ID,
        Kind.USER,
        key_id,
    )
    for wrong in (secret[:-1] + ("A" if secret[-1] != "A" else "B"), "hk_", "", "Bearer " + secret):
        assert db.write_now(lambda conn, w=wrong: keys.find(conn, w)) is None


def test_the_first_key_of_a_new_tenant_creates_the_tenant(db: Database) -> None:
    assert not db.write_now(lambda conn: tenants.exists(conn, "acme"))
    _issue(db, "acme")
    _issue(db, "acme")  # the second key finds the tenant there
    assert db.write_now(lambda conn: tenants.exists(conn, "acme"))


def test_revoked_keys_find_nothing_and_local_mode_follows_live_keys(db: Database) -> None:
    assert not db.write_now(keys.any_active)
    key_id, secret = _issue(db, "acme")
    assert db.write_now(keys.any_active)
    revoked = db.write_now(lambda conn: keys.revoke(conn, "acme", key_id, utcnow()))
    again = db.write_now(lambda conn: keys.revoke(conn, "acme", key_id, utcnow()))
    assert revoked.revoked_at is not None and again.revoked_at == revoked.revoked_at
    assert db.write_now(lambda conn: keys.find(conn, secret)) is None
    assert not db.write_now(keys.any_active)
    listed = db.write_now(lambda conn: keys.list_for(conn, "acme"))
    assert [k.id for k in listed] == [key_id], "a revoked key stays listed"


def test_another_tenants_key_is_not_found(db: Database) -> None:
    key_id, _ = _issue(db, "acme")
    _issue(db, "globex")
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: keys.get(conn, "globex", key_id))
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: keys.revoke(conn, "globex", key_id, utcnow()))
    assert [k.id for k in db.write_now(lambda conn: keys.list_for(conn, "globex"))] != [key_id]
    assert db.write_now(lambda conn: keys.get(conn, None, key_id)).tenant_id == "acme"


def test_an_agent_token_names_its_agent(db: Database) -> None:
    agent = AgentDefinition(
        id="billingBot",
        display_name="Billing Bot",
        role="Billing",
        role_summary="Answers billing questions.",
        category=Category.UTILITY,
        capabilities=("tickets",),
    )
    db.write_now(lambda conn: tenants.ensure(conn, "acme", utcnow()))
    db.write_now(lambda conn: principals.register(conn, "acme", agent))
    with pytest.raises(errors.Conflict):
        db.write_now(lambda conn: principals.register(conn, "acme", agent))
    assert db.write_now(lambda conn: principals.find(conn, DEFAULT_TENANT_ID, "billingBot")) is None
    _, secret = _issue(db, "acme", Role.AGENT, agent_id="billingBot")
    found = db.write_now(lambda conn: keys.find(conn, secret))
    assert found is not None
    principal = found.principal()
    assert (principal.kind, principal.id, principal.role) == (Kind.AGENT, "billingBot", Role.AGENT)
    assert principal.may_act_as("billingBot") and not principal.may_act_as("chief")
    stored = db.write_now(lambda conn: principals.get(conn, "acme", "billingBot"))
    assert stored.capabilities == ("tickets",)
