"""API keys and agent tokens: stored as the sha256 of their secret, shown once.

A secret is ``hk_`` and 43 characters of ``secrets.token_urlsafe`` (256 bits), so a
plain hash is enough: there is nothing to brute-force, and lookups stay one indexed
read. The stored hash is compared again in constant time after the lookup.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.principal import KEY_PREFIX, ApiKey, Role
from hansa.store import direct, tables, tenants
from hansa.store.db import growing

_keys = tables.api_keys
_B = sa.bindparam
_HINT = len(KEY_PREFIX) + 6
_SHOWN = [c for c in _keys.c if c.name != "token_hash"]

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _keys.insert()
_BY_HASH = sa.select(*_SHOWN, _keys.c.token_hash).where(
    _keys.c.token_hash == _B("p_hash"), _keys.c.revoked_at.is_(None)
)
_GET = sa.select(*_SHOWN).where(_keys.c.id == _B("p_id"), _keys.c.tenant_id == _B("p_tenant"))
_GET_ANY = sa.select(*_SHOWN).where(_keys.c.id == _B("p_id"))
_OF_TENANT = (
    sa.select(*_SHOWN).where(_keys.c.tenant_id == _B("p_tenant")).order_by(_keys.c.created_at)
)
_EVERY = sa.select(*_SHOWN).order_by(_keys.c.tenant_id, _keys.c.created_at)
_ANY_ACTIVE = sa.select(_keys.c.id).where(_keys.c.revoked_at.is_(None)).limit(1)
_ANY_EVER = sa.select(_keys.c.id).limit(1)
_FORGET_REVOKED = _keys.delete().where(_keys.c.revoked_at.is_not(None))
_REVOKE = _keys.update().where(_keys.c.id == _B("p_id")).values(revoked_at=_B("p_now"))
_REVOKE_OF_AGENT = (
    _keys.update()
    .where(
        _keys.c.tenant_id == _B("p_tenant"),
        _keys.c.agent_id == _B("p_agent"),
        _keys.c.revoked_at.is_(None),
    )
    .values(revoked_at=_B("p_now"))
)


def new_secret() -> str:
    """A fresh secret: ``hk_`` and 256 random bits."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    """How a secret is stored: sha256, hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _key(row: Any) -> ApiKey:
    return ApiKey.model_validate({c.name: row[c.name] for c in _SHOWN})


def create(conn: Connection, key: ApiKey, secret: str) -> None:
    """Store ``key`` with the hash of ``secret``; the tenant is created if it is new."""
    tenants.ensure(conn, key.tenant_id, key.created_at)
    direct.execute(
        conn,
        _INSERT,
        {**key.model_dump(), "role": key.role.value, "token_hash": digest(secret)},
    )


def issue(
    conn: Connection,
    tenant_id: str,
    role: Role,
    name: str,
    now: datetime,
    *,
    key_id: str,
    agent_id: str | None = None,
) -> tuple[ApiKey, str]:
    """A new key and its secret (the only time the secret exists outside the caller)."""
    secret = new_secret()
    key = ApiKey(
        id=key_id,
        tenant_id=tenant_id,
        name=name,
        role=role,
        agent_id=agent_id,
        hint=secret[:_HINT] + "…",
        created_at=now,
    )
    create(conn, key, secret)
    return key, secret


def find(conn: Connection, secret: str) -> ApiKey | None:
    """The live key whose secret this is, or None (unknown, malformed or revoked)."""
    if not secret.startswith(KEY_PREFIX) or len(secret) > 200:
        return None
    hashed = digest(secret)
    row = direct.first(conn, _BY_HASH, {"p_hash": hashed})
    if row is None or not hmac.compare_digest(row["token_hash"], hashed):
        return None
    return _key(row)


def get(conn: Connection, tenant_id: str | None, key_id: str) -> ApiKey:
    """The tenant's key, or NotFound (also for another tenant's id; None: any tenant's)."""
    if tenant_id is None:
        row = direct.first(conn, _GET_ANY, {"p_id": key_id})
    else:
        row = direct.first(conn, _GET, {"p_id": key_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"key {key_id} not found")
    return _key(row)


@growing
def list_for(conn: Connection, tenant_id: str | None) -> list[ApiKey]:
    """The tenant's keys, revoked ones included, oldest first (None: every tenant's)."""
    if tenant_id is None:
        return [_key(r) for r in direct.rows(conn, _EVERY, {})]
    return [_key(r) for r in direct.rows(conn, _OF_TENANT, {"p_tenant": tenant_id})]


def revoke(conn: Connection, tenant_id: str | None, key_id: str, now: datetime) -> ApiKey:
    """Revoke the key at once (a second revoke keeps the first time); NotFound if not the
    tenant's (None: any tenant's, for the command line)."""
    key = get(conn, tenant_id, key_id)
    if key.revoked_at is not None:
        return key
    direct.execute(conn, _REVOKE, {"p_id": key_id, "p_now": now})
    return key.model_copy(update={"revoked_at": now})


def revoke_of_agent(conn: Connection, tenant_id: str, agent_id: str, now: datetime) -> None:
    """Revoke at once every live token of the tenant's agent ``agent_id``."""
    direct.execute(
        conn, _REVOKE_OF_AGENT, {"p_tenant": tenant_id, "p_agent": agent_id, "p_now": now}
    )


def any_active(conn: Connection) -> bool:
    """Whether any tenant has a key that is not revoked (``hansa serve`` beyond loopback
    starts only then)."""
    return direct.scalar(conn, _ANY_ACTIVE, {}) is not None


def ever_issued(conn: Connection) -> bool:
    """Whether any key was ever made, revoked ones included: local mode ends with the first
    for good. Revoking every key must not reopen the server to whoever reaches its
    loopback port (a reverse proxy on the same host forwards the internet there); only
    ``reset_local``, the operator's command, does."""
    return direct.scalar(conn, _ANY_EVER, {}) is not None


def reset_local(conn: Connection) -> int:
    """Forget every revoked key, so that a loopback server is in local mode again; how many
    were forgotten. Conflict while any key is live: local mode needs none at all."""
    if any_active(conn):
        raise errors.Conflict(
            "a key is still live: revoke every key first (hansa keys list, hansa keys revoke)"
        )
    return direct.execute(conn, _FORGET_REVOKED, {})
