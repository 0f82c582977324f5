"""A stdio MCP server for tests/e2e/test_stdio_servers.py: it notes each start in the file
named by ``$STARTS`` (so a test sees whether a request started a process), and its one
read-only tool ``environment`` answers with the names of the variables it was given.

    python mcp_env_server.py
"""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

app = MCPServer("env")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def environment() -> str:
    """The names of this process's environment variables."""
    return json.dumps(sorted(os.environ))


if __name__ == "__main__":
    starts = os.environ.get("STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as f:
            f.write("started\n")
    app.run("stdio")
