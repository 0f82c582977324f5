"""Projects: the context agents work in (seed 000 §7).

Connector secrets in ``config`` are write-only: answers show them as ``***``, a PATCH that
sends ``***`` (or leaves one out) keeps the stored one, and they are sealed at rest when
``HANSA_SECRET_KEY`` is set. A site address (``config.wordpress.baseUrl``…) must be a plain
``http(s)://host[/path]`` (422 otherwise). ``config.llm.model`` may name a file-backed
model (``local:``, ``scripted:``) only in local mode, where the caller is the operator, and
``config.mcpServers`` only the stdio servers the operator configured in ``hansa.toml``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hansa import errors
from hansa.api.deps import PrincipalDep, ServicesDep, TenantDep
from hansa.api.models.agents import ProjectOut
from hansa.api.schemas import ProjectCreate, ProjectPatch
from hansa.domain.base import new_id
from hansa.domain.principal import Kind, Principal
from hansa.domain.project import Project
from hansa.engine import runs
from hansa.engine.runtime.services import Services
from hansa.store import projects, secrets
from hansa.tasks.connectors import mcp_config

router = APIRouter(prefix="/api/projects", tags=["projects"])


def _check_model(services: Services, principal: Principal, config: dict[str, Any]) -> None:
    """A tenant's ``config.llm.model`` names a provider's model (``openai:…``,
    ``anthropic:…``) or one the operator configured: a spec that names a file (``local:``,
    ``scripted:``) is the operator's, so only local mode (the operator) may give one."""
    llm = config.get("llm")
    spec = llm.get("model") if isinstance(llm, dict) else None
    if not isinstance(spec, str) or principal.kind is Kind.LOCAL:
        return
    if not services.may_name_model(spec):
        raise errors.InvalidInput(
            f"config.llm.model {spec!r} is not one this server offers: name an openai: or "
            "anthropic: model, or one the operator configured",
            details={"field": "config.llm.model"},
        )


def _check_mcp(services: Services, config: dict[str, Any]) -> None:
    """A stdio MCP server starts a process on this machine, as Hansa's user: a project may
    only name one the operator configured in ``hansa.toml`` (its command never comes from
    a request, local mode's included: ``tasks/connectors/mcp_config.py``)."""
    unknown = mcp_config.unknown_stdio(config, services.stdio_servers)
    if unknown is not None:
        offered = ", ".join(repr(n) for n in services.stdio_servers) or "none"
        raise errors.InvalidInput(
            f"config.mcpServers names the stdio server {unknown!r}, which this server does not "
            f"offer (it offers {offered}; the operator configures them in hansa.toml)",
            details={"field": "config.mcpServers"},
        )


@router.post("", status_code=201)
async def create_project(
    body: ProjectCreate, services: ServicesDep, tenant: TenantDep, principal: PrincipalDep
) -> ProjectOut:
    """Create a project."""
    runs.check_config(body.config)
    _check_model(services, principal, body.config)
    _check_mcp(services, body.config)
    proj = Project(
        id=new_id(),
        tenant_id=tenant,
        name=body.name,
        domain=body.domain,
        cms_platform=body.cms_platform,
        allowed_task_types=None
        if body.allowed_task_types is None
        else tuple(body.allowed_task_types),
        config=body.config,
        created_at=services.clock(),
    )
    box = secrets.box(services.settings.secret_keys())
    await services.db.write(lambda conn: projects.create(conn, proj, box))
    services.context_cache.invalidate(tenant, proj.id)  # the global pack lists projects
    return ProjectOut.of(proj)


@router.get("")
async def list_projects(services: ServicesDep, tenant: TenantDep) -> list[ProjectOut]:
    """The tenant's projects."""
    found = await services.db.read(projects.list_all, tenant)
    return [ProjectOut.of(p) for p in found]


@router.get("/{project_id}")
async def get_project(project_id: str, services: ServicesDep, tenant: TenantDep) -> ProjectOut:
    """One project."""
    found = await services.db.read(lambda conn: projects.get(conn, tenant, project_id))
    return ProjectOut.of(found)


@router.patch(
    "/{project_id}",
    operation_id="updateProject",
)
async def patch_project(
    project_id: str,
    body: ProjectPatch,
    services: ServicesDep,
    tenant: TenantDep,
    principal: PrincipalDep,
) -> ProjectOut:
    """Change the fields given."""
    changes = body.model_dump(exclude_unset=True)
    if changes.get("config") is not None:
        runs.check_config(changes["config"])
        _check_model(services, principal, changes["config"])
        _check_mcp(services, changes["config"])
    now = services.clock()
    box = secrets.box(services.settings.secret_keys())
    proj = await services.db.write(
        lambda conn: projects.update(conn, tenant, project_id, changes, now, box)
    )
    services.context_cache.invalidate(tenant, project_id)
    return ProjectOut.of(proj)
