"""Hans's review of completed steps (seed 000 §6.1): read each result back and compare.

A connector may answer "done" and keep nothing; these checks ask the outside system
again, through the same connectors, and say in plain words where it differs from the
plan. A model's writing is checked against what the run was given (``written``): a figure,
link, date or promise no input holds is invented. They never fail the step: what they find
reaches the final message and the run.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel

from hansa.domain import grounding
from hansa.tasks.base import CmsConnector, Result, TaskContext, TaskFailed

if TYPE_CHECKING:
    from hansa.tasks.builtin.cms import CreatePage, UpdateContentBlock
    from hansa.tasks.builtin.page_ref import PageRef

AUDIT_SCORE_MIN = 70
"""An audit scoring under this (of 100) is a discrepancy: the page needs work before it
is good enough to leave as is."""

_TAGS = re.compile(r"<[^>]*>")


def _text_of(html: str) -> str:
    return _TAGS.sub(" ", html).strip()


async def _read_back(ctx: TaskContext, page_id: str) -> tuple[Result | None, list[str]]:
    cms: CmsConnector = ctx.connector("cms")
    try:
        return await cms.get_page(page_id), []
    except TaskFailed as exc:
        if exc.code == "not_found":
            return None, [f"the page {page_id} is not there when read back ({exc.message})"]
        return None, [f"the page {page_id} could not be read back: {exc.message}"]


async def created_page(p: CreatePage, ctx: TaskContext) -> list[str]:
    """The page exists at its URL with the planned title and address, and has content."""
    done = ctx.outputs["self"]
    page, problems = await _read_back(ctx, str(done["pageId"]))
    if page is None:
        return problems
    if page.get("deleted"):
        problems.append(f"the page {done['pageId']} was deleted")
    if done.get("url") and page.get("url") != done["url"]:
        problems.append(f"the page is at {page.get('url') or 'no address'}, not at {done['url']}")
    if page.get("title") != p.title:
        problems.append(f"the page's title is “{page.get('title')}”, not the planned “{p.title}”")
    if page.get("slug") != p.slug:
        problems.append(f"the page's address is /{page.get('slug')}, not the planned /{p.slug}")
    if not _text_of(str(page.get("html") or "")):
        problems.append("the page has no content")
    return problems


async def updated_block(p: UpdateContentBlock, ctx: TaskContext) -> list[str]:
    """The page still exists, has content, and holds the new block."""
    done = ctx.outputs["self"]
    page, problems = await _read_back(ctx, str(done["pageId"]))
    if page is None:
        return problems
    html = str(page.get("html") or "")
    if not _text_of(html):
        problems.append("the page has no content")
    elif p.html.strip() not in html:
        problems.append("the new content is not on the page when read back")
    return problems


async def audited_page(p: PageRef, ctx: TaskContext) -> list[str]:
    """The audit's score reaches ``AUDIT_SCORE_MIN``."""
    score = ctx.outputs["self"].get("score")
    if isinstance(score, int) and score < AUDIT_SCORE_MIN:
        return [f"the audit scored {score}/100, under the {AUDIT_SCORE_MIN} a page should reach"]
    return []


def invented(text: str, ctx: TaskContext) -> list[grounding.Invented]:
    """What ``text`` states that nothing the run was given or found holds
    (``TaskContext.grounds``)."""
    return grounding.invented(text, ctx.grounds)


def said_invented(what: str, found: list[grounding.Invented]) -> str:
    """``found`` as one problem of ``what`` (“the draft”, “the page”), in plain words."""
    return (
        f"{what} states {grounding.describe(found)}, which nothing in the request, the "
        "project or the tools' results holds: check them or take them out"
    )


async def written(p: BaseModel, ctx: TaskContext) -> list[str]:
    """A model's writing (``text`` of the result) invents nothing."""
    found = invented(str(ctx.outputs["self"].get("text") or ""), ctx)
    return [said_invented("the draft", found)] if found else []
