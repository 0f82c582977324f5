"""The workspace connector: entities and edges the built-in task types work on."""

from __future__ import annotations

import abc
from typing import Any

Entity = dict[str, Any]


class Workspace(abc.ABC):
    """Typed entity storage for one tenant (implemented over the database by the engine)."""

    @abc.abstractmethod
    async def create(
        self,
        kind: str,
        name: str,
        data: dict[str, Any],
        *,
        project_id: str | None,
        parent_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> Entity:
        """Create an entity; the same idempotency key returns the first one."""

    @abc.abstractmethod
    async def get(self, entity_id: str, *, deleted: bool = False) -> Entity:
        """An entity; TaskFailed(not_found) if there is none."""

    @abc.abstractmethod
    async def update(self, entity_id: str, patch: dict[str, Any]) -> Entity:
        """Merge ``patch`` into the entity."""

    @abc.abstractmethod
    async def set_deleted(self, entity_id: str, deleted: bool) -> Entity:
        """Delete (reversibly) or restore."""

    @abc.abstractmethod
    async def purge(self, entity_id: str) -> None:
        """Remove for good."""

    @abc.abstractmethod
    async def link(self, from_id: str, to_id: str, relation: str) -> dict[str, Any]:
        """An explicit edge between two entities."""

    @abc.abstractmethod
    async def find(
        self, kind: str, field: str, value: str, *, project_id: str | None
    ) -> Entity | None:
        """The live entity of ``kind`` with ``data[field] == value``."""

    @abc.abstractmethod
    async def named(self, kind: str, name: str, *, project_id: str | None) -> list[Entity]:
        """The live entities of ``kind`` called ``name``, ignoring case."""
