"""Every agent a tenant can address: the server's roster, then the agents it registered.

One lookup for every surface (chat, routing, rules, graphs, sessions, claims, MCP, the
OpenAI, AG-UI and Agent Protocol bridges), so an agent is the same agent everywhere. The
roster comes from the config and is the same for every tenant; a registered agent (seed
001's agent principal) belongs to one tenant and is read from the store. Roster ids win:
a tenant cannot register an id of the roster (``POST /api/agents`` answers 409).

Each read has a form for a caller inside a transaction (``conn``) and an awaitable form
that opens its own read (``find``, ``listing``). A roster agent never costs a query.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.agent import SUPERVISOR_ID, AgentDefinition
from hansa.store import principals
from hansa.store.db import Database


class AgentDirectory:
    """The roster by id plus each tenant's registered agents."""

    def __init__(self, roster: Iterable[AgentDefinition], db: Database) -> None:
        self.roster: tuple[AgentDefinition, ...] = tuple(roster)
        """The roster in display order; the supervisor is found by id, never by position."""
        self._by_id = {a.id: a for a in self.roster}
        if SUPERVISOR_ID not in self._by_id:
            raise errors.ConfigError(f"the roster needs the supervisor {SUPERVISOR_ID!r}")
        self._db = db

    @property
    def supervisor(self) -> AgentDefinition:
        """Hans: the agent that routes, plans and validates."""
        return self._by_id[SUPERVISOR_ID]

    @property
    def built_ins(self) -> Mapping[str, AgentDefinition]:
        """The roster by id (the same for every tenant)."""
        return MappingProxyType(self._by_id)

    def built_in(self, agent_id: str) -> AgentDefinition | None:
        """The roster's agent with this id (the same for every tenant), else None."""
        return self._by_id.get(agent_id)

    def get(self, conn: Connection, tenant_id: str, agent_id: str) -> AgentDefinition | None:
        """The roster's agent with this id, else the tenant's registered one, else None."""
        return self._by_id.get(agent_id) or principals.find(conn, tenant_id, agent_id)

    def addressable(
        self, conn: Connection, tenant_id: str, agent_id: str, *, field: str | None = None
    ) -> AgentDefinition:
        """The agent a caller names; unknown (or another tenant's) is 422 naming ``field``,
        the caller's own name for it, or 404 when the agent is the resource itself."""
        found = self.get(conn, tenant_id, agent_id)
        if found is not None:
            return found
        if field is None:
            raise errors.NotFound(f"{agent_id!r} is not an agent of this tenant")
        raise errors.InvalidInput(f"unknown agent {agent_id!r}", details={"field": field})

    def all(self, conn: Connection, tenant_id: str) -> list[AgentDefinition]:
        """The roster, Hans first, then the agents the tenant registered."""
        return [*self.roster, *principals.list_for(conn, tenant_id)]

    def names(self) -> dict[str, str]:
        """The roster's display names by agent id."""
        return {a.id: a.display_name for a in self.roster}

    def names_of(
        self, conn: Connection, tenant_id: str, agent_ids: Iterable[str | None]
    ) -> dict[str, str]:
        """Display names of these agents; the store is read only when one is not the
        roster's (an id no longer known keeps no name: callers show the id)."""
        wanted = {i for i in agent_ids if i is not None}
        names = {i: a.display_name for i in wanted if (a := self._by_id.get(i)) is not None}
        if wanted - names.keys():
            names.update((a.id, a.display_name) for a in principals.list_for(conn, tenant_id))
        return names

    def display_name(self, conn: Connection, tenant_id: str, agent_id: str) -> str:
        """The agent's display name; its id when it is no longer known (a registered agent
        that was removed after it acted)."""
        found = self.get(conn, tenant_id, agent_id)
        return agent_id if found is None else found.display_name

    async def find(self, tenant_id: str, agent_id: str) -> AgentDefinition | None:
        """``get`` in a read of its own (none for a roster agent)."""
        if (built_in := self._by_id.get(agent_id)) is not None:
            return built_in
        return await self._db.read(lambda conn: principals.find(conn, tenant_id, agent_id))

    async def require(
        self, tenant_id: str, agent_id: str, *, field: str | None = None
    ) -> AgentDefinition:
        """``addressable`` in a read of its own."""
        if (built_in := self._by_id.get(agent_id)) is not None:
            return built_in
        return await self._db.read(
            lambda conn: self.addressable(conn, tenant_id, agent_id, field=field)
        )

    async def display_names(
        self, tenant_id: str, agent_ids: Iterable[str | None]
    ) -> dict[str, str]:
        """``names_of`` in a read of its own when one is not the roster's."""
        wanted = {i for i in agent_ids if i is not None}
        if wanted <= self._by_id.keys():
            return {i: self._by_id[i].display_name for i in wanted}
        return await self._db.read(lambda conn: self.names_of(conn, tenant_id, wanted))

    async def listing(self, tenant_id: str) -> list[AgentDefinition]:
        """``all`` in a read of its own."""
        return await self._db.read(lambda conn: self.all(conn, tenant_id))
