"""A project's MCP servers (``config.mcpServers``): their shape, checked when the project is
written, and read again (secrets opened) when a tool is listed or called.

Each entry names a server the project's ``mcp.call`` steps may use::

    {"name": "crm", "transport": "http", "url": "https://mcp.example.com/mcp",
     "headers": {"Authorization": "Bearer …"}}
    {"name": "files", "transport": "stdio", "command": "python", "args": ["server.py"],
     "env": {"FILES_TOKEN": "…"}}

Header and environment values named as credentials (``Authorization``, ``X-Api-Key``,
``…_TOKEN``, ``…_SECRET``…) are secrets under the house rule (``domain/secrets.py``): sealed
at rest, shown as ``***``. A stdio server starts a process on Hansa's own machine, so only
the operator may configure one (see ``api/routes/projects.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from hansa import errors
from hansa.tasks.connectors.wordpress import site_problem

SECTION = "mcpServers"
"""The project config key holding the list of servers."""
MAX_SERVERS = 16

_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class _Server(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = Field(pattern=_NAME)
    """How ``mcp.call`` names the server (``{"server": "crm"}``)."""
    timeout_seconds: float = Field(default=30.0, gt=0, le=300, alias="timeoutSeconds")
    """Deadline of one listing or one call, connection included."""


class StdioServer(_Server):
    """A server Hansa starts as a process and talks to over its stdin and stdout."""

    transport: Literal["stdio"]
    command: str = Field(min_length=1, max_length=1024)
    args: list[Annotated[str, Field(max_length=4096)]] = Field(default_factory=list, max_length=64)
    env: dict[str, str] = Field(default_factory=dict, max_length=64)


class HttpServer(_Server):
    """A server reached over streamable HTTP, through the outbound guard."""

    transport: Literal["http"]
    url: str = Field(min_length=1, max_length=2048)
    headers: dict[str, str] = Field(default_factory=dict, max_length=32)


Server = Annotated[StdioServer | HttpServer, Field(discriminator="transport")]
_SERVERS: TypeAdapter[list[Server]] = TypeAdapter(list[Server])


def parse(value: Any) -> list[StdioServer | HttpServer]:
    """``config.mcpServers`` as servers.

    Raises:
        errors.InvalidInput: Not a list of servers of the shape above, two with one name,
            too many, or an HTTP server's ``url`` that is not ``http(s)://host[/path]``;
            ``details.field`` names the offending place (``config.mcpServers[0].url``).
    """
    where = f"config.{SECTION}"
    if not isinstance(value, list):
        raise errors.InvalidInput(f"{where} must be a list of servers", details={"field": where})
    if len(value) > MAX_SERVERS:
        raise errors.InvalidInput(
            f"{where} may name at most {MAX_SERVERS} servers", details={"field": where}
        )
    try:
        servers = _SERVERS.validate_python(value)
    except ValidationError as exc:
        problem = exc.errors()[0]
        loc = [str(x) for x in problem["loc"] if str(x) not in ("stdio", "http")]
        if problem["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc.append("transport")  # pydantic places it on the entry
        field = where + (f"[{loc[0]}]" if loc else "") + "".join(f".{x}" for x in loc[1:])
        raise errors.InvalidInput(f"{field}: {problem['msg']}", details={"field": field}) from None
    seen: set[str] = set()
    for i, server in enumerate(servers):
        if server.name in seen:
            field = f"{where}[{i}].name"
            raise errors.InvalidInput(
                f"{field}: another server is called {server.name!r}", details={"field": field}
            )
        seen.add(server.name)
        if isinstance(server, HttpServer):
            problem_text = site_problem(server.url)
            if problem_text is not None:
                field = f"{where}[{i}].url"
                raise errors.InvalidInput(f"{field} {problem_text}", details={"field": field})
    return servers


def uses_stdio(config: Mapping[str, Any]) -> bool:
    """Whether ``config`` names a stdio server (a process started on Hansa's machine)."""
    entries = config.get(SECTION)
    if not isinstance(entries, list):
        return False
    return any(isinstance(e, Mapping) and e.get("transport") == "stdio" for e in entries)


def stored_entry(config: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """The entry of server ``name`` as stored (secrets possibly sealed), or None."""
    entries = config.get(SECTION)
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, Mapping) and entry.get("name") == name:
            return entry
    return None


def names(config: Mapping[str, Any]) -> list[str]:
    """The names of the servers ``config`` names."""
    entries = config.get(SECTION)
    if not isinstance(entries, list):
        return []
    return [str(e["name"]) for e in entries if isinstance(e, Mapping) and "name" in e]


def fingerprint(entry: Mapping[str, Any]) -> str:
    """A key for what a server answered: the same stored entry, the same server (another
    address, command or credential is another key)."""
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
