"""The tasks layer's Workspace, implemented over the store (one transaction per call)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Connection

from hansa import errors
from hansa.engine.runtime.services import Services
from hansa.store import workspace as rows
from hansa.tasks.base import TaskFailed
from hansa.tasks.workspace import Entity, Workspace

T = TypeVar("T")


class StoreWorkspace(Workspace):
    """Workspace entities of one tenant in Hansa's database."""

    def __init__(self, services: Services, tenant_id: str) -> None:
        self._services = services
        self._tenant = tenant_id

    async def _write(self, fn: Callable[[Connection], T]) -> T:
        try:
            return await self._services.db.write(fn)
        except errors.NotFound as exc:
            raise TaskFailed(exc.message, code="not_found") from exc

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
        """Create an entity (idempotent per key)."""
        now = self._services.clock()
        return await self._write(
            lambda conn: rows.create(
                conn, self._tenant, project_id, kind, name, data, now,
                parent_id=parent_id, idempotency_key=idempotency_key,
            )
        )  # fmt: skip

    async def get(self, entity_id: str, *, deleted: bool = False) -> Entity:
        """An entity."""
        return await self._write(
            lambda conn: rows.get(conn, self._tenant, entity_id, deleted=deleted)
        )

    async def update(self, entity_id: str, patch: dict[str, Any]) -> Entity:
        """Merge a patch."""
        now = self._services.clock()
        return await self._write(
            lambda conn: rows.update(conn, self._tenant, entity_id, patch, now)
        )

    async def set_deleted(self, entity_id: str, deleted: bool) -> Entity:
        """Delete or restore."""
        when = self._services.clock() if deleted else None
        return await self._write(lambda conn: rows.set_deleted(conn, self._tenant, entity_id, when))

    async def purge(self, entity_id: str) -> None:
        """Remove for good."""
        await self._write(lambda conn: rows.purge(conn, self._tenant, entity_id))

    async def link(self, from_id: str, to_id: str, relation: str) -> dict[str, Any]:
        """An edge."""
        now = self._services.clock()
        return await self._write(
            lambda conn: rows.link(conn, self._tenant, from_id, to_id, relation, now)
        )

    async def find(
        self, kind: str, field: str, value: str, *, project_id: str | None
    ) -> Entity | None:
        """The live entity of ``kind`` with ``data[field] == value``."""
        return await self._write(
            lambda conn: rows.find_by(conn, self._tenant, project_id, kind, field, value)
        )

    async def named(self, kind: str, name: str, *, project_id: str | None) -> list[Entity]:
        """The live entities of ``kind`` called ``name``, ignoring case."""
        wanted = name.casefold()
        found = await self._services.db.scan(
            lambda conn: rows.list_kind(conn, self._tenant, project_id, kind)
        )
        return [e for e in found if str(e["name"]).casefold() == wanted]
