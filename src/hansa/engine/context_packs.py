"""Context packs (seed 002 §4): what an agent's prompt says about its world, by scope.

- **global**: the date and who the agents are (the same for every agent: the prompt's
  shared beginning, issue 34);
- **project**: the project's facts (name, domain, CMS, the task types it allows) and its
  document tree: titles and ids in tree order, never content;
- **user**: who the conversation is with (its ``user``: name, id, email, and the caller's
  attributes such as ``tier``), when the caller named them;
- **entity**: when the conversation focuses on a workspace entity
  (``PATCH /api/conversations/{id} {focusEntityId}``), its payload and the entities
  linked to it.

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
from typing import Any, Literal

from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.domain.workspace import WorkspaceEdge, WorkspaceEntity

TOKEN_ESTIMATE = "chars/4"
"""How the engine counts tokens, as ``context_usage`` reports it."""
MESSAGE_TOKENS = 4
"""What a prompt message costs beyond its text (its role and separators)."""
FIELD_CHARS = 2_000
"""The longest value of the focused entity's payload that goes in whole (longer: cut)."""

Scope = Literal["global", "project", "user", "entity"]

# Priorities: what a short budget keeps longest (0) and drops first (highest).
ESSENTIAL = 0
PAYLOAD = 1
TREE = 2
LINKED = 3
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


def global_pack(now: datetime, roster: Sequence[AgentDefinition]) -> Pack:
    """The date, and who the agents of the team are (the roster's visible ones): the same
    for every agent, so that it stays in the prompt's shared beginning."""
    items = [Item(f"Today is {now:%A, %d %B %Y} (UTC).", ESSENTIAL, "date")]
    for other in roster:
        if other.visible:
            line = f"- {other.display_name} ({other.id}), {other.role}: {other.role_summary}"
            items.append(Item(line, ROSTER, "agents"))
    if len(items) > 1:
        items.insert(1, Item("Your team:", ROSTER, "agents"))
    return Pack("global", "Team and date", tuple(items))


def project_pack(project: ProjectContext, documents: Sequence[WorkspaceEntity]) -> Pack:
    """The project's facts, then its document tree (titles and ids in order, no content)."""
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
    tree = document_tree(documents)
    if tree:
        items.append(
            Item(f"Documents ({len(tree)}, in order; titles only):", TREE, "document tree")
        )
        items += [Item(line, TREE, "document tree") for line in tree]
    return Pack("project", "Project", tuple(items))


def document_tree(documents: Sequence[WorkspaceEntity]) -> list[str]:
    """One line per document, depth-first in sibling order, indented by depth: its title
    and id. A document whose parent is not among them starts a tree of its own."""
    ids = {d.id for d in documents}
    children: dict[str | None, list[WorkspaceEntity]] = {}
    for doc in documents:
        parent = doc.parent_id if doc.parent_id in ids else None
        children.setdefault(parent, []).append(doc)
    for siblings in children.values():
        siblings.sort(key=lambda d: (d.position, d.created_at, d.id))
    lines: list[str] = []
    stack = [(doc, 0) for doc in reversed(children.get(None, []))]
    while stack:
        doc, depth = stack.pop()
        lines.append(f"{'  ' * depth}- {doc.name} [{doc.id}]")
        stack += [(child, depth + 1) for child in reversed(children.get(doc.id, []))]
    return lines


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
) -> Pack:
    """The focused entity's payload and the entities linked to it (name, kind, relation)."""
    if entity is None:
        gone = f"The conversation focuses on entity {focus_id}, which no longer exists."
        return Pack("entity", "In focus", (Item(gone, ESSENTIAL, "entity"),))
    head = f"In focus: the {entity.kind} “{entity.name}” [{entity.id}]."
    items = [Item(head, ESSENTIAL, "entity")]
    for key, value in entity.data.items():
        items.append(Item(f"- {key}: {_value(value)}", PAYLOAD, "payload fields"))
    if linked:
        items.append(Item("Linked:", LINKED, "linked entities"))
    for edge, other in linked:
        arrow = f"{edge.relation} →" if edge.from_id == entity.id else f"← {edge.relation}"
        line = f"- {arrow} {other.kind} “{other.name}” [{other.id}]"
        items.append(Item(line, LINKED, "linked entities"))
    return Pack("entity", "In focus", tuple(items))


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= FIELD_CHARS else text[: FIELD_CHARS - 1] + "…"
