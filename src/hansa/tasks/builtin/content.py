"""Drafting: an agent writes copy or an SEO brief with its model."""

from __future__ import annotations

import html
from typing import Literal

from pydantic import Field

from hansa.tasks.base import Params, Result, TaskContext, TaskFailed, TaskType
from hansa.tasks.builtin import checks
from hansa.tasks.registry import Register

_INSTRUCTIONS = {
    "page_copy": "Write the body copy of a web page from this brief. Plain paragraphs, no HTML.",
    "seo_brief": "Write an SEO brief: a meta description (under 160 characters) on the first "
    "line, then the target keywords, comma-separated.",
}


class DraftContent(Params):
    kind: Literal["page_copy", "seo_brief"]
    brief: str = Field(min_length=1, max_length=4000)
    title: str = ""
    language: str = "English"
    audience: str = ""


async def _draft(p: DraftContent, ctx: TaskContext) -> Result:
    if ctx.generate is None:
        raise TaskFailed("no language model is available to draft content", code="no_model")
    material = f"Title: {p.title}\nLanguage: {p.language}\nAudience: {p.audience}\nBrief: {p.brief}"
    text = (await ctx.generate(_INSTRUCTIONS[p.kind], material)).strip()
    if not text:
        raise TaskFailed("the model returned an empty draft", code="empty_draft", retryable=True)
    if p.kind == "seo_brief":
        first, _, rest = text.partition("\n")
        return {
            "text": text,
            "metaDescription": first.strip()[:160],
            "keywords": [k.strip() for k in rest.split(",") if k.strip()],
        }
    paragraphs = [para.strip() for para in text.split("\n") if para.strip()]
    body = "".join(f"<p>{html.escape(para)}</p>" for para in paragraphs)
    heading = f"<h1>{html.escape(p.title)}</h1>" if p.title else ""
    return {"text": text, "html": heading + body}


def register(add: Register) -> None:
    """Register draft_content."""
    add(
        TaskType(
            "draft_content",
            "Draft page copy or an SEO brief with the agent's model.",
            DraftContent,
            _draft,
            "content",
            check=checks.written,
            model_written=True,
        )
    )
