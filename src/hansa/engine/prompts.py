"""The system prompts the engine gives agents, in one place (seed 002 §4.3): the layered
rules every agent of a conversation shares, and who each agent is.

The layers, in the prompt's order: the base rules (``base_rules``, always sent), then the
**rules** pack (``rules_pack``: the scope's rules, document-first guidance with a project
in scope, the safety block), the data packs, and last the agent's own part (``persona``,
with ``TOOL_RULES`` when it is offered tools). Everything but that last part depends only
on the conversation, never on the agent or the turn's time, so that a turn routed to
another agent reuses the evaluated beginning (issue 34). The rules pack's items go through
``context_budget.fit`` like the others: a small window drops the document guidance before
the scope's rules and the safety block, and says so.
"""

from __future__ import annotations

from typing import Literal

from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.domain.workspace import WorkspaceEntity
from hansa.engine.context_packs import ESSENTIAL, TREE, Item, Pack

PromptScope = Literal["global", "project", "entity"]

MODES = (
    "Exploring or thinking aloud: clarify. Asking to know: answer, change nothing. An "
    "explicit request: act. Unsure which: ask."
)
"""Clarify, inform or act (seed 002 §4.4)."""

DOCUMENT_FIRST = (
    "Documents first: the tree below maps what is known (titles, no content). Find a "
    "document by its path and read only what you need; new knowledge goes in a document "
    "under the right parent; structure and plans go in documents, tasks second unless the "
    "user wants execution."
)
"""Document-first guidance (seed 002 §9.3-9.5)."""

SAFETY = (
    "Never invent ids, names, figures or results; say when you do not know. Nothing is "
    "done until a tool or a run reports it. An irreversible change needs the user's "
    "explicit confirmation."
)
"""The safety and verification block (seed 002 §4.3 layer 5; the laws of clarity and no
return, which code enforces too)."""

TOOL_RULES = (
    "Tools: call one only when the request needs it, with the ids given here or found by "
    "entity.search or entity.list (never guessed). Change the workspace by create, read, "
    "update and delete of one entity at a time; create or update the entity first, then "
    "link it with entity.link. Report what a tool returned, failures included."
)
"""Tool usage constraints (seed 002 §4.3 layer 4, §8.1-8.2): sent with the agent's own
part, and only when it is offered tools."""


def base_rules(supervisor: AgentDefinition) -> str:
    """The rules every agent of the team answers by (who the agent is comes last)."""
    return (
        f"You are one of a team of AI assistants led by {supervisor.display_name}; who you "
        "are is said at the end, before the message to answer. Answer briefly and concretely."
    )


def scope_of(project: ProjectContext, focus_id: str | None) -> PromptScope:
    """The conversation's scope (seed 002 §4.1): an entity in focus, else a project, else
    global."""
    if focus_id is not None:
        return "entity"
    return "global" if project.is_cross_project else "project"


def rules_pack(
    project: ProjectContext,
    focus_id: str | None = None,
    entity: WorkspaceEntity | None = None,
) -> Pack:
    """The scope's rules, the modes, document-first guidance (with a project in scope) and
    the safety block: the same for every agent of the conversation."""
    scope = scope_of(project, focus_id)
    name = project.project_name or project.project_id
    if scope == "global":
        said = (
            "Scope: global, no project in focus. Summarize across the projects below; ask "
            "which project before changing anything or going into one's detail."
        )
    elif scope == "project":
        said = (
            f"Scope: the project {name}: its documents and entities, no other project "
            "unless the user names it."
        )
    else:
        what = f"the {entity.kind} “{entity.name}”" if entity else f"entity {focus_id}"
        where = f" of the project {name}" if name else ""
        said = f"Scope: {what}{where}, in focus below; the rest is background."
    items = [Item(said, ESSENTIAL, "scope"), Item(MODES, ESSENTIAL, "modes")]
    if scope != "global":
        items.append(Item(DOCUMENT_FIRST, TREE, "document guidance"))
    items.append(Item(SAFETY, ESSENTIAL, "safety"))
    return Pack("rules", "Rules", tuple(items))


def persona(
    agent: AgentDefinition, *, lead: AgentDefinition | None = None, tools: bool = False
) -> str:
    """Who ``agent`` is; with ``lead``, as a member of the team that ``lead`` leads; with
    ``tools``, followed by the tool rules."""
    team = f" of a team of AI assistants led by {lead.display_name}" if lead else ""
    persona = f"You are {agent.display_name}, the {agent.role}{team}. {agent.role_summary}"
    persona = f"{persona} {agent.instructions}" if agent.instructions else persona
    return f"{persona}\n{TOOL_RULES}" if tools else persona
