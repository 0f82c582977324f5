"""Choose a task's connectors from its project's configuration."""

from __future__ import annotations

import functools
from typing import Any

from hansa.domain.project import ProjectContext
from hansa.engine.runs.store_workspace import StoreWorkspace
from hansa.engine.runtime.services import Services
from hansa.tasks.connectors.outbound import OutboundPolicy
from hansa.tasks.connectors.workspace_cms import WorkspaceCms, WorkspaceShop

WORKSPACE_PAGES = "/api/workspace/pages/"
"""Where pages of the built-in CMS are served (they are real, just not on the project's site)."""
WORKSPACE_PRODUCTS = "/api/workspace/products/"
"""Where products of the built-in shop are served."""


def outbound_policy(services: Services) -> OutboundPolicy:
    """The webhook policy from settings (``HANSA_OUTBOUND_ALLOW``)."""
    return _parsed(services.settings.outbound_allow)


@functools.lru_cache(maxsize=8)
def _parsed(allow: str) -> OutboundPolicy:
    return OutboundPolicy.parse(allow)  # a frozen value: one per setting is enough


def connectors_for(services: Services, tenant_id: str, project: ProjectContext) -> dict[str, Any]:
    """``workspace``, ``cms``, ``shop`` and ``outbound`` for one task execution.

    ``config.wordpress`` ({baseUrl, username, appPassword}) selects the WordPress REST
    connector, ``config.woocommerce`` ({baseUrl, consumerKey, consumerSecret}) the
    WooCommerce one; otherwise pages and products live in the Hansa workspace.
    """
    workspace = StoreWorkspace(services, tenant_id)
    config = project.config
    found: dict[str, Any] = {"workspace": workspace, "outbound": outbound_policy(services)}
    if isinstance(config.get("wordpress"), dict):
        from hansa.tasks.connectors.wordpress import WordPressCms

        found["cms"] = WordPressCms.from_config(config["wordpress"])
    else:
        found["cms"] = WorkspaceCms(workspace, project.project_id, WORKSPACE_PAGES)
    if isinstance(config.get("woocommerce"), dict):
        from hansa.tasks.connectors.woocommerce import WooCommerceShop

        found["shop"] = WooCommerceShop.from_config(config["woocommerce"])
    else:
        found["shop"] = WorkspaceShop(workspace, project.project_id, WORKSPACE_PRODUCTS)
    return found


def trusted_targets(services: Services) -> frozenset[tuple[str, int]]:
    """The outbound targets the operator vetted: a step sending only there is reversible."""
    return outbound_policy(services).allow
