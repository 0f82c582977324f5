"""Choose a task's connectors from its project's configuration, and close them after it."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Mapping
from typing import Any

from hansa import errors
from hansa.domain.project import ProjectContext
from hansa.domain.service import Service
from hansa.engine.runs.store_workspace import StoreWorkspace
from hansa.engine.runtime.services import Services
from hansa.store import secrets
from hansa.store import services as service_rows
from hansa.tasks.connectors import mcp_config, targets
from hansa.tasks.connectors.mcp_client import McpServers
from hansa.tasks.connectors.outbound import OutboundPolicy
from hansa.tasks.connectors.woocommerce import WooCommerceShop
from hansa.tasks.connectors.wordpress import WordPressCms, site_problem
from hansa.tasks.connectors.workspace_cms import PAGES, PRODUCTS, WorkspaceCms, WorkspaceShop

SITE_SECTIONS = ("wordpress", "woocommerce")
"""The project config sections that name a site (``baseUrl``) and its credentials."""


def outbound_policy(services: Services) -> OutboundPolicy:
    """The outbound guard's policy from settings (``HANSA_OUTBOUND_ALLOW``,
    ``HANSA_OUTBOUND_MAX_RESPONSE_BYTES``)."""
    settings = services.settings
    return _parsed(settings.outbound_allow, settings.outbound_max_response_bytes)


@functools.lru_cache(maxsize=8)
def _parsed(allow: str, max_response_bytes: int) -> OutboundPolicy:
    # a frozen value: one per setting is enough
    return OutboundPolicy.parse(allow, max_response_bytes=max_response_bytes)


def check_config(config: Mapping[str, Any]) -> None:
    """Refuse a project config whose site address could steer a connector's requests.

    Raises:
        errors.InvalidInput: ``config.<section>.baseUrl`` is not ``http(s)://host[/path]``
            (no user info, query or fragment), or a section is not an object;
            ``config.mcpServers`` not of the shape ``tasks/connectors/mcp_config.py`` reads.
    """
    if mcp_config.SECTION in config:
        mcp_config.parse(config[mcp_config.SECTION])
    for section in SITE_SECTIONS:
        if section not in config:
            continue
        settings = config[section]
        if not isinstance(settings, Mapping):
            raise errors.InvalidInput(
                f"config.{section} must be an object", details={"field": f"config.{section}"}
            )
        base_url = settings.get("baseUrl")
        if base_url is None:
            continue
        field = f"config.{section}.baseUrl"
        problem = "must be a string" if not isinstance(base_url, str) else site_problem(base_url)
        if problem is not None:
            raise errors.InvalidInput(f"{field} {problem}", details={"field": field})


@contextlib.asynccontextmanager
async def connectors_for(
    services: Services, tenant_id: str, project: ProjectContext
) -> AsyncIterator[dict[str, Any]]:
    """``workspace``, ``cms``, ``shop`` and ``outbound`` for one task execution, closed after;
    ``services`` finds the tenant's named services (``/api/services``), headers opened.

    ``config.wordpress`` ({baseUrl, username, appPassword}) selects the WordPress REST
    connector, ``config.woocommerce`` ({baseUrl, consumerKey, consumerSecret}) the
    WooCommerce one, both behind the outbound guard; otherwise pages and products live in
    the Hansa workspace. Sealed secrets are opened here, and only here.

    Raises:
        errors.TaskFailed: ``connector_config`` for incomplete settings.
        secrets.SecretUnreadable: A secret sealed with a key that is not configured.
    """
    workspace = StoreWorkspace(services, tenant_id)
    policy = outbound_policy(services)
    config = project.config
    found: dict[str, Any] = {"workspace": workspace, "outbound": policy}
    found["services"] = functools.partial(_service, services, tenant_id)
    found["conditionBudget"] = services.settings.rule_evaluation_budget_ms / 1000  # seconds
    async with contextlib.AsyncExitStack() as stack:
        box = secrets.box(services.settings.secret_keys())
        # config.mcpServers, opened per call; stdio ones only the operator's
        found["mcp"] = McpServers(config, box.open, policy, services.stdio_servers)
        if isinstance(config.get("wordpress"), dict):
            settings = box.open(config["wordpress"])
            cms = WordPressCms.from_config(settings, policy=policy)
            found["cms"] = await stack.enter_async_context(cms)
        else:
            found["cms"] = WorkspaceCms(workspace, project.project_id, PAGES)
        if isinstance(config.get("woocommerce"), dict):
            settings = box.open(config["woocommerce"])
            shop = WooCommerceShop.from_config(settings, policy=policy)
            found["shop"] = await stack.enter_async_context(shop)
        else:
            found["shop"] = WorkspaceShop(workspace, project.project_id, PRODUCTS)
        found["cms"].target = targets.target(project, "cms")  # what a step's result says
        found["shop"].target = targets.target(project, "shop")
        yield found


async def _service(services: Services, tenant_id: str, name: str) -> Service | None:
    """The tenant's service of that name with its headers opened (``service.call``)."""
    found = await services.db.read(lambda conn: service_rows.find(conn, tenant_id, name))
    if found is None:
        return None
    opened = secret_box(services).open({"headers": found.headers})["headers"]
    return found.model_copy(update={"headers": opened})


def trusted_targets(services: Services) -> frozenset[tuple[str, int]]:
    """The outbound targets the operator vetted: a step sending only there is reversible."""
    return outbound_policy(services).allow


def secret_box(services: Services) -> secrets.SecretBox:
    """Seals step secrets before they are stored and opens them before a step runs."""
    return secrets.box(services.settings.secret_keys())
