"""Context packs (seed 002 §4): what an agent's prompt says about its world, by scope.

- **rules** (``prompts.rules_pack``): the scope's rules, document-first guidance and the
  safety block, the same for every agent of the conversation;
- **global**: the date and who the agents are (the same for every agent: the prompt's
  shared beginning, issue 34); with no project in focus, a line of each of the tenant's
  projects (its entities by kind, its first documents);
- **project**: the project's facts (name, domain, CMS, the task types it allows), its
  summary (entities by kind, the latest changes: "recent activity") and its document
  tree: titles, ids and sizes in tree order, never content;
- **user**: who the conversation is with (its ``user``: name, id, email, and the caller's
  attributes such as ``tier``), when the caller named them;
- **entity**: when the conversation focuses on a workspace entity
  (``PATCH /api/conversations/{id} {focusEntityId}``), its payload, its path in the
  document tree and the documents around it (a document), and the entities linked to it.

The project's summary and tree come from ``domain.context_digest``, read through the
context cache (``engine.context_cache``): a turn does not read the documents' content.

A pack is a list of items, each kept or dropped whole by ``context_budget.fit``: an item's
``priority`` says what goes first when the budget is short (0 is kept longest), and an
item's ``group`` names what a drop report counts ("document tree: 12 of 40 titles").
Everything here is pure: the context stage reads the data, this module shapes it.

Tokens are estimated, not counted: ``estimate_tokens`` is characters / 4, rounded up,
and each prompt message costs ``MESSAGE_TOKENS`` more (decision 0015). No adapter exposes
a tokenizer cheap enough for every turn (the local model's runs on its worker thread).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from hansa.domain.agent import AgentDefinition
from hansa.domain.context_digest import DocumentOutline, ProjectDigest, TenantOverview
from hansa.domain.project import ProjectContext
from hansa.domain.workspace import WorkspaceEdge, WorkspaceEntity

TOKEN_ESTIMATE = "chars/4"
"""How the engine counts tokens, as ``context_usage`` reports it."""
MESSAGE_TOKENS = 4
"""What a prompt message costs beyond its text (its role and separators)."""
FIELD_CHARS = 2_000
"""The longest value of the focused entity's payload that goes in whole (longer: cut)."""

MAX_RELATED = 10
"""The documents around a focused document (parent, children, siblings) its pack names."""

Scope = Literal["rules", "global", "project", "user", "entity"]

# Priorities: what a short budget keeps longest (0) and drops first (highest).
ESSENTIAL = 0
PAYLOAD = 1
TREE = 2
LINKED = 3
ACTIVITY = 3
ROSTER = 4


def estimate_tokens(text: str) -> int:
    """The estimated tokens of ``text``: characters / 4, rounded up."""
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class Item:
    """One line (or block) of a pack, kept or dropped whole."""

    text: str
    priority: int
    group: str
    """What a drop report counts it as (``document tree``, ``linked entities``…)."""

    @property
    def tokens(self) -> int:
        """Its estimated size, with its line break."""
        return estimate_tokens(self.text) + 1


@dataclass(frozen=True, slots=True)
class Pack:
    """One scope's context: a heading and its items, in the order they are written."""

    scope: Scope
    heading: str
    items: tuple[Item, ...]

    def render(self, kept: Sequence[Item] | None = None) -> str:
        """The pack as prompt text (only ``kept`` items, when given), empty without items."""
        items = self.items if kept is None else kept
        if not items:
            return ""
        return "\n".join([f"## {self.heading}", *(i.text for i in items)])


def global_pack(
    now: datetime, roster: Sequence[AgentDefinition], overview: TenantOverview | None = None
) -> Pack:
    """The date, who the agents of the team are (the roster's visible ones) and, with
    ``overview`` (no project in focus), a line of each project: the same for every agent,
    so that it stays in the prompt's shared beginning."""
    items = [Item(f"Today is {now:%A, %d %B %Y} (UTC).", ESSENTIAL, "date")]
    for other in roster:
        if other.visible:
            line = f"- {other.display_name} ({other.id}), {other.role}: {other.role_summary}"
            items.append(Item(line, ROSTER, "agents"))
    if len(items) > 1:
        items.insert(1, Item("Your team:", ROSTER, "agents"))
    if overview is not None:
        items += _projects(overview)
    return Pack("global", "Team and date", tuple(items))


