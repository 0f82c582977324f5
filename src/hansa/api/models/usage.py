"""Model calls, usage, and workspace entities."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from pydantic import Field

from hansa.api.models.base import Masked, MaskedText, Out, Time
from hansa.domain.llm_call import CallStatus
from hansa.domain.usage import Usage
from hansa.domain.workspace import WorkspaceEdge, WorkspaceEntity


class LlmCallOut(Out):
    """One model call, successful or not."""

    id: str
    conversation_id: str | None
    turn_id: str | None
    run_id: str | None
    node_id: str | None
    agent_id: str | None
    provider: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    latency_ms: float
    success: bool
    error: str | None
    cost_usd: float
    created_at: datetime
    status: CallStatus
    """``ok``, ``cancelled`` (cut before it answered) or ``failed``."""
    estimated: bool
    """Whether the tokens and cost are estimated (characters / 4): a cut call's provider
    never reported them."""


class EdgeOut(Out):
    """An edge between two workspace entities (``EdgeOut.of`` a ``WorkspaceEdge``)."""

    id: str = Field(alias="edgeId")
    from_id: str
    to_id: str
    relation: str


class EntityOut(Out):
    """A live workspace entity (secrets masked: in its fields, and credentials written in
    its name or key) with its edges from and to others."""

    id: str
    project_id: str | None
    kind: str
    name: MaskedText
    parent_id: str | None
    position: int
    data: Masked
    created_at: Time
    updated_at: Time
    deleted: bool
    idempotency_key: MaskedText | None
    edges: list[EdgeOut]

    @classmethod
    def of_entity(cls, entity: WorkspaceEntity, edges: Iterable[WorkspaceEdge]) -> EntityOut:
        """``entity`` as it is shown, with ``edges``."""
        shown = {**dict(entity), "deleted": entity.deleted, "edges": [EdgeOut.of(e) for e in edges]}
        return cls.model_validate(shown, by_alias=False, by_name=True)


__all__ = ["EntityOut", "LlmCallOut", "Usage"]
