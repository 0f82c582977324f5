"""Where a plan's changes land, settled before its own questions (seed 000 §6.2, §7.3, §11.1).

Hans never guesses the live environment:

- in a conversation with no project in focus, a plan that changes something first asks
  which of the tenant's projects it is for, and every step carries the chosen project; a
  tenant with no project at all is told so before a plan that changes pages or products,
  and offered to create one (from the answer's name and site address) or to draft in the
  workspace, outside any project;
- a project whose CMS or shop is an outside platform (WordPress, WooCommerce, Shopify…)
  with no connection configured gets the choice to connect it first or to draft in
  Hansa's workspace instead, explicitly: nothing lands in the workspace while Hans
  says "done" about the live site. A project may make that choice once for all its plans
  (``config.workspaceDrafts``: true); the plan still says where each change lands.

The answers are read by rules (a number, a letter, a name, a key word); the plan text
then names where each change lands (``landing``: each step's task type's connector, its
target by ``tasks/connectors/targets.py``, the same answer its result gives).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.base import new_id
from hansa.domain.plan import PlanningState
from hansa.domain.project import Project, ProjectContext
from hansa.engine.planning import answers
from hansa.engine.planning.request import PlanningRequest
from hansa.store import projects
from hansa.tasks.base import TaskType
from hansa.tasks.connectors import targets

PROJECT, SITE = "project", "site"
"""The two context questions, by the name their answers are kept under."""
CONNECT, WORKSPACE = "connect", "workspace"
"""The two answers to the site question."""
WORKSPACE_DRAFTS = targets.WORKSPACE_DRAFTS
MAX_PROJECTS = 20
"""The most projects offered by name; more are still chosen by name or id."""
MAX_NAME = 120
"""The longest project name Hans takes from an answer."""
_SITE_ADDRESS = re.compile(
    r"(?:https?://)?(?:www\.)?(?P<host>[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,})"
    r"(?![\w.-])",
    re.I,
)
_NAMED = re.compile(
    r"\b(?:called|named|call\s+it|name\s+it|project)\s+[\"“']?(?P<name>[^\"”,;.\n]+?)"
    r"[\"”']?(?=\s+(?:at|on|with|for)\s|[,;\n]|\.(?:\s|$)|$)",
    re.I,
)
_CREATE = re.compile(
    r"^\s*(?:(?:option\s+)?a\b[).:,-]?|(?:please\s+)?(?:create|make|add|start|set\s+up)\b)"
    r"(?:\s+(?:a|the|one|new|project|it))*\s*(?P<name>.*)$",
    re.I | re.S,
)
"""An answer that takes option A or says to create a project, and what follows: its name."""
_WAIT = ("connect", "connected", "wait")
_DRAFT = ("workspace", "draft", "hansa")
"""Words that choose to wait for the site, or to draft in Hansa's workspace."""
_CREATING = "create"
_NO_PROJECT = answers.Question(
    "start",
    "Create a project or draft",
    ("start",),
    (
        answers.Option(
            _CREATING,
            "create a project for it",
            names=("a",),
            keywords=("create", "new project", "set up", "make"),
        ),
        answers.Option(
            WORKSPACE, "draft it in Hansa's workspace", names=("b",), keywords=_DRAFT[:2]
        ),  # not "hansa": a project may be called so
    ),
    own_words=False,
)
"""The question Hans asks when the tenant has no project yet, read like every answer."""


