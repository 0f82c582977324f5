"""Where a plan's changes land, settled before its own questions (seed 000 §6.2, §7.3, §11.1).

Hans never guesses the live environment:

- in a conversation with no project in focus, a plan that changes something first asks
  which of the tenant's projects it is for, and every step carries the chosen project;
- a project whose CMS or shop is an outside platform (WordPress, WooCommerce, Shopify…)
  with no connection configured gets the choice to connect it first or to draft in
  Hansa's workspace instead, explicitly: nothing lands in the workspace while Hans
  says "done" about the live site. A project may make that choice once for all its plans
  (``config.workspaceDrafts``: true); the plan still says where each change lands.

The answers are read by rules (a number, a letter, a name, a key word); the plan text
then names where each change lands (``landing``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.plan import PlanningState
from hansa.domain.project import Project, ProjectContext
from hansa.engine.planning.request import PlanningRequest
from hansa.store import projects

PROJECT, SITE = "project", "site"
"""The two context questions, by the name their answers are kept under."""
CONNECT, WORKSPACE = "connect", "workspace"
"""The two answers to the site question."""
WORKSPACE_DRAFTS = "workspaceDrafts"
"""A project's config key: true means its changes land in Hansa's workspace until its
site is connected, without asking each time."""
MAX_PROJECTS = 20
"""The most projects offered by name; more are still chosen by name or id."""
_OUTSIDE = {"cms_pages": ("wordpress", "WordPress site"), "products": ("woocommerce", "shop")}
"""Per task capability: the project config section that connects it, and what it is."""
_BUILT_IN = {None, "", "hansa", "workspace", "none"}
"""``cmsPlatform`` values that mean Hansa's own workspace."""
_NUMBER = re.compile(r"^\s*(?:option\s+|project\s+)?(\d{1,2})\s*[.)]?\s*$", re.I)
_CONNECT = re.compile(r"^\s*(?:option\s+)?a\b|\bconnect", re.I)
_DRAFT = re.compile(r"^\s*(?:option\s+)?b\b|\b(workspace|draft|hansa)\b", re.I)


@dataclass(frozen=True)
class Question:
    """A context question Hans asks before the plan's own: its name and its words."""

    name: str
    text: str


def focused(req: PlanningRequest, chosen: Project | None) -> PlanningRequest:
    """``req`` with the project the user chose (``chosen``, stored) in focus; unchanged
    when the conversation has its own project or none was chosen."""
    if chosen is None or req.project.project_id is not None:
        return req
    context = ProjectContext(
        project_id=chosen.id,
        project_name=chosen.name,
        project_domain=chosen.domain,
        cms_platform=chosen.cms_platform,
        allowed_task_types=chosen.allowed_task_types,
        config=chosen.config,
    )
    return dataclasses.replace(req, project=context)


async def chosen_project(req: PlanningRequest, state: PlanningState) -> Project | None:
    """The stored project the user chose for this plan, if any (None once it is gone)."""
    if state.project_id is None or req.project.project_id is not None:
        return None
    project_id = state.project_id

    def load(conn: Connection) -> Project | None:
        try:
            return projects.get(conn, req.tenant_id, project_id)
        except errors.NotFound:
            return None

    return await req.services.db.read(load)


async def question(
    req: PlanningRequest, state: PlanningState, capabilities: Iterable[str], changes: bool
) -> Question | None:
    """The first context question still open for a plan whose steps need ``capabilities``
    (``changes``: whether it changes anything), or None when where it lands is settled."""
    if changes and req.project.project_id is None and state.project_id is None:
        listed = await _projects(req)
        if listed:
            return Question(PROJECT, _which_project(listed))
    site = unconnected(req.project, capabilities)
    drafts = req.project.config.get(WORKSPACE_DRAFTS) is True
    if site is not None and state.site is None and not drafts:
        return Question(SITE, _connect_or_draft(req.project, site))
    return None


def unconnected(project: ProjectContext, capabilities: Iterable[str]) -> str | None:
    """What of the project's outside platform the steps need but Hansa has no connection
    to (``WordPress site``), or None when every step lands where the project says."""
    platform = (project.cms_platform or "").strip().lower()
    if platform in _BUILT_IN:
        return None
    for capability in capabilities:
        outside = _OUTSIDE.get(capability)
        if outside is None:
            continue
        section, what = outside
        if section == "wordpress" and platform != "wordpress":
            return f"{project.cms_platform} site"  # no connector for that platform at all
        if not isinstance(project.config.get(section), dict):
            return what
    return None


def landing(project: ProjectContext, capability: str, site: str | None) -> str | None:
    """Where a step with ``capability`` lands, in words; None for a step that changes
    nothing outside Hansa's records."""
    if capability not in _OUTSIDE:
        return None
    name = project.project_name or "the project"
    if unconnected(project, [capability]) is not None or site == WORKSPACE:
        return f"Hansa's workspace (a draft for {name}, not on its live site)"
    if capability == "cms_pages" and project.cms_platform:
        return f"{project.cms_platform} at {project.project_domain or name}"
    return f"{name}'s shop"


async def read(req: PlanningRequest, name: str) -> str | None:
    """The answer to context question ``name`` in ``req.text``: a project's id, or
    ``connect`` / ``workspace``; None when the message does not answer it."""
    text = req.text.strip()[:200]
    if name == SITE:
        if _DRAFT.search(text):
            return WORKSPACE
        return CONNECT if _CONNECT.search(text) else None
    listed = await _projects(req)
    number = _NUMBER.match(text)
    if number is not None:
        index = int(number.group(1)) - 1
        return listed[index].id if 0 <= index < len(listed) else None
    lowered = text.lower()
    for p in listed:
        if p.id == text or p.name.lower() in lowered:
            return p.id
    return None


async def _projects(req: PlanningRequest) -> list[Project]:
    def load(conn: Connection) -> list[Project]:
        return sorted(projects.list_all(conn, req.tenant_id), key=lambda p: p.name.lower())

    return await req.services.db.read(load)


def _which_project(listed: list[Project]) -> str:
    lines = ["Which project is this for? I won't guess where a change should land."]
    for i, p in enumerate(listed[:MAX_PROJECTS], start=1):
        lines.append(f"{i}. {p.name}" + (f" ({p.domain})" if p.domain else ""))
    lines.append("Answer with its number or its name.")
    return "\n".join(lines)


def _connect_or_draft(project: ProjectContext, site: str) -> str:
    name = project.project_name or "This project"
    live = project.project_domain or "its live site"
    return (
        f"{name}'s {site} is not connected to Hansa, so I can't change {live}. "
        "Shall I:\n"
        f"A) wait until you connect it: add its address and credentials to {name} under "
        "Projects, then ask me again; or\n"
        "B) draft it in Hansa's workspace: the change is made there, not on the live site, "
        "for you to copy or publish later?"
    )
