"""Workspace entity operations (seed 002 §8): create, read, update, delete, link."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hansa.tasks.base import Params, Result, TaskContext, TaskType
from hansa.tasks.registry import Register
from hansa.tasks.workspace import Workspace, edge_result, entity_result

EntityType = Literal["document", "task", "goal", "plan", "milestone", "risk", "requirement"]


class CreateEntity(Params):
    entity_type: EntityType = Field(alias="entityType")
    name: str = Field(min_length=1, max_length=300)
    fields: dict[str, Any] = Field(default_factory=dict)
    parent_id: str | None = Field(default=None, alias="parentId")
    """Documents form a tree (``doc_structure``): the parent document, children in order."""


class EntityRef(Params):
    entity_id: str = Field(alias="entityId", min_length=1)


class UpdateEntity(EntityRef):
    patch: dict[str, Any] = Field(min_length=1)


class LinkEntities(Params):
    from_id: str = Field(alias="fromId", min_length=1)
    to_id: str = Field(alias="toId", min_length=1)
    relation: str = Field(min_length=1, max_length=64, pattern=r"^[a-z_]+$")


def _ws(ctx: TaskContext) -> Workspace:
    ws: Workspace = ctx.connector("workspace")
    return ws


async def _create(p: CreateEntity, ctx: TaskContext) -> Result:
    await ctx.report("create", p.entity_type, p.name, "start")
    entity = await _ws(ctx).create(
        p.entity_type,
        p.name,
        p.fields,
        project_id=ctx.project_id,
        parent_id=p.parent_id,
        idempotency_key=ctx.idempotency_key,
    )
    await ctx.report(
        "create", p.entity_type, p.name, "success", entity.id, {"name": p.name, **p.fields}
    )
    return {
        "entityId": entity.id,
        "entityType": p.entity_type,
        "name": p.name,
        "parentId": p.parent_id,
        "position": entity.position,
    }


async def _undo_create(p: CreateEntity, ctx: TaskContext) -> Result:
    entity_id = ctx.outputs["self"]["entityId"]
    await _ws(ctx).set_deleted(entity_id, True)
    await ctx.report("delete", p.entity_type, p.name, "success", entity_id, {"deleted": True})
    return {"entityId": entity_id, "deleted": True}


async def _read(p: EntityRef, ctx: TaskContext) -> Result:
    entity = await _ws(ctx).get(p.entity_id)
    await ctx.report("read", entity.kind, entity.name, "success", entity.id)
    return {"entity": entity_result(entity)}


async def _update(p: UpdateEntity, ctx: TaskContext) -> Result:
    ws = _ws(ctx)
    before = await ws.get(p.entity_id)
    await ctx.report("update", before.kind, before.name, "start", p.entity_id)
    after = await ws.update(p.entity_id, p.patch)
    await ctx.report("update", after.kind, after.name, "success", p.entity_id, p.patch)
    previous = {k: before.data.get(k) for k in p.patch if k != "name"}
    if "name" in p.patch:
        previous["name"] = before.name
    return {"entityId": p.entity_id, "previous": previous}


async def _undo_update(p: UpdateEntity, ctx: TaskContext) -> Result:
    previous = ctx.outputs["self"]["previous"]
    after = await _ws(ctx).update(p.entity_id, previous)
    await ctx.report("update", after.kind, after.name, "success", p.entity_id, previous)
    return {"entityId": p.entity_id, "restored": True}


async def _delete(p: EntityRef, ctx: TaskContext) -> Result:
    entity = await _ws(ctx).set_deleted(p.entity_id, True)
    await ctx.report("delete", entity.kind, entity.name, "success", p.entity_id, {"deleted": True})
    return {"entityId": p.entity_id, "deleted": True}


async def _undo_delete(p: EntityRef, ctx: TaskContext) -> Result:
    entity = await _ws(ctx).set_deleted(p.entity_id, False)
    await ctx.report("update", entity.kind, entity.name, "success", p.entity_id, {"deleted": False})
    return {"entityId": p.entity_id, "deleted": False}


async def _link(p: LinkEntities, ctx: TaskContext) -> Result:
    edge = edge_result(await _ws(ctx).link(p.from_id, p.to_id, p.relation))
    await ctx.report("update", "edge", p.relation, "success", edge["edgeId"], edge)
    return {"edgesCreated": [edge]}


def register(add: Register) -> None:
    """Register the entity task types."""
    cap = "workspace"
    add(
        TaskType(
            "entity.create",
            "Create a workspace entity (document, task, goal, …).",
            CreateEntity,
            _create,
            cap,
            undo=_undo_create,
        )
    )
    add(TaskType("entity.read", "Read a workspace entity.", EntityRef, _read, cap))
    add(
        TaskType(
            "entity.update",
            "Change fields of a workspace entity.",
            UpdateEntity,
            _update,
            cap,
            undo=_undo_update,
        )
    )
    add(
        TaskType(
            "entity.delete",
            "Delete a workspace entity (restorable).",
            EntityRef,
            _delete,
            cap,
            undo=_undo_delete,
        )
    )
    add(
        TaskType(
            "entity.link",
            "Link two workspace entities with a named relation.",
            LinkEntities,
            _link,
            cap,
        )
    )
