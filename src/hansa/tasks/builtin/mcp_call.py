"""``mcp.call``: call a tool of one of the project's MCP servers (``config.mcpServers``).

The four laws hold as for every task type:

- allowed scope: the ``integrations`` capability (the Technical Lead's), and the project's
  ``allowedTaskTypes`` if it has them;
- clarity: ``server`` must name one of the project's servers, ``tool`` one of its tools, and
  ``arguments`` must match the tool's ``inputSchema`` (422 naming each problem);
- no return: a tool whose ``readOnlyHint`` is true changes nothing; every other one (a
  destructive tool, or one without hints: MCP reads a missing ``destructiveHint`` as true)
  cannot be taken back, so it waits for the user's confirmation of its exact parameters.
  So does a read-only call whose arguments carry an earlier step's result (``{{ref.x}}``):
  what it sends leaves for good, as with a GET webhook.

The laws judge without waiting on the network, from the latest listing of the server
(``mcp_client.CATALOG``, filled by ``GET /api/projects/{id}/mcp-tools`` and by every call).
A server never listed in this process yet is judged strictly: every call to it waits for
confirmation, and its arguments are checked when it runs. The call itself always lists
again: it refuses arguments that break the schema, and refuses to run a tool the laws let
through as read-only if the server no longer says so, before calling anything.
"""

from __future__ import annotations

import difflib
from typing import Any

import anyio
from pydantic import Field

from hansa.tasks.base import Judging, Params, Result, TaskContext, TaskFailed, TaskType
from hansa.tasks.connectors import mcp_client, mcp_config
from hansa.tasks.connectors.mcp_client import CATALOG, McpServers, ToolFacts
from hansa.tasks.registry import Register

CAPABILITY = "integrations"
"""Who may call an MCP tool: the agents holding integrations (the Technical Lead)."""


class McpCall(Params):
    server: str = Field(min_length=1, max_length=64)
    """The server's ``name`` in ``config.mcpServers``."""
    tool: str = Field(min_length=1, max_length=128)
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The tool's arguments, checked against its ``inputSchema``."""


def _judged(p: McpCall, judging: Judging) -> dict[str, ToolFacts] | None:
    entry = mcp_config.stored_entry(judging.config, p.server)
    return None if entry is None else CATALOG.known(mcp_config.fingerprint(entry))


def _carries_results(judging: Judging) -> bool:
    return "{{" in str(judging.written.get("arguments", ""))


def _reversible(p: McpCall, judging: Judging) -> bool:
    tool = (_judged(p, judging) or {}).get(p.tool)
    return tool is not None and not tool.needs_confirmation and not _carries_results(judging)


def _problems(p: McpCall, judging: Judging) -> list[str]:
    if mcp_config.stored_entry(judging.config, p.server) is None:
        return [f"server: {mcp_client.unknown_server(judging.config, p.server)}"]
    listing = _judged(p, judging)
    if listing is None:
        return []  # never listed here: checked when it runs
    tool = listing.get(p.tool)
    if tool is None:
        return [f"tool: {_no_tool(p, listing)}"]
    if _carries_results(judging):
        return []  # plan time: placeholders stand for results; checked again when it runs
    return mcp_client.argument_problems(tool.input_schema, p.arguments)


def _no_tool(p: McpCall, listing: dict[str, ToolFacts]) -> str:
    near = difflib.get_close_matches(p.tool, listing, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"the MCP server {p.server!r} has no tool called {p.tool!r}{hint}"


async def _call(p: McpCall, ctx: TaskContext) -> Result:
    servers: McpServers = ctx.connector("mcp")
    key, server = servers.server(p.server)
    before = (CATALOG.known(key) or {}).get(p.tool)
    await ctx.report("call", "mcp_tool", f"{p.server}/{p.tool}", "start")
    try:
        with anyio.fail_after(server.timeout_seconds):
            async with mcp_client.session(server, servers.policy) as opened:
                listing = CATALOG.keep(key, await mcp_client.list_tools(opened))
                tool = listing.get(p.tool)
                if tool is None:
                    raise TaskFailed(_no_tool(p, listing), code="not_found")
                problems = mcp_client.argument_problems(tool.input_schema, p.arguments)
                if problems:
                    raise TaskFailed("; ".join(problems), code="invalid_arguments")
                if tool.needs_confirmation and before is not None and not before.needs_confirmation:
                    raise TaskFailed(
                        f"{p.tool!r} was read-only when this step was judged, and the server "
                        "no longer says so: nothing was called; ask again to confirm it",
                        code="hints_changed",
                    )
                called = await opened.call_tool(p.tool, p.arguments)
    except TimeoutError:
        raise TaskFailed(
            f"the MCP server {p.server!r} did not answer in {server.timeout_seconds:g} s",
            code="timeout",
            retryable=True,
        ) from None
    result = mcp_client.result_of(called)
    if called.is_error:
        raise TaskFailed(f"{p.server}/{p.tool}: {result['text'][:500]}", code="tool_error")
    return {"server": p.server, "tool": p.tool, **result}


def register(add: Register) -> None:
    """Register mcp.call: reversible only for a tool its server calls read-only."""
    add(
        TaskType(
            "mcp.call",
            "Call a tool of one of the project's MCP servers: {server, tool, arguments}.",
            McpCall,
            _call,
            CAPABILITY,
            is_reversible_by_system=False,
            reversible_when=_reversible,
            problems=_problems,
        )
    )
