"""The laws' inputs, assembled in one place: who acts, in which project, with which
vetted targets, for every task a transaction judges.

A plan's drafts at plan time (``drafts.judge_drafts``), a run's task as it starts
(``run_job``) and a step being undone (``undo``) each need the same three inputs for
``laws.judge``: the agent the task names (the tenant's agent directory: a removed agent is
refused the same way everywhere), the project's context (read once per project and
transaction) and the operator's trusted outbound targets. A turn's tool calls get theirs
from the turn (``engine/toolbox.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import run, secrets
from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.domain.service import Service
from hansa.engine import laws
from hansa.engine.project_context import build_project_context
from hansa.engine.runs.connectors import trusted_targets
from hansa.engine.runtime.services import Services
from hansa.store import services as service_rows


class UnknownAgent(errors.InvalidInput):
    """The task names an agent the tenant does not have (or has removed)."""

    code = "unknown_agent"


@dataclass(frozen=True)
class Judged:
    """The laws' verdict on one task, with the agent and project it was judged for."""

    verdict: laws.Verdict
    agent: AgentDefinition
    project: ProjectContext


class Judge:
    """Judges the tasks of one transaction of ``tenant_id``'s."""

    def __init__(self, services: Services, conn: Connection, tenant_id: str) -> None:
        self.services = services
        self.conn = conn
        self.tenant_id = tenant_id
        self._trusted = trusted_targets(services)
        self._projects: dict[str | None, ProjectContext] = {}
        self._agents: dict[str, AgentDefinition | None] = {}
        self._services: dict[str, Service | None] = {}

    def agent(self, agent_id: str) -> AgentDefinition:
        """The agent a task names (looked up once per transaction); ``UnknownAgent`` if the
        tenant has none of that id (a registered agent removed: nobody may act for it)."""
        if agent_id not in self._agents:
            self._agents[agent_id] = self.services.agents.get(self.conn, self.tenant_id, agent_id)
        found = self._agents[agent_id]
        if found is None:
            raise UnknownAgent(f"unknown agent {agent_id!r}", details={"field": "createdByAgentId"})
        return found

    def service(self, name: str) -> Service | None:
        """The tenant's service of that name (looked up once per transaction), or None."""
        if name not in self._services:
            self._services[name] = service_rows.find(self.conn, self.tenant_id, name)
        return self._services[name]

    def project(self, project_id: str | None) -> ProjectContext:
        """The project's context, read once per transaction."""
        if project_id not in self._projects:
            self._projects[project_id] = build_project_context(
                self.conn, self.tenant_id, project_id
            )
        return self._projects[project_id]

    def task(
        self,
        task_type: str,
        parameters: dict[str, Any],
        agent_id: str,
        project_id: str | None,
        *,
        resolved: bool = True,
    ) -> Judged:
        """The laws' verdict on one task (``resolved`` False: step references allowed, at
        plan time); raises ``UnknownAgent``, never refuses by itself (the caller decides
        what a refusal does: ``Verdict.raise_for_refusal``)."""
        agent = self.agent(agent_id)
        project = self.project(project_id)
        verdict = laws.judge(
            self.services.registry,
            task_type,
            parameters,
            agent,
            project,
            resolved=resolved,
            trusted=self._trusted,
            service=self.service,
        )
        return Judged(verdict, agent, project)

    def grounds(
        self, r: run.Run, tasks: Iterable[run.Task], project: ProjectContext
    ) -> tuple[str, ...]:
        """What run ``r`` was given and found (``TaskContext.grounds``, Hans's review): its
        title and metadata (the plan as the user answered it), the project, its steps'
        parameters as written, and the results of its completed steps that no model wrote."""
        registry = self.services.registry
        found = [r.title, _text(r.metadata), project.describe(), _text(project.config)]
        for t in tasks:
            found += [t.summary, _text(t.parameters)]
            kind = registry.get(t.task_type) if t.task_type in registry else None
            written = kind is None or kind.model_written or kind.answers
            if t.status is run.TaskStatus.COMPLETED and t.result and not written:
                found.append(_text(t.result))
        return tuple(found)


def _text(value: Any) -> str:
    return json.dumps(secrets.mask(value), ensure_ascii=False, default=str)
