"""A project's MCP servers (``config.mcpServers``): their shape, checked when the project is
written, and read again (secrets opened) when a tool is listed or called; and the operator's
stdio servers (``[mcp_servers.<name>]`` in ``hansa.toml``), the only ones a project may name.

Each entry names a server the project's ``mcp.call`` steps may use::

    {"name": "crm", "transport": "http", "url": "https://mcp.example.com/mcp",
     "headers": {"Authorization": "Bearer …"}}
    {"name": "files", "transport": "stdio"}

Header values named as credentials (``Authorization``, ``X-Api-Key``…) are secrets under
the house rule (``domain/secrets.py``): sealed at rest, shown as ``***``. A stdio server
starts a process on Hansa's own machine, as Hansa's user: it could read the server's
secret key and database. So its command is the operator's alone, written in the server's
config with its arguments and environment::

    [mcp_servers.files]
    command = "python"
    args = ["/opt/mcp/files_server.py"]
    env = { FILES_TOKEN = "…" }

and a project (any tenant's, local mode's too) only names one (``{"name": "files",
"transport": "stdio"}``). The process starts with a scrubbed environment
(``child_environment``): none of Hansa's own variables, whatever the operator wrote.
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
    """A server Hansa starts as a process and talks to over its stdin and stdout: one of
    the operator's (``operator_servers``), never a tenant's."""

    transport: Literal["stdio"]
    command: str = Field(min_length=1, max_length=1024)
    args: list[Annotated[str, Field(max_length=4096)]] = Field(default_factory=list, max_length=64)
    env: dict[str, str] = Field(default_factory=dict, max_length=64)


class StdioChoice(_Server):
    """A project's stdio entry: the name of one of the operator's stdio servers."""

    transport: Literal["stdio"]


class HttpServer(_Server):
    """A server reached over streamable HTTP, through the outbound guard."""

    transport: Literal["http"]
    url: str = Field(min_length=1, max_length=2048)
    headers: dict[str, str] = Field(default_factory=dict, max_length=32)


Server = Annotated[StdioChoice | HttpServer, Field(discriminator="transport")]
_SERVERS: TypeAdapter[list[Server]] = TypeAdapter(list[Server])
OPERATOR_SECTION = "mcp_servers"
"""The ``hansa.toml`` table of the operator's stdio servers, by name."""
_OPERATORS = ("command", "args", "env")
_SAFE_ENV_PREFIXES = ("HANSA_",)
_SAFE_ENV_NAMES = frozenset({"DATABASE_URL", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE"})


def operator_servers(config: Mapping[str, Any]) -> dict[str, StdioServer]:
    """The operator's stdio servers from ``hansa.toml`` (``[mcp_servers.<name>]`` tables of
    ``command``, ``args``, ``env``, ``timeoutSeconds``).

    Raises:
        errors.ConfigError: The table or one of its servers is not of that shape.
    """
    tables = config.get(OPERATOR_SECTION, {})
    if not isinstance(tables, Mapping):
        raise errors.ConfigError(f"[{OPERATOR_SECTION}] must be a table of server tables")
    found: dict[str, StdioServer] = {}
    for name, table in tables.items():
        if not isinstance(table, Mapping):
            raise errors.ConfigError(f"[{OPERATOR_SECTION}.{name}] must be a table")
        try:
            found[name] = StdioServer.model_validate({**table, "name": name, "transport": "stdio"})
        except ValidationError as exc:
            raise errors.ConfigError(f"[{OPERATOR_SECTION}.{name}]: {exc}") from None
    return found


def child_environment(server: StdioServer) -> dict[str, str]:
    """The environment a stdio server's process gets beyond the MCP SDK's few safe
    variables (``PATH``, ``HOME``…): the operator's ``env`` without anything that opens
    Hansa's data (``HANSA_*``, a database URL or password)."""
    return {
        k: v
        for k, v in server.env.items()
        if not k.upper().startswith(_SAFE_ENV_PREFIXES) and k.upper() not in _SAFE_ENV_NAMES
    }


def parse(value: Any) -> list[StdioChoice | HttpServer]:
    """``config.mcpServers`` as servers.

    Raises:
        errors.InvalidInput: Not a list of servers of the shape above, two with one name,
            too many, a stdio entry with a command of its own (``details.field``
            ``config.mcpServers``), or an HTTP server's ``url`` that is not
            ``http(s)://host[/path]``; ``details.field`` names the offending place
            (``config.mcpServers[0].url``).
    """
    where = f"config.{SECTION}"
    if not isinstance(value, list):
        raise errors.InvalidInput(f"{where} must be a list of servers", details={"field": where})
    if len(value) > MAX_SERVERS:
        raise errors.InvalidInput(
            f"{where} may name at most {MAX_SERVERS} servers", details={"field": where}
        )
    if any(_commands(entry) for entry in value):
        raise errors.InvalidInput(
            f"{where}: a stdio server's command is the operator's alone: name one of the "
            "server's own (an entry of its name and transport stdio, configured in "
            f"hansa.toml as [{OPERATOR_SECTION}.<name>]), or use an http server",
            details={"field": where},
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


def _commands(entry: Any) -> bool:
    return (
        isinstance(entry, Mapping)
        and entry.get("transport") == "stdio"
        and any(k in entry for k in _OPERATORS)
    )


def unknown_stdio(config: Mapping[str, Any], operator: Mapping[str, StdioServer]) -> str | None:
    """The first stdio server ``config`` names that the operator has not configured."""
    entries = config.get(SECTION)
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, Mapping) and entry.get("transport") == "stdio":
            if entry.get("name") not in operator:
                return str(entry.get("name"))
    return None


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
