"""The base model every domain type shares: camelCase on the wire, frozen in memory."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from ulid import ULID


class Wire(BaseModel):
    """A frozen model whose JSON form uses camelCase, as API.md asks."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


def new_id() -> str:
    """A new sortable id (a ULID as 26 characters)."""
    return str(ULID())


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)
