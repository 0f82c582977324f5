"""The prompt of an agent that executes outside a turn (a run's step drafting, a graph's
model node, a session's step): the same shared beginning a turn's has, scoped to its
project (seed 002 §10.4: "each step spawns an executor agent with a scoped context pack").

The base rules, the rules pack of the project's scope, the date and team, and the project's
pack (a line of each project without one), then the executor's own part (who it is, its
tool rules when it is offered tools, its instructions) and its material, fitted to the
model's window by ``context_budget.fit`` like a turn's prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.engine import context_budget, context_packs, project_context, prompts
from hansa.engine.context_cache import ContextCache
from hansa.models.base import ChatMessage, Model
from hansa.store.db import Database


async def scoped_prompt(
    cache: ContextCache,
    db: Database,
    now: Callable[[], datetime],
    roster: Sequence[AgentDefinition],
    supervisor: AgentDefinition,
    tenant_id: str,
    project: ProjectContext | None,
    model: Model,
    reply: int,
    own: str,
    material: str,
) -> list[ChatMessage]:
    """The shared rules and packs of ``project``'s scope (none: global), then ``own`` (who
    answers, and how), then ``material``, fitted to ``model``'s window."""
    project = project or ProjectContext()
    digest, overview = await project_context.workspace_of(
        cache, db, tenant_id, project.project_id, overview=True
    )
    documents = digest.documents if digest else ()
    packs = (
        prompts.rules_pack(project),
        context_packs.global_pack(now(), roster, overview),
        context_packs.project_pack(project, documents, digest),
    )
    parts = context_budget.PromptParts(
        window=model.context_window,
        reply=reply,
        system=prompts.base_rules(supervisor),
        tools=0,
        message=material,
        packs=packs,
        agent=own,
    )
    return context_budget.fit(parts).prompt
