"""The system prompts the engine gives agents: who they are, in one place."""

from __future__ import annotations

from hansa.domain.agent import AgentDefinition


def persona(agent: AgentDefinition, *, lead: AgentDefinition | None = None) -> str:
    """Who ``agent`` is; with ``lead``, as a member of the team that ``lead`` leads."""
    team = f" of a team of AI assistants led by {lead.display_name}" if lead else ""
    persona = f"You are {agent.display_name}, the {agent.role}{team}. {agent.role_summary}"
    return f"{persona} {agent.instructions}" if agent.instructions else persona
