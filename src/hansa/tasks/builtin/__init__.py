"""The built-in task types, registered through the same hook plugins use."""

from __future__ import annotations

from hansa.tasks.builtin import (
    audit,
    cms,
    content,
    entities,
    entity_queries,
    graph_nodes,
    mcp_call,
    review,
    scratchpad,
    tickets,
    utility,
    webhook,
)
from hansa.tasks.registry import Hook

BUILTIN_HOOKS: tuple[Hook, ...] = (
    entities.register,
    entity_queries.register,
    scratchpad.register,
    cms.register,
    tickets.register,
    audit.register,
    webhook.register,
    content.register,
    utility.register,
    review.register,
    graph_nodes.register,
    mcp_call.register,
)
