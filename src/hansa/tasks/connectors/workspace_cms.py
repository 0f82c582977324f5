"""The default CMS and shop: pages and products kept in the project's workspace."""

from __future__ import annotations

from hansa.tasks.base import CmsConnector, Result, ShopConnector, TaskFailed, page_slug
from hansa.tasks.workspace import Entity, Workspace

PAGES = "/api/workspace/pages/"
"""Where pages of the built-in CMS are served (they are real, just not on the project's site)."""
PRODUCTS = "/api/workspace/products/"
"""Where products of the built-in shop are served."""


class WorkspaceCms(CmsConnector):
    """Pages stored as workspace entities of kind ``page``, served by Hansa under ``base_url``."""

    def __init__(self, workspace: Workspace, project_id: str | None, base_url: str) -> None:
        self._ws = workspace
        self._project_id = project_id
        self._base = base_url

    def _page(self, entity: Entity) -> Result:
        data = entity.data
        return {
            "pageId": entity.id,
            "title": entity.name,
            "slug": data["slug"],
            "html": data["html"],
            "status": data["status"],
            "url": f"{self._base}{entity.id}",
            "deleted": entity.deleted,
        }

    async def create_page(
        self, *, title: str, slug: str, html: str, status: str, idempotency_key: str
    ) -> Result:
        """Create the page (idempotent per key); another live page on the slug is a failure."""
        existing = await self._ws.find_by_slug("page", slug, project_id=self._project_id)
        if existing is not None:
            if existing.idempotency_key == idempotency_key:
                return self._page(existing)
            raise TaskFailed(f"a page with the address /{slug} already exists", code="slug_taken")
        created = await self._ws.create(
            "page",
            title,
            {"slug": slug, "html": html, "status": status},
            project_id=self._project_id,
            idempotency_key=idempotency_key,
        )
        return self._page(created)

    async def get_page(self, page_id: str) -> Result:
        """The page."""
        entity = await self._ws.get(page_id)
        if entity.kind != "page":
            raise TaskFailed(f"{page_id} is not a page", code="not_found")
        return self._page(entity)

    async def find_pages(self, name: str) -> list[Result]:
        """Pages titled ``name`` or living at its address."""
        found = {e.id: e for e in await self._ws.named("page", name, project_id=self._project_id)}
        slug = page_slug(name)
        if slug:
            at = await self._ws.find_by_slug("page", slug, project_id=self._project_id)
            if at is not None:
                found.setdefault(at.id, at)
        return [self._page(e) for e in found.values()]

    async def update_page(
        self,
        page_id: str,
        *,
        html: str | None = None,
        title: str | None = None,
        status: str | None = None,
    ) -> Result:
        """Change the page."""
        await self.get_page(page_id)
        patch: dict[str, str] = {}
        if html is not None:
            patch["html"] = html
        if title is not None:
            patch["name"] = title
        if status is not None:
            patch["status"] = status
        return self._page(await self._ws.update(page_id, patch))

    async def delete_page(self, page_id: str) -> Result:
        """Delete the page for good."""
        await self.get_page(page_id)
        await self._ws.purge(page_id)
        return {"pageId": page_id, "deleted": True}


class WorkspaceShop(ShopConnector):
    """Products stored as workspace entities of kind ``product``."""

    def __init__(self, workspace: Workspace, project_id: str | None, base_url: str) -> None:
        self._ws = workspace
        self._project_id = project_id
        self._base = base_url

    async def create_product(
        self, *, name: str, price: str, description: str, status: str, idempotency_key: str
    ) -> Result:
        """Create the product (idempotent per key)."""
        entity = await self._ws.create(
            "product",
            name,
            {"price": price, "description": description, "status": status},
            project_id=self._project_id,
            idempotency_key=idempotency_key,
        )
        return {
            "productId": entity.id,
            "name": name,
            "status": status,
            "url": f"{self._base}{entity.id}",
        }

    async def delete_product(self, product_id: str) -> Result:
        """Remove the product."""
        await self._ws.purge(product_id)
        return {"productId": product_id, "deleted": True}
