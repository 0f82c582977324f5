"""Messages of a conversation."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from hansa.domain.base import Wire


class Kind(StrEnum):
    """What a message is, which decides how the panel shows it."""

    USER = "user"
    ASSISTANT = "assistant"
    STATUS = "status"
    THINKING = "thinking"
    SYSTEM = "system"


class Author(StrEnum):
    """Who wrote a message."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    HUMAN = "human"
    """A person who took the conversation over (a handoff)."""


class Message(Wire):
    """One stored message."""

    id: str
    conversation_id: str
    turn_id: str | None
    run_id: str | None
    kind: Kind
    author: Author
    agent_id: str | None
    content: str
    created_at: datetime
    metadata: dict[str, Any]
    seq: int | None = None
    """The seq of the event that announced it (None before it is stored)."""


class Phase(StrEnum):
    """Which part of the work a thinking entry describes."""

    ROUTING = "routing"
    CONTEXT = "context"
    TRIAGE = "triage"
    PLANNING = "planning"
    REPLY = "reply"
    EXECUTION = "execution"
    VALIDATION = "validation"
