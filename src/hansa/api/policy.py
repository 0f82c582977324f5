"""What each role may do, route by route (docs/security.md, "Roles").

- ``admin`` may use every route of its tenant.
- ``member`` may use every route but those in ``ADMIN_ONLY``: keys, agents and their
  tokens, and the projects whose settings the law of allowed scope reads. (Claims, which
  agents make as themselves and admins for them, ``api/routes/claims.py`` refuses itself.)
- ``agent`` may use only the routes in ``AGENT_MAY``: read its tenant's conversations,
  post messages and claims as itself, run tasks as itself. It may not approve, confirm,
  cancel or change anything else: a person does that. A route added later is closed to
  agents until it is listed here.

Checked by one app-wide dependency, so a route needs no code of its own for it;
``tests/unit/api/test_policy.py`` checks every entry names a real route.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection

from hansa.domain.principal import Forbidden, Principal, Role

WEBSOCKET = "WEBSOCKET"
"""The method name a WebSocket route goes by here."""

Route = tuple[str, str]
"""A method and a path template, as the app declares it."""

ADMIN_ONLY: frozenset[Route] = frozenset(
    {
        ("POST", "/api/keys"),
        ("GET", "/api/keys"),
        ("DELETE", "/api/keys/{key_id}"),
        ("POST", "/api/agents"),
        ("PATCH", "/api/agents/{agent_id}"),
        ("DELETE", "/api/agents/{agent_id}"),
        ("POST", "/api/agents/{agent_id}/tokens"),
        ("POST", "/api/projects"),
        ("PATCH", "/api/projects/{project_id}"),
    }
)

AGENT_MAY: frozenset[Route] = frozenset(
    {
        ("GET", "/api/me"),
        ("GET", "/api/tenant"),
        ("GET", "/api/agents"),
        ("GET", "/api/task-types"),
        ("GET", "/api/conversations"),
        ("GET", "/api/conversations/{conversation_id}"),
        ("GET", "/api/conversations/{conversation_id}/messages"),
        ("GET", "/api/conversations/{conversation_id}/timeline"),
        ("GET", "/api/conversations/{conversation_id}/events"),
        ("POST", "/api/conversations/{conversation_id}/messages"),
        ("POST", "/api/conversations/{conversation_id}/claims"),
        ("POST", "/api/assistant/execute"),
        ("GET", "/api/runs/{run_id}"),
        ("GET", "/api/tasks/{task_id}"),
    }
)


def allows(principal: Principal, method: str, path: str) -> bool:
    """Whether the principal's role may call ``method path`` (a route's template)."""
    route = ("GET" if method == "HEAD" else method, path)
    match principal.role:
        case Role.ADMIN:
            return True
        case Role.MEMBER:
            return route not in ADMIN_ONLY
        case Role.AGENT:
            return route in AGENT_MAY


async def authorize(conn: HTTPConnection) -> None:
    """The app-wide dependency: refuse (403 ``forbidden``) what the role may not do."""
    principal: Principal | None = conn.scope.get("state", {}).get("principal")
    route = conn.scope.get("route")
    if principal is None or route is None:  # a public route: signing in, say
        return
    websocket = conn.scope["type"] == "websocket"
    method = WEBSOCKET if websocket else conn.scope["method"]
    if allows(principal, method, route.path):
        return
    message = f"the {principal.role.value} role may not use {method} {route.path}"
    raise Forbidden(message, details={"role": principal.role.value})  # a WebSocket: api/errors
