"""Rules (seed 001): manage a tenant's rules, read their last firings, and try them without
effect."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import Field, TypeAdapter

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


_WHEN = TypeAdapter(datetime | None)


def _out(rule: Rule, last_fired: dict[str, datetime]) -> dict[str, Any]:
    out: dict[str, Any] = rule.model_dump(mode="json", by_alias=True)
    out["lastFiredAt"] = _WHEN.dump_python(last_fired.get(rule.id), mode="json")
    return out


async def _described(services: Services, tenant: str, rules: list[Rule]) -> list[dict[str, Any]]:
    """Rules as JSON with ``lastFiredAt`` (null: never fired, or a config rule)."""
    last = await manage.last_fired(services, tenant, rules)
    return [_out(r, last) for r in rules]


@router.post("", status_code=201, response_model=None, responses=answers(RuleOut, status=201))
async def create_rule(body: RuleSpec, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Store a rule; 422 says what is wrong with an invalid one."""
    return _out(await manage.create(services, tenant, body), {})


@router.get("", response_model=None, responses=answers(list[RuleOut]))
async def list_rules(services: ServicesDep, tenant: TenantDep) -> list[dict[str, Any]]:
    """The tenant's rules, then the config's routing rules (``source: config``), each with
    ``lastFiredAt``."""
    return await _described(services, tenant, await manage.listed(services, tenant))


@router.post("/test", response_model=None, responses=answers(RuleTestResult))
async def test_rules(body: RuleTest, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Evaluate the rules of ``trigger`` against ``facts``; nothing is written."""
    firings = await manage.dry_run(services, tenant, body.trigger, body.facts)
    return {"firings": [f.model_dump(mode="json", by_alias=True) for f in firings]}


@router.get("/{rule_id}", response_model=None, responses=answers(RuleOut))
async def get_rule(rule_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """One rule, with ``lastFiredAt``."""
    (found,) = await _described(services, tenant, [await manage.get(services, tenant, rule_id)])
    return found


@router.get(
    "/{rule_id}/firings",
    operation_id="listRuleFirings",
    response_model=None,
    responses=answers(list[RecordedFiring]),
)
async def rule_firings(
    rule_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    limit: Annotated[int, Query(ge=1, le=rule_rows.FIRINGS_KEPT)] = rule_rows.FIRINGS_KEPT,
) -> list[dict[str, Any]]:
    """The rule's last firings (the last 20 are kept), newest first: when, which trigger, in
    which conversation, with which actions."""
    found = await manage.firings(services, tenant, rule_id, limit)
    return [f.model_dump(mode="json", by_alias=True) for f in found]


@router.patch(
    "/{rule_id}", operation_id="updateRule", response_model=None, responses=answers(RuleOut, 409)
)
async def patch_rule(
    rule_id: str, body: dict[str, Any], services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
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
