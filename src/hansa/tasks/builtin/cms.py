"""Pages and products through the project's CMS or shop connector."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from hansa.tasks.base import (
    CmsConnector,
    Params,
    Result,
    ShopConnector,
    TaskContext,
    TaskType,
    landed,
)
from hansa.tasks.builtin import checks
from hansa.tasks.builtin.page_ref import CmsParams, PageRef, resolve
from hansa.tasks.connectors import workspace_cms
from hansa.tasks.registry import Register


class CreatePage(CmsParams):
    title: str = Field(min_length=1, max_length=200)
    slug: str = Field(min_length=1, max_length=120, pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    content_html: str = Field(alias="contentHtml", min_length=1, max_length=500_000)
    status: str = Field(default="draft", pattern=r"^(draft|publish|private)$")


class UpdateContentBlock(PageRef):
    html: str = Field(min_length=1, max_length=500_000)
    block_id: str | None = Field(default=None, alias="blockId", pattern=r"^[A-Za-z0-9_-]+$")
    """Replace ``<section data-block="…">`` with this id; None (or ``all``) replaces the
    whole content."""

    @field_validator("block_id", mode="before")
    @classmethod
    def _all(cls, value: object) -> object:
        return None if isinstance(value, str) and value.strip().lower() in ("", "all") else value


class CreateProduct(Params):
    name: str = Field(min_length=1, max_length=200)
    price: str = Field(pattern=r"^\d+(\.\d{1,2})?$")
    description: str = ""
    status: str = Field(default="draft", pattern=r"^(draft|publish|private)$")


def _cms(ctx: TaskContext) -> CmsConnector:
    cms: CmsConnector = ctx.connector("cms")
    return cms


async def _create_page(p: CreatePage, ctx: TaskContext) -> Result:
    await ctx.report("create", "page", p.title, "start")
    page = await _cms(ctx).create_page(
        title=p.title,
        slug=p.slug,
        html=p.content_html,
        status=p.status,
        idempotency_key=ctx.idempotency_key,
    )
    await ctx.report(
        "create",
        "page",
        p.title,
        "success",
        page["pageId"],
        {"title": p.title, "slug": p.slug, "url": page["url"]},
    )
    status = page.get("status", p.status)
    return {"pageId": page["pageId"], "url": page["url"], "status": status, **landed(_cms(ctx))}


async def _undo_create_page(p: CreatePage, ctx: TaskContext) -> Result:
    return await _cms(ctx).delete_page(ctx.outputs["self"]["pageId"])


def _replace_block(html: str, block_id: str, new: str) -> str:
    pattern = re.compile(
        rf'(<section[^>]*data-block="{re.escape(block_id)}"[^>]*>).*?(</section>)', re.S
    )
    replaced, count = pattern.subn(lambda m: m.group(1) + new + m.group(2), html, count=1)
    if count == 0:
        return html + f'<section data-block="{block_id}">{new}</section>'
    return replaced


async def _update_block(p: UpdateContentBlock, ctx: TaskContext) -> Result:
    cms = _cms(ctx)
    page = await resolve(cms, p)
    page_id = page["pageId"]
    await ctx.report("update", "page", page["title"], "start", page_id)
    html = p.html if p.block_id is None else _replace_block(page["html"], p.block_id, p.html)
    await cms.update_page(page_id, html=html)
    await ctx.report("update", "page", page["title"], "success", page_id, {"blockId": p.block_id})
    return {
        "pageId": page_id,
        "url": page["url"],
        "previousHtml": page["html"],
        **landed(cms),
    }


async def _undo_update_block(p: UpdateContentBlock, ctx: TaskContext) -> Result:
    done = ctx.outputs["self"]
    await _cms(ctx).update_page(done["pageId"], html=done["previousHtml"])
    return {"pageId": done["pageId"], "restored": True}


async def _delete_page(p: PageRef, ctx: TaskContext) -> Result:
    cms = _cms(ctx)
    page = await resolve(cms, p)
    page_id = page["pageId"]
    await ctx.report("delete", "page", page["title"], "start", page_id)
    result = await cms.delete_page(page_id)
    await ctx.report("delete", "page", page["title"], "success", page_id, {"deleted": True})
    return {**result, "title": page["title"], "url": page["url"], **landed(cms)}


async def _create_product(p: CreateProduct, ctx: TaskContext) -> Result:
    shop: ShopConnector = ctx.connector("shop")
    await ctx.report("create", "product", p.name, "start")
    product = await shop.create_product(
        name=p.name,
        price=p.price,
        description=p.description,
        status=p.status,
        idempotency_key=ctx.idempotency_key,
    )
    await ctx.report(
        "create",
        "product",
        p.name,
        "success",
        product["productId"],
        {"name": p.name, "price": p.price},
    )
    return {"productId": product["productId"], "url": product["url"], **landed(shop)}


async def _undo_create_product(p: CreateProduct, ctx: TaskContext) -> Result:
    shop: ShopConnector = ctx.connector("shop")
    return await shop.delete_product(ctx.outputs["self"]["productId"])


def _place(r: Mapping[str, Any], site: str, workspace: str, status: str = "") -> str:
    """Where the change is, as its result's ``target`` says (else as its address tells)."""
    url = str(r["url"])
    target = r.get("target")
    if not isinstance(target, Mapping) or not target.get("said"):
        where = "the Hansa workspace" if url.startswith(workspace) else site
        return f"in {where} at {url}{status}"
    if target.get("where") == "site":  # "the live WordPress site at aquaverter.ca"
        return f"on {str(target['said']).rsplit(' at ', 1)[0]} at {url}{status}"
    why = f" (not on the live site: {target['reason']})" if target.get("reason") else ""
    return f"in Hansa's workspace at {url}{status}{why}"