def _projects(overview: TenantOverview) -> list[Item]:
    if not overview.projects:
        return [Item("Projects: none yet.", ESSENTIAL, "projects")]
    shown = len(overview.projects)
    more = f", the newest {shown} of {overview.total}" if overview.total > shown else ""
    items = [Item(f"Projects ({overview.total}{more}):", TREE, "projects")]
    for brief in overview.projects:
        line = f"- {brief.name} [{brief.id}]"
        line += f", {brief.domain}" if brief.domain else ""
        line += f": {counts_text(brief.counts)}"
        if brief.top_documents:
            line += "; documents " + ", ".join(f"“{t}”" for t in brief.top_documents)
        items.append(Item(line, TREE, "projects"))
    return items


def counts_text(counts: dict[str, int]) -> str:
    """``4 documents, 1 goal``: entities by kind, the most numerous first."""
    if not counts:
        return "no entities yet"
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in ordered)


def project_pack(
    project: ProjectContext,
    documents: Sequence[_Node],
    digest: ProjectDigest | None = None,
) -> Pack:
    """The project's facts, its summary (with ``digest``: entities by kind and the latest
    changes), then its document tree (titles, ids and sizes in order, no content)."""
    if project.is_cross_project and not project.project_name:
        return Pack("project", "Project", (Item(project.describe(), ESSENTIAL, "facts"),))
    facts = [f"Project: {project.project_name or project.project_id}"]
    if project.project_id:
        facts.append(f"id {project.project_id}")
    if project.project_domain:
        facts.append(f"domain {project.project_domain}")
    if project.cms_platform:
        facts.append(f"CMS {project.cms_platform}")
    allowed = project.allowed_task_types
    scope = "every task type" if allowed is None else ", ".join(allowed) or "no task type"
    items = [
        Item(", ".join(facts) + ".", ESSENTIAL, "facts"),
        Item(f"Allowed task types: {scope}.", ESSENTIAL, "facts"),
    ]
    if digest is not None:
        items.append(Item(f"Workspace: {counts_text(digest.counts)}.", ESSENTIAL, "summary"))
        if digest.recent:
            items.append(Item("Recent activity (newest first):", ACTIVITY, "recent activity"))
        for change in digest.recent:
            line = (
                f"- {change.updated_at:%d %b %Y}: {change.action} {change.kind} "
                f"“{change.name}” [{change.id}]"
            )
            items.append(Item(line, ACTIVITY, "recent activity"))
    tree = document_tree(documents)
    if tree:
        items.append(
            Item(f"Documents ({len(tree)}, in order; titles, no content):", TREE, "document tree")
        )
        items += [Item(line, TREE, "document tree") for line in tree]
    return Pack("project", "Project", tuple(items))


