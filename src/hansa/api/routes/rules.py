"""Rules (seed 001): manage a tenant's rules, read their last firings, and try them without
effect."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import Field

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.automation import RecordedFiring, RuleOut, RuleTestResult
from hansa.api.models.base import answers
from hansa.domain.base import Wire
from hansa.domain.rules import Rule, RuleSpec, Trigger
from hansa.engine.runtime.services import Services
from hansa.engine.triggers import manage
from hansa.store import rules as rule_rows

router = APIRouter(prefix="/api/rules", tags=["rules"])


class RuleTest(Wire):
    """``POST /api/rules/test``: a trigger and the facts to evaluate it with."""

    trigger: Trigger
    facts: dict[str, Any] = Field(default_factory=dict)


def _out(rule: Rule, last_fired: dict[str, datetime]) -> RuleOut:
    # the rule is valid as it is: only its last firing is added
    return RuleOut.model_construct(**dict(rule), last_fired_at=last_fired.get(rule.id))


async def _described(services: Services, tenant: str, rules: list[Rule]) -> list[RuleOut]:
    """Rules with ``lastFiredAt`` (null: never fired, or a config rule)."""
    last = await manage.last_fired(services, tenant, rules)
    return [_out(r, last) for r in rules]


@router.post("", status_code=201)
async def create_rule(body: RuleSpec, services: ServicesDep, tenant: TenantDep) -> RuleOut:
    """Store a rule; 422 says what is wrong with an invalid one."""
    return _out(await manage.create(services, tenant, body), {})


@router.get("")
async def list_rules(services: ServicesDep, tenant: TenantDep) -> list[RuleOut]:
    """The tenant's rules, then the config's routing rules (``source: config``), each with
    ``lastFiredAt``."""
    return await _described(services, tenant, await manage.listed(services, tenant))


@router.post("/test")
async def test_rules(body: RuleTest, services: ServicesDep, tenant: TenantDep) -> RuleTestResult:
    """Evaluate the rules of ``trigger`` against ``facts``; nothing is written."""
    firings = await manage.dry_run(services, tenant, body.trigger, body.facts)
    return RuleTestResult(firings=firings)


@router.get("/{rule_id}")
async def get_rule(rule_id: str, services: ServicesDep, tenant: TenantDep) -> RuleOut:
    """One rule, with ``lastFiredAt``."""
    (found,) = await _described(services, tenant, [await manage.get(services, tenant, rule_id)])
    return found


@router.get(
    "/{rule_id}/firings",
    operation_id="listRuleFirings",
)
async def rule_firings(
    rule_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    limit: Annotated[int, Query(ge=1, le=rule_rows.FIRINGS_KEPT)] = rule_rows.FIRINGS_KEPT,
) -> list[RecordedFiring]:
    """The rule's last firings (the last 20 are kept), newest first: when, which trigger, in
    which conversation, with which actions."""
    found = await manage.firings(services, tenant, rule_id, limit)
    return found


@router.patch("/{rule_id}", operation_id="updateRule", responses=answers(None, 409))
async def patch_rule(
    rule_id: str, body: dict[str, Any], services: ServicesDep, tenant: TenantDep
) -> RuleOut:
    """Change a rule: ``enabled``, ``name``, ``priority``, ``conditions``, ``actions``,
    ``stop``, ``schedule`` (camelCase or snake_case keys)."""
    changes = {_snake(k): v for k, v in body.items()}
    changed = await manage.change(services, tenant, rule_id, changes)
    (found,) = await _described(services, tenant, [changed])
    return found


@router.delete("/{rule_id}", status_code=204, responses=answers(None, 409))
async def delete_rule(rule_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Remove a rule."""
    await manage.delete(services, tenant, rule_id)
    return Response(status_code=204)


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
