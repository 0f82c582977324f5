"""The roles table names real routes, and says what each role may do."""

from __future__ import annotations

import pytest

from hansa.api import policy
from hansa.api.app import create_app
from hansa.domain.principal import Kind, Principal, Role
from hansa.settings import Settings


def _routes() -> set[tuple[str, str]]:
    spec = create_app(Settings(database_url="sqlite:///:memory:")).openapi()
    return {(m.upper(), path) for path, ops in spec["paths"].items() for m in ops}


def _as(role: Role) -> Principal:
    kind = Kind.AGENT if role is Role.AGENT else Kind.USER
    return Principal(tenant_id="t", kind=kind, id="x", role=role)


@pytest.mark.parametrize("table", ["ADMIN_ONLY", "AGENT_MAY"])
def test_every_entry_names_a_route_of_the_app(table: str) -> None:
    missing = getattr(policy, table) - _routes()
    assert not missing, f"{table} names routes the app does not have: {sorted(missing)}"


def test_admins_may_do_everything_members_all_but_administration() -> None:
    for method, path in _routes():
        assert policy.allows(_as(Role.ADMIN), method, path)
        assert policy.allows(_as(Role.MEMBER), method, path) == (
            (method, path) not in policy.ADMIN_ONLY
        )
    assert not policy.allows(_as(Role.MEMBER), "POST", "/api/keys")
    assert policy.allows(_as(Role.MEMBER), "POST", "/api/tasks/{task_id}/confirm")


def test_agents_are_closed_out_of_every_route_not_listed() -> None:
    agent = _as(Role.AGENT)
    assert policy.allows(agent, "POST", "/api/assistant/execute")
    assert policy.allows(agent, "HEAD", "/api/me"), "HEAD is a GET"
    for refused in [
        ("POST", "/api/runs/{run_id}/approve"),
        ("POST", "/api/tasks/{task_id}/confirm"),
        ("POST", "/api/keys"),
        ("GET", "/api/projects"),
        (policy.WEBSOCKET, "/api/conversations/{conversation_id}/ws"),
        ("GET", "/api/some-route-added-later"),
    ]:
        assert not policy.allows(agent, *refused), refused
