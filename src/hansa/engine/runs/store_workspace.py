"""The tasks layer's Workspace, implemented over the store (one transaction per call).

Changes are writes, each of which drops the context packs' cached digests of its project
once committed (``engine.context_cache``); ``get``, ``find_by_slug`` and ``named`` are
reads (``Database.read``, which runs ``named``'s scan of a kind on a reader thread).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.workspace import WorkspaceEntity
from hansa.engine.runtime.services import Services
from hansa.store import workspace
from hansa.tasks.base import TaskFailed
from hansa.tasks.workspace import Edge, Entity, Workspace

T = TypeVar("T")
P = ParamSpec("P")


class StoreWorkspace(Workspace):
    """Workspace entities of one tenant in Hansa's database."""

    def __init__(self, services: Services, tenant_id: str) -> None:
        self._services = services
        self._tenant = tenant_id

    async def _write(self, fn: Callable[[Connection], T]) -> T:
        try:
            done = await self._services.db.write(fn)
        except errors.NotFound as exc:
            raise TaskFailed(exc.message, code="not_found") from exc
        # committed: the context packs' digests of the project (of the tenant, for an edge
        # or a purge) are out of date
        project_id = done.project_id if isinstance(done, WorkspaceEntity) else None
        self._services.context_cache.invalidate(self._tenant, project_id)
        return done

    async def _read(
        self, fn: Callable[Concatenate[Connection, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        try:
            return await self._services.db.read(fn, *args, **kwargs)
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
            lambda conn: workspace.create(
                conn,
                self._tenant,
                project_id,
                kind,
                name,
                data,
                now,
                parent_id=parent_id,
                idempotency_key=idempotency_key,
            )
        )

    async def get(self, entity_id: str, *, deleted: bool = False) -> Entity:
        """An entity."""
        return await self._read(workspace.get, self._tenant, entity_id, deleted=deleted)

    async def update(self, entity_id: str, patch: dict[str, Any]) -> Entity:
        """Merge a patch."""
        now = self._services.clock()
        return await self._write(
            lambda conn: workspace.update(conn, self._tenant, entity_id, patch, now)
        )

    async def set_deleted(self, entity_id: str, deleted: bool) -> Entity:
        """Delete or restore."""
        when = self._services.clock() if deleted else None
        return await self._write(
            lambda conn: workspace.set_deleted(conn, self._tenant, entity_id, when)
        )

    async def purge(self, entity_id: str) -> None:
        """Remove for good."""
        await self._write(lambda conn: workspace.purge(conn, self._tenant, entity_id))

    async def link(self, from_id: str, to_id: str, relation: str) -> Edge:
        """An edge."""
        now = self._services.clock()
        return await self._write(
            lambda conn: workspace.link(conn, self._tenant, from_id, to_id, relation, now)
        )

    async def find_by_slug(self, kind: str, slug: str, *, project_id: str | None) -> Entity | None:
        """The live entity of ``kind`` whose ``data["slug"]`` is ``slug``."""
        return await self._read(workspace.find_by_slug, self._tenant, project_id, kind, slug)

    async def named(self, kind: str, name: str, *, project_id: str | None) -> list[Entity]:
        """The live entities of ``kind`` called ``name``, ignoring case."""
        wanted = name.casefold()
        found = await self._read(workspace.list_kind, self._tenant, project_id, kind)
        return [e for e in found if e.name.casefold() == wanted]

    async def search(
        self, text: str, *, kinds: Sequence[str], project_id: str | None, limit: int
    ) -> list[Entity]:
        """Entities whose name or fields hold ``text``."""
        return await self._read(
            workspace.search, self._tenant, project_id, text, tuple(kinds), limit
        )

    async def list_kind(
        self, kind: str, *, project_id: str | None, limit: int
    ) -> tuple[list[Entity], int]:
        """Some entities of a kind, and their number."""
        return await self._read(workspace.list_some, self._tenant, project_id, kind, limit)

    async def get_many(self, entity_ids: Sequence[str]) -> list[Entity]:
        """The live entities of these ids."""
        return await self._read(workspace.get_many, self._tenant, tuple(entity_ids))
