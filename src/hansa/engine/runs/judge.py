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

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.engine import laws
from hansa.engine.project_context import build_project_context
from hansa.engine.runs.connectors import trusted_targets
from hansa.engine.runtime.services import Services


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

    def agent(self, agent_id: str) -> AgentDefinition:
        """The agent a task names (looked up once per transaction); ``UnknownAgent`` if the
        tenant has none of that id (a registered agent removed: nobody may act for it)."""
        if agent_id not in self._agents:
            self._agents[agent_id] = self.services.agents.get(self.conn, self.tenant_id, agent_id)
        found = self._agents[agent_id]
        if found is None:
            raise UnknownAgent(f"unknown agent {agent_id!r}", details={"field": "createdByAgentId"})
        return found

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
        )
        return Judged(verdict, agent, project)
