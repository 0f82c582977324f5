"""``GET /api/projects/{id}/mcp-tools``: a project's MCP servers and their tools."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hansa.api.models.base import ErrorInfo, Out
from hansa.domain.base import Wire


class McpToolOut(Out):
    """One tool as its server describes it (``McpToolOut.of`` a ``ToolFacts``), and what the
    laws make of a call to it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    """The JSON schema ``mcp.call``'s ``arguments`` must match."""
    read_only: bool | None = Field(alias="readOnlyHint")
    destructive: bool | None = Field(alias="destructiveHint")
    needs_confirmation: bool
    """True unless ``readOnlyHint`` is true: a call waits for the user's confirmation."""


class McpServerOut(Wire):
    """One server of ``config.mcpServers``: its tools, or why they could not be listed."""

    name: str
    transport: Literal["stdio", "http"]
    tools: list[McpToolOut] = Field(default_factory=list)
    error: ErrorInfo | None = None
    """Set when the server could not be reached or refused (its tools are then empty)."""


class McpToolsOut(Wire):
    """The project's servers in config order."""

    servers: list[McpServerOut]
