"""The workspace connector: entities and edges the built-in task types work on."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from hansa.domain import workspace

Entity = workspace.WorkspaceEntity
"""A workspace entity (``domain.workspace.WorkspaceEntity``)."""
Edge = workspace.WorkspaceEdge
"""An edge between two entities (``domain.workspace.WorkspaceEdge``)."""


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
    async def link(self, from_id: str, to_id: str, relation: str) -> Edge:
        """An explicit edge between two entities."""

    @abc.abstractmethod
    async def find_by_slug(self, kind: str, slug: str, *, project_id: str | None) -> Entity | None:
        """The live entity of ``kind`` whose ``data["slug"]`` is ``slug``."""

    @abc.abstractmethod
    async def named(self, kind: str, name: str, *, project_id: str | None) -> list[Entity]:
        """The live entities of ``kind`` called ``name``, ignoring case."""

    @abc.abstractmethod
    async def search(
        self, text: str, *, kinds: Sequence[str], project_id: str | None, limit: int
    ) -> list[Entity]:
        """At most ``limit`` live entities whose name or fields hold ``text`` (ignoring
        case), of ``kinds`` (any when empty); name matches first."""

    @abc.abstractmethod
    async def list_kind(
        self, kind: str, *, project_id: str | None, limit: int
    ) -> tuple[list[Entity], int]:
        """At most ``limit`` live entities of ``kind`` in tree order, and how many there are."""

    @abc.abstractmethod
    async def get_many(self, entity_ids: Sequence[str]) -> list[Entity]:
        """The live entities of these ids, in the order asked; unknown ids are left out."""


def entity_result(entity: Entity) -> dict[str, Any]:
    """An entity as task results show it (camelCase; times in ISO 8601)."""
    return {
        "id": entity.id,
        "projectId": entity.project_id,
        "kind": entity.kind,
        "name": entity.name,
        "parentId": entity.parent_id,
        "position": entity.position,
        "data": entity.data,
        "createdAt": entity.created_at.isoformat(),
        "updatedAt": entity.updated_at.isoformat(),
        "deleted": entity.deleted,
        "idempotencyKey": entity.idempotency_key,
    }


def edge_result(edge: Edge) -> dict[str, Any]:
    """An edge as task results show it."""
    return {
        "edgeId": edge.id,
        "fromId": edge.from_id,
        "toId": edge.to_id,
        "relation": edge.relation,
    }


def entity_summary(entity: Entity) -> dict[str, Any]:
    """An entity as search and list results show it: who it is, none of its fields."""
    return {
        "id": entity.id,
        "kind": entity.kind,
        "name": entity.name,
        "parentId": entity.parent_id,
        "projectId": entity.project_id,
        "updatedAt": entity.updated_at.isoformat(),
    }
