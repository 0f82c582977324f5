"""Naming a page in a step: by its id, or by its title or address, looked up when the step
runs (a plan can say "the Pricing page" before anyone has looked up its id)."""

from __future__ import annotations

import re
from typing import Self

from pydantic import Field, model_validator

from hansa.tasks.base import CmsConnector, Params, Result, TaskFailed

_ID = re.compile(r"[0-9A-Z]{26}|\d{1,20}")
"""What a page id looks like: the workspace's ULIDs, WordPress's numbers."""


class CmsParams(Params):
    """Parameters of a task on the project's pages."""

    cms: str | None = Field(None, pattern=r"^[a-z][a-z0-9_.-]{0,31}$")
    """The CMS the caller means (seed 000 §8.3: ``"cms": "wordpress"``), kept with the task.
    The project's configuration, not this field, chooses the connection."""


class PageRef(CmsParams):
    page_id: str | None = Field(None, alias="pageId", min_length=1)
    """The page's id in the project's CMS."""
    page: str | None = Field(None, min_length=1, max_length=200)
    """Or its title or address (``/pricing``)."""

    @model_validator(mode="after")
    def _names_a_page(self) -> Self:
        if self.page_id is None and self.page is None:
            raise ValueError("name the page: pageId, or page (its title or address)")
        return self


async def resolve(cms: CmsConnector, ref: PageRef) -> Result:
    """The one page ``ref`` names; a name that matches none or several pages fails the step."""
    if ref.page_id is not None:
        return await cms.get_page(ref.page_id)
    name = str(ref.page).strip()
    found = await cms.find_pages(name)
    if len(found) == 1:
        return found[0]
    if found:
        ids = ", ".join(page["pageId"] for page in found[:5])
        raise TaskFailed(
            f"{len(found)} pages match “{name}” ({ids}); name one by its id or address",
            code="ambiguous_page",
        )
    if _ID.fullmatch(name):
        return await cms.get_page(name)
    raise TaskFailed(f"there is no page called “{name}” in this project", code="not_found")
