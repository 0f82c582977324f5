"""Rules of a tenant (seed 001), read by trigger on every evaluation, and the last firings
of each rule."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.rules import Firing, RecordedFiring, Rule, Trigger
from hansa.store import direct, tables
from hansa.store.db import growing

_rules = tables.rules
_firings = tables.rule_firings
_B = sa.bindparam

FIRINGS_KEPT = 20
"""How many firings are kept per rule: recording one more deletes the oldest."""

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _rules.insert()
_MINE = (_rules.c.id == _B("p_id"), direct.only_checks(_rules.c.tenant_id) == _B("p_tenant"))
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

_RECORD = _firings.insert()
_OF_RULE = (_firings.c.rule_id == _B("p_rule"), _firings.c.tenant_id == _B("p_tenant"))
# The (rule_id, id) index finds the newest firing past the kept ones; it and all older go.
_OLDEST_KEPT = (
    sa.select(_firings.c.id)
    .where(_firings.c.rule_id == _B("p_rule"))
    .order_by(_firings.c.id.desc())
    .limit(1)
    .offset(FIRINGS_KEPT)
    .scalar_subquery()
)
_PRUNE = _firings.delete().where(_firings.c.rule_id == _B("p_rule"), _firings.c.id <= _OLDEST_KEPT)
_FIRINGS = (
    sa.select(_firings)
    .where(*_OF_RULE)
    .order_by(_firings.c.id.desc())
    .limit(_B("p_limit", type_=sa.Integer))
)
_FORGET = _firings.delete().where(*_OF_RULE)


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


def count(conn: Connection, tenant_id: str) -> int:
    """How many rules the tenant has (``HANSA_MAX_RULES_PER_TENANT`` caps it)."""
    query = sa.select(sa.func.count()).where(_rules.c.tenant_id == tenant_id)
    return int(conn.execute(query).scalar_one())


@growing
def list_all(conn: Connection, tenant_id: str) -> list[Rule]:
    """The tenant's rules, highest priority first."""
    return [_rule(r) for r in direct.rows(conn, _ALL, {"p_tenant": tenant_id})]


_ANY_FOR_TRIGGER = (
    sa.select(_rules.c.id)
    .where(
        _rules.c.tenant_id == _B("p_tenant"),
        _rules.c.trigger == _B("p_trigger"),
        _rules.c.enabled.is_(True),
        sa.or_(_rules.c.project_id.is_(None), _rules.c.project_id == _B("p_project")),
    )
    .limit(1)
)


def any_for_trigger(conn: Connection, tenant_id: str, trigger: str, project_id: str | None) -> bool:
    """Whether :func:`for_trigger` has any rule (one row looked at, none parsed)."""
    params = {"p_tenant": tenant_id, "p_trigger": trigger, "p_project": project_id}
    return direct.first(conn, _ANY_FOR_TRIGGER, params) is not None


@growing
def for_trigger(
    conn: Connection, tenant_id: str, trigger: str, project_id: str | None
) -> list[Rule]:
    """The enabled rules of ``trigger``: the tenant's, and those of ``project_id`` (up to
    ``HANSA_MAX_RULES_PER_TENANT`` of 50 conditions each: 200 took ~35 ms to read, so on a
    reader thread)."""
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
    """Remove the rule and its firings, or NotFound."""
    get(conn, tenant_id, rule_id)
    direct.execute(conn, _FORGET, {"p_rule": rule_id, "p_tenant": tenant_id})
    direct.execute(conn, _DELETE, {"p_id": rule_id, "p_tenant": tenant_id})


def record_firings(
    conn: Connection,
    tenant_id: str,
    trigger: Trigger,
    conversation_id: str | None,
    firings: Sequence[Firing],
    now: datetime,
) -> None:
    """Keep a row for each matched firing of one evaluation, and only the last
    ``FIRINGS_KEPT`` of each rule (rules that did not match are not recorded)."""
    matched = [f for f in firings if f.matched]
    if not matched:
        return
    rows = [
        {
            "tenant_id": tenant_id,
            "rule_id": f.rule_id,
            "trigger": trigger,
            "conversation_id": conversation_id,
            "actions": [a.model_dump(mode="json") for a in f.actions],
            "created_at": now,
        }
        for f in matched
    ]
    direct.execute_many(conn, _RECORD, rows)
    for rule_id in dict.fromkeys(f.rule_id for f in matched):
        direct.execute(conn, _PRUNE, {"p_rule": rule_id})


def firings(
    conn: Connection, tenant_id: str, rule_id: str, limit: int = FIRINGS_KEPT
) -> list[RecordedFiring]:
    """The rule's last firings, newest first (at most ``limit``)."""
    params = {"p_rule": rule_id, "p_tenant": tenant_id, "p_limit": limit}
    return [RecordedFiring.model_validate(dict(r)) for r in direct.rows(conn, _FIRINGS, params)]


@growing
def last_fired(conn: Connection, tenant_id: str, rule_ids: Sequence[str]) -> dict[str, datetime]:
    """When each of ``rule_ids`` last fired (rules that never fired are left out)."""
    if not rule_ids:
        return {}
    newest = sa.func.max(_firings.c.created_at)
    query = (
        sa.select(_firings.c.rule_id, newest)
        .where(_firings.c.tenant_id == tenant_id, _firings.c.rule_id.in_(list(rule_ids)))
        .group_by(_firings.c.rule_id)
    )
    return {rule_id: at for rule_id, at in conn.execute(query)}