class _Node(Protocol):
    """A document as the tree needs it (an entity, or its ``DocumentOutline``)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def position(self) -> int: ...
    @property
    def created_at(self) -> datetime: ...


def _children(documents: Sequence[_Node]) -> dict[str | None, list[_Node]]:
    """Each document's children in sibling order (None: the tops, and the documents whose
    parent is not among them)."""
    ids = {d.id for d in documents}
    children: dict[str | None, list[_Node]] = {}
    for doc in documents:
        parent = doc.parent_id if doc.parent_id in ids else None
        children.setdefault(parent, []).append(doc)
    for siblings in children.values():
        siblings.sort(key=lambda d: (d.position, d.created_at, d.id))
    return children


def document_tree(documents: Sequence[_Node]) -> list[str]:
    """One line per document, depth-first in sibling order, indented by depth: its title,
    id and (an outline's) size. A document whose parent is not among them starts a tree
    of its own."""
    children = _children(documents)
    lines: list[str] = []
    stack = [(doc, 0) for doc in reversed(children.get(None, []))]
    while stack:
        doc, depth = stack.pop()
        lines.append(f"{'  ' * depth}- {doc.name} [{doc.id}]{_size(doc)}")
        stack += [(child, depth + 1) for child in reversed(children.get(doc.id, []))]
    return lines


def _size(doc: _Node) -> str:
    chars = doc.chars if isinstance(doc, DocumentOutline) else 0
    if chars <= 2:  # "{}": no fields
        return ""
    return f" ({chars / 1000:.1f}k chars)" if chars >= 1000 else f" ({chars} chars)"


def document_path(documents: Sequence[_Node], document_id: str) -> list[str]:
    """The titles from the top of the tree down to the document (empty: not among them)."""
    by_id = {d.id: d for d in documents}
    path: list[str] = []
    at = by_id.get(document_id)
    while at is not None and len(path) <= len(by_id):  # a cycle cannot loop forever
        path.insert(0, at.name)
        at = by_id.get(at.parent_id) if at.parent_id else None
    return path


def user_pack(user: dict[str, Any]) -> Pack:
    """Who the conversation is with: their name, id and email, then each attribute the
    caller gave (``tier: gold``), an attribute dropped before the person is."""
    ident = [f"id {user.get('id')}"]
    if user.get("email"):
        ident.append(str(user["email"]))
    name = user.get("displayName") or "a user"
    items = [Item(f"You are talking with {name} ({', '.join(ident)}).", ESSENTIAL, "user")]
    for key, value in user.items():
        if key not in ("id", "displayName", "email"):
            items.append(Item(f"- {key}: {_value(value)}", PAYLOAD, "user attributes"))
    return Pack("user", "User", tuple(items))


def entity_pack(
    focus_id: str,
    entity: WorkspaceEntity | None,
    linked: Sequence[tuple[WorkspaceEdge, WorkspaceEntity]],
    documents: Sequence[_Node] = (),
) -> Pack:
    """The focused entity's payload, its path and the documents around it (a document of
    ``documents``, the project's tree), and the entities linked to it (name, kind,
    relation; a linked document's path)."""
    if entity is None:
        gone = f"The conversation focuses on entity {focus_id}, which no longer exists."
        return Pack("entity", "In focus", (Item(gone, ESSENTIAL, "entity"),))
    head = f"In focus: the {entity.kind} “{entity.name}” [{entity.id}]."
    items = [Item(head, ESSENTIAL, "entity")]
    path = document_path(documents, entity.id) if entity.kind == "document" else []
    if path:
        items.append(Item(f"Path: {' / '.join(path)}", ESSENTIAL, "path"))
    for key, value in entity.data.items():
        items.append(Item(f"- {key}: {_value(value)}", PAYLOAD, "payload fields"))
    if linked:
        items.append(Item("Linked:", LINKED, "linked entities"))
    for edge, other in linked:
        arrow = f"{edge.relation} →" if edge.from_id == entity.id else f"← {edge.relation}"
        line = f"- {arrow} {other.kind} “{other.name}” [{other.id}]"
        where = document_path(documents, other.id) if other.kind == "document" else []
        line += f" at {' / '.join(where)}" if len(where) > 1 else ""
        items.append(Item(line, LINKED, "linked entities"))
    if path:
        items += _related(documents, entity)
    return Pack("entity", "In focus", tuple(items))


def _related(documents: Sequence[_Node], entity: WorkspaceEntity) -> list[Item]:
    """The documents around a focused document: its parent, children and siblings."""
    children = _children(documents)
    by_id = {d.id: d for d in documents}
    parent = by_id.get(entity.parent_id) if entity.parent_id else None
    around = [("parent", parent)] if parent is not None else []
    around += [("child", d) for d in children.get(entity.id, [])]
    siblings = children.get(parent.id if parent else None, [])
    around += [("sibling", d) for d in siblings if d.id != entity.id]
    if not around:
        return []
    shown = around[:MAX_RELATED]
    more = f", {len(shown)} of {len(around)}" if len(around) > len(shown) else ""
    items = [Item(f"Related documents{more}:", LINKED, "related documents")]
    for how, doc in shown:
        items.append(Item(f"- {how}: “{doc.name}” [{doc.id}]", LINKED, "related documents"))
    return items


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= FIELD_CHARS else text[: FIELD_CHARS - 1] + "…"
