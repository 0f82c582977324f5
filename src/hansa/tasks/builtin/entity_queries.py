"""Finding workspace entities (seed 002 §8.3, §8.4): search, list by kind, metadata.

All three read only and never return a document's content: search and list give each
entity's id, kind, name and place; metadata adds its description, the names of its
fields and its content's length, for naming entities without reading them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hansa.tasks.base import Params, Result, TaskContext, TaskType
from hansa.tasks.registry import Register
from hansa.tasks.workspace import Entity, Workspace, entity_summary

Kind = Literal[
    "document",
    "task",
    "goal",
    "plan",
    "milestone",
    "risk",
    "requirement",
    "page",
    "product",
    "ticket",
]
"""The kinds of workspace entities (those of ``entity.create`` and the built-in
connectors' pages, products and tickets)."""

SEARCH_LIMIT = 25
"""Results a search gives at most."""
LIST_LIMIT = 100
"""Entities a list gives at most."""
METADATA_LIMIT = 50
"""Ids one metadata call may ask about."""


class SearchEntities(Params):
    query: str = Field(min_length=1, max_length=200)
    """Text the entity's name or fields hold (ignoring case)."""
    entity_types: list[Kind] = Field(default_factory=list, alias="entityTypes", max_length=10)
    """Only these kinds (every kind when empty)."""
    limit: int = Field(default=10, ge=1, le=SEARCH_LIMIT)


class ListEntities(Params):
    entity_type: Kind = Field(alias="entityType")
    limit: int = Field(default=50, ge=1, le=LIST_LIMIT)


class EntityMetadata(Params):
    entity_ids: list[str] = Field(alias="entityIds", min_length=1, max_length=METADATA_LIMIT)


def _ws(ctx: TaskContext) -> Workspace:
    ws: Workspace = ctx.connector("workspace")
    return ws


async def _search(p: SearchEntities, ctx: TaskContext) -> Result:
    kinds = ", ".join(p.entity_types) or "entity"
    found = await _ws(ctx).search(
        p.query, kinds=p.entity_types, project_id=ctx.project_id, limit=p.limit + 1
    )
    await ctx.report("search", kinds, p.query, "success")
    return {
        "entities": [entity_summary(e) for e in found[: p.limit]],
        "more": len(found) > p.limit,
    }


async def _list(p: ListEntities, ctx: TaskContext) -> Result:
    found, total = await _ws(ctx).list_kind(p.entity_type, project_id=ctx.project_id, limit=p.limit)
    await ctx.report("list", p.entity_type, f"{total} in all", "success")
    return {"entities": [entity_summary(e) for e in found], "total": total}


async def _metadata(p: EntityMetadata, ctx: TaskContext) -> Result:
    found = await _ws(ctx).get_many(p.entity_ids)
    known = {e.id for e in found}
    for entity in found:
        await ctx.report("read", entity.kind, entity.name, "success", entity.id)
    return {
        "entities": [_metadata_of(e) for e in found],
        "missing": [i for i in dict.fromkeys(p.entity_ids) if i not in known],
    }


def _metadata_of(entity: Entity) -> dict[str, Any]:
    content = entity.data.get("content", entity.data.get("html"))
    description = entity.data.get("description")
    return {
        **entity_summary(entity),
        "description": description if isinstance(description, str) else None,
        "fields": sorted(entity.data),
        "contentLength": len(content) if isinstance(content, str) else 0,
    }


def register(add: Register) -> None:
    """Register entity.search, entity.list and entity.metadata."""
    cap = "workspace"
    add(
        TaskType(
            "entity.search",
            "Search workspace entities by name or text; gives ids, kinds and names "
            f"(at most {SEARCH_LIMIT}), no content.",
            SearchEntities,
            _search,
            cap,
        )
    )
    add(
        TaskType(
            "entity.list",
            f"List workspace entities of one kind (at most {LIST_LIMIT}), no content.",
            ListEntities,
            _list,
            cap,
        )
    )
    add(
        TaskType(
            "entity.metadata",
            "Names, descriptions, field names and content lengths of workspace entities "
            "by id, without their content.",
            EntityMetadata,
            _metadata,
            cap,
        )
    )