def _page_created(r: Mapping[str, Any]) -> str | None:
    if not r.get("url"):
        return None
    draft = " as a draft" if r.get("status") == "draft" else ""
    return f"Page created {_place(r, 'WordPress', workspace_cms.PAGES, draft)}"


def _page_updated(r: Mapping[str, Any]) -> str | None:
    if not r.get("url"):
        return None
    return f"Page updated {_place(r, 'WordPress', workspace_cms.PAGES)}"


def _page_deleted(r: Mapping[str, Any]) -> str:
    title = f" “{r['title']}”" if r.get("title") else ""
    return f"Page{title} deleted" + (f" from {r['url']}" if r.get("url") else "")


def _product_created(r: Mapping[str, Any]) -> str | None:
    if not r.get("url"):
        return None
    return f"Product created {_place(r, 'WooCommerce', workspace_cms.PRODUCTS)}"


def register(add: Register) -> None:
    """Register the CMS and shop task types."""
    add(
        TaskType(
            "create_page",
            "Create a page in the project's CMS.",
            CreatePage,
            _create_page,
            "cms_pages",
            lands_via="cms",
            undo=_undo_create_page,
            check=checks.created_page,
            describe=_page_created,
        )
    )
    add(
        TaskType(
            "update_content_block",
            "Replace a content block (or all content) of a page.",
            UpdateContentBlock,
            _update_block,
            "cms_pages",
            lands_via="cms",
            undo=_undo_update_block,
            check=checks.updated_block,
            describe=_page_updated,
        )
    )
    add(
        TaskType(
            "delete_page",
            "Delete a page for good. Cannot be undone.",
            PageRef,
            _delete_page,
            "cms_pages",
            lands_via="cms",
            is_reversible_by_system=False,
            retryable=False,
            describe=_page_deleted,
        )
    )
    add(
        TaskType(
            "create_product",
            "Create a product in the project's shop.",
            CreateProduct,
            _create_product,
            "products",
            lands_via="shop",
            undo=_undo_create_product,
            describe=_product_created,
        )
    )
