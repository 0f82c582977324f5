"""Agent definitions: personas with a responsibility, capabilities and model settings."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from hansa.domain.base import Wire

SUPERVISOR_ID = "chief"
"""The supervisor, Hans, who routes, plans and validates."""


class Category(StrEnum):
    """Where an agent sits in the team (seed 000 §13.5)."""

    SUPERVISOR = "supervisor"
    LEAD = "lead"
    EXECUTION = "execution"
    UTILITY = "utility"


class AgentModelSettings(Wire):
    """How an agent calls its model; ``model`` None means the server's default."""

    model: str | None = None
    temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(default=256, ge=1, le=8192)


class AgentDefinition(Wire):
    """One agent of the roster."""

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    display_name: str = Field(min_length=1, max_length=80)
    role: str = Field(min_length=1, max_length=80)
    """The role without the person's name, e.g. "Growth Lead"."""
    role_summary: str = Field(min_length=1, max_length=500)
    category: Category
    capabilities: tuple[str, ...] = ()
    example_prompts: tuple[str, ...] = ()
    visible: bool = True
    ordering: int = 0
    color: str = "#64748b"
    model_settings: AgentModelSettings = AgentModelSettings()
    instructions: str = Field(default="", max_length=4000)
    """How this agent works, added to its prompts (``hansa.toml``: ``instructions``)."""
    default_graph_id: str | None = Field(default=None, min_length=1, max_length=36)
    """A prompt graph that answers for this agent: a message routed to it runs the graph
    (the conversation's tenant's graph of that id) instead of the model's reply."""
    webhooks: dict[str, str] = Field(default_factory=dict)
    """How an external assistant is reached (seed 001's agent principal): ``message``, the
    URL each message addressed to it is POSTed to, signed; empty for the roster's agents."""
    message_webhook_id: str | None = Field(default=None, max_length=36)
    """The webhook (``/api/webhooks``) that delivers those messages: its URL, its sealed
    secret and its delivery log (``engine/webhooks/agent_messages.py``)."""

    @property
    def initials(self) -> str:
        """Two letters for an avatar."""
        words = self.display_name.split()
        return (words[-1][:2] if len(words) == 1 else words[0][0] + words[-1][0]).upper()
