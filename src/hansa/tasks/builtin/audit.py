"""A real on-page audit of a stored page: title, headings, meta description, words, links;
and, for a page its own run wrote, what it states that the run was never given (figures,
statistics, links, dates, promises: ``checks.invented``)."""

from __future__ import annotations

from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any

from hansa.domain import grounding
from hansa.tasks.base import CmsConnector, Result, TaskContext, TaskType
from hansa.tasks.builtin import checks
from hansa.tasks.builtin.page_ref import PageRef, resolve
from hansa.tasks.registry import Register

MIN_WORDS = 300
META_RANGE = (50, 160)


class _Scan(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: dict[str, int] = {}
        self.first_h1: str | None = None
        self.meta_description: str | None = None
        self.links: list[str] = []
        self.images_without_alt = 0
        self.words = 0
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings[tag] = self.headings.get(tag, 0) + 1
        if tag == "meta" and (a.get("name") or "").lower() == "description":
            self.meta_description = a.get("content") or ""
        if tag == "a" and a.get("href"):
            self.links.append(a["href"] or "")
        if tag == "img" and not (a.get("alt") or "").strip():
            self.images_without_alt += 1
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            while self._in and self._in.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] in ("script", "style"):
            return
        if self._in and self._in[-1] == "h1" and self.first_h1 is None and data.strip():
            self.first_h1 = data.strip()
        self.words += len(data.split())


def audit_html(title: str, html: str, invented: list[grounding.Invented] | None = None) -> Result:
    """Findings about one page's HTML, each with a severity and a plain explanation;
    ``invented``: what the page states that no input holds (an error: it costs the score)."""
    scan = _Scan()
    scan.feed(html)
    findings: list[dict[str, str]] = []

    def find(severity: str, code: str, message: str) -> None:
        findings.append({"severity": severity, "code": code, "message": message})

    if not title.strip():
        find("error", "missing_title", "The page has no title.")
    elif len(title) > 60:
        find(
            "warning", "long_title", f"The title has {len(title)} characters; aim for 60 or fewer."
        )
    h1 = scan.headings.get("h1", 0)
    if h1 == 0:
        find("error", "missing_h1", "The page has no main heading (h1).")
    elif h1 > 1:
        find("warning", "several_h1", f"The page has {h1} main headings; use one.")
    if scan.meta_description is None:
        find("warning", "missing_meta_description", "The page has no meta description.")
    elif not META_RANGE[0] <= len(scan.meta_description) <= META_RANGE[1]:
        find(
            "warning",
            "meta_description_length",
            f"The meta description has {len(scan.meta_description)} characters; "
            f"aim for {META_RANGE[0]}–{META_RANGE[1]}.",
        )
    if scan.words < MIN_WORDS:
        find("info", "thin_content", f"The page has {scan.words} words; {MIN_WORDS}+ rank better.")
    if not scan.links:
        find("info", "no_links", "The page links nowhere; add internal links.")
    if scan.images_without_alt:
        find(
            "warning", "images_without_alt", f"{scan.images_without_alt} image(s) have no alt text."
        )
    if invented:
        find("error", "invented_claims", checks.said_invented("The page", invented) + ".")
    penalty = {"error": 25, "warning": 10, "info": 5}
    score = max(0, 100 - sum(penalty[f["severity"]] for f in findings))
    return {
        "score": score,
        "findings": findings,
        "wordCount": scan.words,
        "headings": scan.headings,
        "links": len(scan.links),
        "h1": scan.first_h1,
        "metaDescription": scan.meta_description,
    }


async def _run(p: PageRef, ctx: TaskContext) -> Result:
    cms: CmsConnector = ctx.connector("cms")
    page = await resolve(cms, p)
    page_id = page["pageId"]
    await ctx.report("read", "page", page["title"], "success", page_id)
    # a page this run wrote is checked against the run's inputs; one it found is an input
    wrote = any(r.get("pageId") == page_id for r in ctx.outputs.values() if isinstance(r, dict))
    found = checks.invented(page["html"], ctx) if wrote else []
    return {
        "pageId": page_id,
        "url": page["url"],
        **audit_html(page["title"], page["html"], found),
    }


def _audited(r: Mapping[str, Any]) -> str | None:
    if "score" not in r:
        return None
    found = len(r.get("findings") or [])
    page = f" for {r['url']}" if r.get("url") else ""
    return f"Audit{page}: score {r['score']}/100, {found} finding{'' if found == 1 else 's'}"


def register(add: Register) -> None:
    """Register run_audit."""
    add(
        TaskType(
            "run_audit",
            "Audit a stored page for on-page SEO.",
            PageRef,
            _run,
            "audit",
            check=checks.audited_page,
            describe=_audited,
        )
    )
