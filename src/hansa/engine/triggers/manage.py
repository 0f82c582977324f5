"""Managing a tenant's rules: create, list (with the config's, read-only), change, delete,
their last firings, and the dry run that evaluates without writing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import anyio.to_thread

from hansa import errors
from hansa.domain.base import new_id
from hansa.domain.rules import Firing, RecordedFiring, Rule, RuleSpec, Trigger
from hansa.engine.rules.evaluate import WordsCap, check, check_conditions, evaluate_off_loop
from hansa.engine.runtime.services import Services
from hansa.engine.triggers import jobs
from hansa.store import conversations, projects
from hansa.store import rules as rule_rows
from hansa.store import services as service_rows

EDITABLE = ("name", "priority", "enabled", "conditions", "actions", "stop", "schedule")
"""What ``PATCH /api/rules/{id}`` may change (the trigger and project stay)."""


def _check(services: Services, conn: Any, tenant_id: str, spec: RuleSpec) -> None:
    """Everything but the conditions' values (:func:`_check_conditions`, done before)."""
    agents = {a.id for a in services.agents.all(conn, tenant_id)}
    named = service_rows.names(conn, tenant_id)
    check(spec, services.registry, agents, conditions=False, services=named)


async def _check_conditions(services: Services, spec: RuleSpec) -> None:
    """The conditions' values, checked on a worker thread before the rule's transaction:
    compiling a rule's patterns (up to 50) must hold neither the event loop nor the writer."""
    settings = services.settings
    cap = WordsCap(settings.max_rule_words, settings.max_rule_words_chars)
    await anyio.to_thread.run_sync(check_conditions, spec.conditions, cap)


def _owned(conn: Any, tenant_id: str, rule: Rule) -> None:
    """The project and the timer's conversation a rule names are the tenant's (else 404)."""
    if rule.project_id is not None:
        projects.get(conn, tenant_id, rule.project_id)
    if rule.schedule is not None:
        conversations.get(conn, tenant_id, rule.schedule.conversation_id)


async def create(services: Services, tenant_id: str, spec: RuleSpec) -> Rule:
    """Check and store a new rule."""
    await _check_conditions(services, spec)
    now = services.clock()
    rule = Rule(
        **spec.model_dump(), id=new_id(), tenant_id=tenant_id, created_at=now, updated_at=now
    )

    def store(conn: Any) -> None:
        _check(services, conn, tenant_id, spec)
        limit = services.settings.max_rules_per_tenant
        if rule_rows.count(conn, tenant_id) >= limit:
            raise errors.InvalidInput(
                f"a tenant may have at most {limit} rules (HANSA_MAX_RULES_PER_TENANT); "
                "delete one first",
                details={"field": "rules", "limit": limit},
            )
        _owned(conn, tenant_id, rule)
        rule_rows.create(conn, rule)
        jobs.schedule_timer(conn, services, rule)

    await services.db.write(store)
    return rule


def _config_rule(services: Services, rule_id: str) -> Rule | None:
    return next((r for r in services.router.compiled if r.id == rule_id), None)


async def listed(services: Services, tenant_id: str) -> list[Rule]:
    """The tenant's rules, then the routing rules of the config (``source: config``)."""
    stored = await services.db.read(rule_rows.list_all, tenant_id)
    return [*stored, *services.router.compiled]


async def get(services: Services, tenant_id: str, rule_id: str) -> Rule:
    """One rule (a config rule by its id too)."""
    found = _config_rule(services, rule_id)
    if found is not None:
        return found
    return await services.db.read(rule_rows.get, tenant_id, rule_id)


async def last_fired(services: Services, tenant_id: str, rules: list[Rule]) -> dict[str, datetime]:
    """When each of ``rules`` last fired (config rules and rules that never fired: absent)."""
    stored = [r.id for r in rules if r.source == "api"]
    if not stored:
        return {}
    return await services.db.read(rule_rows.last_fired, tenant_id, stored)


async def firings(
    services: Services, tenant_id: str, rule_id: str, limit: int
) -> list[RecordedFiring]:
    """A rule's last firings, newest first (a config rule's are not kept: none)."""
    if _config_rule(services, rule_id) is not None:
        return []

    def go(conn: Any) -> list[RecordedFiring]:
        rule_rows.get(conn, tenant_id, rule_id)  # another tenant's rule: 404
        return rule_rows.firings(conn, tenant_id, rule_id, limit)

    return await services.db.read(go)


async def change(services: Services, tenant_id: str, rule_id: str, changes: dict[str, Any]) -> Rule:
    """Change a stored rule (a config rule is read-only: 409)."""
    if _config_rule(services, rule_id) is not None:
        raise errors.Conflict(f"rule {rule_id} comes from the config and is read-only")
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise errors.InvalidInput(
            f"these fields cannot be changed: {', '.join(unknown)}", details={"field": unknown[0]}
        )

    def merged(current: Rule) -> RuleSpec:
        return RuleSpec.model_validate(
            {**current.model_dump(include=set(RuleSpec.model_fields)), **changes}
        )

    if "conditions" in changes:  # new conditions: checked before the transaction
        now_stored = await services.db.read(rule_rows.get, tenant_id, rule_id)
        await _check_conditions(services, merged(now_stored))

    def go(conn: Any) -> Rule:
        current = rule_rows.get(conn, tenant_id, rule_id)
        spec = merged(current)
        _check(services, conn, tenant_id, spec)
        updated = current.model_copy(update=spec.model_dump())
        valid = Rule.model_validate(updated.model_dump())
        _owned(conn, tenant_id, valid)
        stored = rule_rows.replace(conn, valid, services.clock())
        jobs.schedule_timer(conn, services, stored)  # e.g. enabled again
        return stored

    return await services.db.write(go)


async def delete(services: Services, tenant_id: str, rule_id: str) -> None:
    """Remove a stored rule (a config rule is read-only: 409)."""
    if _config_rule(services, rule_id) is not None:
        raise errors.Conflict(f"rule {rule_id} comes from the config and is read-only")
    await services.db.write(lambda conn: rule_rows.delete(conn, tenant_id, rule_id))


async def dry_run(
    services: Services, tenant_id: str, trigger: Trigger, facts: dict[str, Any]
) -> list[Firing]:
    """What the tenant's rules would do, then (for messages) the routing rules, in the order
    a turn evaluates them (the rules stage, then the route stage); nothing is written."""
    stored = await services.db.read(rule_rows.list_all, tenant_id)
    rule_sets = [stored, services.router.compiled] if trigger == "message.received" else [stored]
    budget = services.settings.rule_evaluation_budget_ms / 1000
    return await evaluate_off_loop(rule_sets, trigger, facts, budget)
