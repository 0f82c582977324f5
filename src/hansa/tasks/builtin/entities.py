"""Workspace entity operations (seed 002 §8): create, read, update, delete, link.

Each change reports a ``start`` operation before it is made and a ``success`` after;
search, list and metadata are in ``entity_queries.py``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from hansa.tasks.base import Params, Result, TaskContext, TaskFailed, TaskType
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
    """Each end by its id, or by its type and name (a live entity of the project called
    so, ignoring case; none or several fail the call)."""

    from_id: str | None = Field(default=None, alias="fromId", min_length=1)
    from_type: EntityType | None = Field(default=None, alias="fromType")
    from_name: str | None = Field(default=None, alias="fromName", min_length=1, max_length=300)
    to_id: str | None = Field(default=None, alias="toId", min_length=1)
    to_type: EntityType | None = Field(default=None, alias="toType")
    to_name: str | None = Field(default=None, alias="toName", min_length=1, max_length=300)
    relation: str = Field(min_length=1, max_length=64, pattern=r"^[a-z_]+$")

    @model_validator(mode="after")
    def _both_ends(self) -> LinkEntities:
        for end, by_id, kind, name in (
            ("from", self.from_id, self.from_type, self.from_name),
            ("to", self.to_id, self.to_type, self.to_name),
        ):
            if by_id is None and (kind is None or name is None):
                raise ValueError(f"give {end}Id, or {end}Type and {end}Name")
        return self


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
    if ctx.state_deltas is not None:  # the agent now knows this entity (seed 002 §8.6)
        known = {"id": entity.id, "kind": p.entity_type, "name": p.name}
        ctx.state_deltas.append({"append": {"entities": [known]}})
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
    before = await _ws(ctx).get(p.entity_id)
    await ctx.report("delete", before.kind, before.name, "start", p.entity_id)
    entity = await _ws(ctx).set_deleted(p.entity_id, True)
    await ctx.report("delete", entity.kind, entity.name, "success", p.entity_id, {"deleted": True})
    return {"entityId": p.entity_id, "deleted": True}


async def _undo_delete(p: EntityRef, ctx: TaskContext) -> Result:
    entity = await _ws(ctx).set_deleted(p.entity_id, False)
    await ctx.report("update", entity.kind, entity.name, "success", p.entity_id, {"deleted": False})
    return {"entityId": p.entity_id, "deleted": False}


async def _end(ctx: TaskContext, entity_id: str | None, kind: str | None, name: str | None) -> str:
    if entity_id is not None:
        return entity_id
    assert kind is not None and name is not None  # the parameters' validator saw to it
    found = await _ws(ctx).named(kind, name, project_id=ctx.project_id)
    if len(found) != 1:
        problem = "no" if not found else f"{len(found)}"
        raise TaskFailed(
            f"{problem} {kind} called “{name}” here; name it by its id",
            code="not_found" if not found else "ambiguous",
        )
    return found[0].id


async def _link(p: LinkEntities, ctx: TaskContext) -> Result:
    from_id = await _end(ctx, p.from_id, p.from_type, p.from_name)
    to_id = await _end(ctx, p.to_id, p.to_type, p.to_name)
    await ctx.report("create", "edge", p.relation, "start")
    edge = edge_result(await _ws(ctx).link(from_id, to_id, p.relation))
    await ctx.report("create", "edge", p.relation, "success", edge["edgeId"], edge)
    if ctx.state_deltas is not None:
        known = {"from": from_id, "to": to_id, "rel": p.relation}
        ctx.state_deltas.append({"append": {"dependencies": [known]}})
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
            "Link two workspace entities with a named relation; name each end by its id, "
            "or by its type and name.",
            LinkEntities,
            _link,
            cap,
        )
    )
