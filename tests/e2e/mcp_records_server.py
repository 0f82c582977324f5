"""A small MCP server for tests/e2e/test_mcp_client.py, written with the SDK's MCPServer
(FastMCP before mcp 2): ``lookup`` is read-only, ``delete_record`` destructive, ``touch``
gives no hints. Every call is appended to the file named by ``$RECORDS_CALLS`` (one JSON
line), so the test sees what was called.

    python mcp_records_server.py stdio
    python mcp_records_server.py http <port>
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

RECORDS = {"r1": {"id": "r1", "name": "Alice"}, "r2": {"id": "r2", "name": "Bob"}}
app = MCPServer("records")


def _note(tool: str, arguments: dict[str, Any]) -> None:
    path = os.environ.get("RECORDS_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup(record_id: str) -> str:
    """Find a record by id."""
    _note("lookup", {"record_id": record_id})
    found = RECORDS.get(record_id)
    return json.dumps(found) if found else "no such record"


@app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_record(record_id: str, reason: str) -> str:
    """Delete a record for good."""
    _note("delete_record", {"record_id": record_id, "reason": reason})
    return f"deleted {record_id}"


@app.tool()
def touch(record_id: str) -> str:
    """Mark a record as seen (no hints given)."""
    _note("touch", {"record_id": record_id})
    return f"touched {record_id}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        app.run("stdio")
    else:
        app.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            json_response=True,
            stateless_http=True,
        )
