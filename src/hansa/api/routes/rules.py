"""Rules (seed 001): manage a tenant's rules and try them without effect."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import Field

from hansa.api.deps import ServicesDep, TenantDep
from hansa.domain.base import Wire
from hansa.domain.rules import RuleSpec, Trigger
from hansa.engine.triggers import manage

router = APIRouter(prefix="/api/rules", tags=["rules"])


class RuleTest(Wire):
    """``POST /api/rules/test``: a trigger and the facts to evaluate it with."""

    trigger: Trigger
    facts: dict[str, Any] = Field(default_factory=dict)


def _out(rule: Any) -> dict[str, Any]:
    out: dict[str, Any] = rule.model_dump(mode="json", by_alias=True)
    return out


@router.post("", status_code=201)
async def create_rule(body: RuleSpec, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Store a rule; 422 says what is wrong with an invalid one."""
    return _out(await manage.create(services, tenant, body))


@router.get("")
async def list_rules(services: ServicesDep, tenant: TenantDep) -> list[dict[str, Any]]:
    """The tenant's rules, then the config's routing rules (``source: config``)."""
    return [_out(r) for r in await manage.listed(services, tenant)]


@router.post("/test")
async def test_rules(body: RuleTest, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Evaluate the rules of ``trigger`` against ``facts``; nothing is written."""
    firings = await manage.dry_run(services, tenant, body.trigger, body.facts)
    return {"firings": [f.model_dump(mode="json", by_alias=True) for f in firings]}


@router.get("/{rule_id}")
async def get_rule(rule_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """One rule."""
    return _out(await manage.get(services, tenant, rule_id))


@router.patch("/{rule_id}")
async def patch_rule(
    rule_id: str, body: dict[str, Any], services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
    """Change a rule: ``enabled``, ``name``, ``priority``, ``conditions``, ``actions``,
    ``stop``, ``schedule`` (camelCase or snake_case keys)."""
    changes = {_snake(k): v for k, v in body.items()}
    return _out(await manage.change(services, tenant, rule_id, changes))


@router.delete("/{rule_id}", status_code=204)
async def delete_rule(rule_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Remove a rule."""
    await manage.delete(services, tenant, rule_id)
    return Response(status_code=204)


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
