"""A step names a page by id, title or address; resolve finds exactly one or fails clearly."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hansa.tasks.base import CmsConnector, Result, TaskFailed
from hansa.tasks.builtin.page_ref import PageRef, resolve

PAGES = [
    {"pageId": "01M83FEKDBQNGNFPE3SJKJ3Z2T", "title": "Pricing", "slug": "pricing"},
    {"pageId": "01M83FEKDBQNGNFPE3SJKJ3Z2V", "title": "Offers", "slug": "offers"},
    {"pageId": "01M83FEKDBQNGNFPE3SJKJ3Z2W", "title": "Offers", "slug": "offers-2024"},
]


class _Site(CmsConnector):
    """A CMS holding PAGES (the outside system a connector talks to)."""

    async def get_page(self, page_id: str) -> Result:
        for page in PAGES:
            if page["pageId"] == page_id:
                return page
        raise TaskFailed(f"page {page_id} not found", code="not_found")

    async def find_pages(self, name: str) -> list[Result]:
        slug = name.strip("/").lower()
        return [p for p in PAGES if name.lower() == p["title"].lower() or slug == p["slug"]]

    async def create_page(self, **_: str) -> Result:
        raise NotImplementedError

    async def update_page(self, page_id: str, **_: str | None) -> Result:
        raise NotImplementedError

    async def delete_page(self, page_id: str) -> Result:
        raise NotImplementedError


def test_a_page_is_named_by_id_or_by_title_or_address() -> None:
    assert PageRef.model_validate({"pageId": "p1"}).page_id == "p1"
    assert PageRef.model_validate({"page": "Pricing"}).page == "Pricing"
    with pytest.raises(ValidationError, match="pageId, or page"):
        PageRef.model_validate({})


@pytest.mark.anyio
@pytest.mark.parametrize(
    "named",
    [
        {"pageId": "01M83FEKDBQNGNFPE3SJKJ3Z2T"},
        {"page": "pricing"},
        {"page": "/pricing"},
        {"page": "01M83FEKDBQNGNFPE3SJKJ3Z2T"},
    ],
)
async def test_one_page_is_found(named: dict[str, str]) -> None:
    page = await resolve(_Site(), PageRef.model_validate(named))
    assert page["title"] == "Pricing"


@pytest.mark.anyio
async def test_a_name_matching_several_or_no_page_fails_the_step() -> None:
    with pytest.raises(TaskFailed, match="2 pages match “Offers”") as several:
        await resolve(_Site(), PageRef(page="Offers"))
    assert several.value.code == "ambiguous_page" and not several.value.retryable
    with pytest.raises(TaskFailed, match="no page called “Careers”") as none:
        await resolve(_Site(), PageRef(page="Careers"))
    assert none.value.code == "not_found"