@dataclass(frozen=True)
class Question:
    """A context question Hans asks before the plan's own: its name and its words."""

    name: str
    text: str
    restate: bool = True
    """Whether the goal is said first (not when it would name a project there is not)."""


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
    (``changes``: whether it changes anything), or None when where it lands is settled.

    With no project in focus Hans asks which of the tenant's projects it is for; a tenant
    with none, for a change of pages or products (a step's ``lands_via``), is told so and
    offered to create one or to draft in the workspace (a ticket needs no project)."""
    connectors = _connectors(req, capabilities)
    if changes and req.project.project_id is None and state.project_id is None:
        listed = await _projects(req)
        if listed:
            return Question(PROJECT, _which_project(listed))
        if state.site != WORKSPACE and connectors:  # a site's change, with no site to place
            return Question(PROJECT, _no_project(), restate=False)
    site = unconnected(req.project, connectors)
    drafts = req.project.config.get(WORKSPACE_DRAFTS) is True
    if site is not None and state.site is None and not drafts:
        return Question(SITE, _connect_or_draft(req.project, site))
    return None


def unconnected(project: ProjectContext, connectors: Iterable[str]) -> str | None:
    """What of the project's outside platform the steps' connectors (``cms``, ``shop``)
    need but Hansa has no connection to (``WordPress site``), or None when every step lands
    where the project says."""
    for connector in connectors:
        missing = targets.target(project, connector).missing
        if missing is not None:
            return missing
    return None


def landing(project: ProjectContext, task_type: TaskType[Any], site: str | None) -> str | None:
    """Where a step of ``task_type`` lands, in words (its connector's target); None for a
    step that changes nothing outside Hansa's records."""
    if task_type.lands_via is None:
        return None
    return targets.target(project, task_type.lands_via, workspace=site == WORKSPACE).said


def _connectors(req: PlanningRequest, capabilities: Iterable[str]) -> set[str]:
    """The connectors the task types of these capabilities change things through."""
    wanted = set(capabilities)
    registry = req.services.registry
    return {t.lands_via for t in registry.all() if t.capability in wanted and t.lands_via}


async def read(req: PlanningRequest, name: str) -> str | None:
    """The answer to context question ``name`` in ``req.text``, read like every answer
    (``answers``): a project's id (by number, name or id), or ``connect`` / ``workspace``;
    None when the message does not answer it."""
    if name == PROJECT and not await _projects(req):  # the tenant has none yet
        return await _create_or_draft(req)
    options: tuple[answers.Option, ...]
    if name == SITE:
        options = (
            answers.Option(CONNECT, "wait until you connect it", names=("a",), keywords=_WAIT),
            answers.Option(
                WORKSPACE, "draft it in Hansa's workspace", names=("b",), keywords=_DRAFT
            ),
        )
    else:
        options = tuple(
            answers.Option(p.id, p.name, names=(p.id,), keywords=(p.name,))
            for p in await _projects(req)
        )
    question = answers.Question(name, name.capitalize(), (name,), options, own_words=False)
    answer = answers.read([question], req.text[: answers.SHORT_ANSWER_CHARS]).answers.get(name)
    return answer.value if answer is not None else None


def drafting(project: ProjectContext) -> str:
    """What Hans says once the user chose to draft in the workspace."""
    if project.project_id is None:
        return "Where: I will draft this in Hansa's workspace, outside any project."
    return "Where: I will draft this in Hansa's workspace, not on the live site."


async def _create_or_draft(req: PlanningRequest) -> str | None:
    """The answer to "no project yet: create one, or draft in the workspace?": ``WORKSPACE``,
    or the id of the project it names, created now (by name, and its site's address if it
    gives one); None when it does neither."""
    text = req.text.strip()[: answers.SHORT_ANSWER_CHARS]
    chosen = answers.read([_NO_PROJECT], text).answers.get(_NO_PROJECT.name)
    if chosen is not None and chosen.value == WORKSPACE:
        return WORKSPACE
    # option A, or a project named without it ("call it Aquaverter"): its name and site
    site = _SITE_ADDRESS.search(text)
    named = _NAMED.search(text) or _CREATE.match(text)
    name = named.group("name").strip(" .,;:!?\"“”'") if named is not None else ""
    if site is not None and name.lower().endswith(site.group(0).lower()):
        name = name[: -len(site.group(0))].strip(" ,;:")
        name = re.sub(r"\s+(?:at|on|with)$", "", name, flags=re.I)
    if not name:
        if site is None or named is None:
            return None
        name = site.group("host")
    created = Project(
        id=new_id(),
        tenant_id=req.tenant_id,
        name=name[:MAX_NAME],
        domain=site.group("host").lower() if site is not None else None,
        cms_platform=None,
        allowed_task_types=None,
        config={},
        created_at=req.services.clock(),
    )
    await req.services.db.write(lambda conn: projects.create(conn, created))
    req.services.context_cache.invalidate(req.tenant_id, created.id)
    req.think(f"{req.supervisor.display_name} created the project {created.name} for this plan")
    return created.id


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


def _no_project() -> str:
    return (
        "You have no project yet, so there is nowhere I could place this change, and I "
        "won't guess. Shall I:\n"
        "A) create a project for it: tell me its name, and its site's address if it has one "
        "(e.g. “create the project Aquaverter at aquaverter.ca”); or\n"
        "B) draft it in Hansa's workspace, outside any project, for you to copy or publish "
        "later?"
    )


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
