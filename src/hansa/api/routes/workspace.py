"""Workspace entities as JSON, and the pages and products of the built-in CMS and shop,
served as HTML documents.

Their HTML comes from agents and models. Served from Hansa's own origin it could run
script with the panel's access to the API, so every document is sandboxed by its
Content-Security-Policy: a unique origin, no script, nothing loaded but images and
inline styles.
"""

from __future__ import annotations

from html import escape

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from sqlalchemy import Connection

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import usage as models
from hansa.domain.workspace import WorkspaceEntity
from hansa.engine.runtime.services import Services
from hansa.store import workspace

router = APIRouter(tags=["workspace"])

SANDBOX = {
    "Content-Security-Policy": "sandbox; default-src 'none'; img-src * data:; "
    "style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}


async def _entity(services: Services, tenant: str, entity_id: str, kind: str) -> WorkspaceEntity:
    entity = await services.db.read(workspace.get, tenant, entity_id)
    if entity.kind != kind:
        raise errors.NotFound(f"{kind} {entity_id} not found")
    return entity


def _document(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(
        f"<!doctype html><meta charset=utf-8><title>{escape(title)}</title>{body}", headers=SANDBOX
    )


@router.get(
    "/api/workspace/pages/{page_id}", response_class=HTMLResponse, operation_id="getWorkspacePage"
)
async def workspace_page(page_id: str, services: ServicesDep, tenant: TenantDep) -> HTMLResponse:
    """A page of the built-in CMS: its stored HTML, sandboxed."""
    page = await _entity(services, tenant, page_id, "page")
    return _document(page.name, str(page.data.get("html", "")))


@router.get(
    "/api/workspace/products/{product_id}",
    response_class=HTMLResponse,
    operation_id="getWorkspaceProduct",
)
async def workspace_product(
    product_id: str, services: ServicesDep, tenant: TenantDep
) -> HTMLResponse:
    """A product of the built-in shop: name, price and description (text, escaped)."""
    product = await _entity(services, tenant, product_id, "product")
    data = product.data
    body = (
        f"<h1>{escape(product.name)}</h1><p>{escape(str(data.get('price', '')))}</p>"
        f"<p>{escape(str(data.get('description', '')))}</p>"
    )
    return _document(product.name, body)


@router.get("/api/workspace/entities/{entity_id}", operation_id="getWorkspaceEntity")
async def workspace_entity(
    entity_id: str, services: ServicesDep, tenant: TenantDep
) -> models.EntityOut:
    """A live workspace entity with its fields (secrets masked), and its edges from and to
    other entities."""

    def read(conn: Connection) -> models.EntityOut:
        entity = workspace.get(conn, tenant, entity_id)
        return models.EntityOut.of_entity(entity, workspace.edges_of(conn, tenant, entity_id))

    return await services.db.read(read)
