"""Rules of a tenant (seed 001), read by trigger on every evaluation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.rules import Rule
from hansa.store import direct, tables
from hansa.store.db import growing

_rules = tables.rules
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _rules.insert()
_MINE = (_rules.c.id == _B("p_id"), _rules.c.tenant_id == _B("p_tenant"))
_GET = sa.select(_rules).where(*_MINE)
_ALL = (
    sa.select(_rules)
    .where(_rules.c.tenant_id == _B("p_tenant"))
    .order_by(_rules.c.priority.desc(), _rules.c.id)
)
_FOR_TRIGGER = (
    sa.select(_rules)
    .where(
        _rules.c.tenant_id == _B("p_tenant"),
        _rules.c.trigger == _B("p_trigger"),
        _rules.c.enabled.is_(True),
    )
    .order_by(_rules.c.priority.desc(), _rules.c.id)
)
_DELETE = _rules.delete().where(*_MINE)


def _row(rule: Rule) -> dict[str, Any]:
    data = rule.model_dump(mode="json")
    return {
        "id": rule.id,
        "tenant_id": rule.tenant_id,
        "project_id": rule.project_id,
        "name": rule.name,
        "priority": rule.priority,
        "enabled": rule.enabled,
        "trigger": rule.trigger,
        "conditions": data["conditions"],
        "actions": data["actions"],
        "stop": rule.stop,
        "schedule": data["schedule"],
        "version": rule.version,
        "created_at": rule.created_at,
        "updated_at": rule.updated_at,
    }


def _rule(row: Any) -> Rule:
    return Rule.model_validate(dict(row))


def create(conn: Connection, rule: Rule) -> None:
    """Insert a rule."""
    direct.execute(conn, _INSERT, _row(rule))


def get(conn: Connection, tenant_id: str, rule_id: str) -> Rule:
    """The rule, or NotFound (also for another tenant's id)."""
    row = direct.first(conn, _GET, {"p_id": rule_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"rule {rule_id} not found")
    return _rule(row)


@growing
def list_all(conn: Connection, tenant_id: str) -> list[Rule]:
    """The tenant's rules, highest priority first."""
    return [_rule(r) for r in direct.rows(conn, _ALL, {"p_tenant": tenant_id})]


def for_trigger(
    conn: Connection, tenant_id: str, trigger: str, project_id: str | None
) -> list[Rule]:
    """The enabled rules of ``trigger``: the tenant's, and those of ``project_id``."""
    found = direct.rows(conn, _FOR_TRIGGER, {"p_tenant": tenant_id, "p_trigger": trigger})
    return [r for r in map(_rule, found) if r.project_id is None or r.project_id == project_id]


def replace(conn: Connection, rule: Rule, now: datetime) -> Rule:
    """Store a new version of ``rule`` (the caller has read and changed it)."""
    changed = rule.model_copy(update={"version": rule.version + 1, "updated_at": now})
    values = _row(changed)
    del values["id"], values["tenant_id"], values["created_at"]
    conn.execute(
        _rules.update().where(_rules.c.id == rule.id, _rules.c.tenant_id == rule.tenant_id),
        values,
    )
    return changed


def delete(conn: Connection, tenant_id: str, rule_id: str) -> None:
    """Remove the rule, or NotFound."""
    get(conn, tenant_id, rule_id)
    direct.execute(conn, _DELETE, {"p_id": rule_id, "p_tenant": tenant_id})
