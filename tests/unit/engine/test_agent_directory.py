"""The agent directory: the roster for every tenant, registered agents for their own tenant
only, one error per caller (404 for the resource itself, 422 naming the caller's field)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from hansa import errors
from hansa.domain.agent import AgentDefinition, Category
from hansa.domain.base import utcnow
from hansa.engine.roster import default_roster
from hansa.engine.runtime.agent_directory import AgentDirectory
from hansa.store import principals, tenants
from hansa.store.db import Database
from hansa.store.migrate import _upgrade

BOT = AgentDefinition(
    id="deskBot",
    display_name="Desk Bot",
    role="Help desk",
    role_summary="Answers help desk questions.",
    category=Category.UTILITY,
)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path}/store.db")
    database.write_now(_upgrade)
    for tenant in ("acme", "globex"):
        database.write_now(lambda conn, t=tenant: tenants.ensure(conn, t, utcnow()))
    database.write_now(lambda conn: principals.register(conn, "acme", BOT))
    yield database
    database.close()


def test_the_roster_needs_its_supervisor(db: Database) -> None:
    with pytest.raises(errors.ConfigError):
        AgentDirectory([a for a in default_roster() if a.id != "chief"], db)


def test_a_registered_agent_belongs_to_its_tenant(db: Database) -> None:
    agents = AgentDirectory(default_roster(), db)
    acme = db.write_now(lambda conn: agents.all(conn, "acme"))
    globex = db.write_now(lambda conn: agents.all(conn, "globex"))
    assert [a.id for a in acme] == [*(a.id for a in agents.roster), "deskBot"]
    assert [a.id for a in globex] == [a.id for a in agents.roster]
    assert acme[0] is agents.supervisor
    assert db.write_now(lambda conn: agents.get(conn, "acme", "deskBot")) == BOT
    assert db.write_now(lambda conn: agents.get(conn, "globex", "deskBot")) is None
    assert agents.built_in("deskBot") is None and agents.built_in("chief") is agents.supervisor


def test_an_unknown_agent_is_404_or_422_naming_the_callers_field(db: Database) -> None:
    agents = AgentDirectory(default_roster(), db)
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: agents.addressable(conn, "globex", "deskBot"))
    with pytest.raises(errors.InvalidInput) as refused:
        db.write_now(lambda conn: agents.addressable(conn, "globex", "deskBot", field="model"))
    assert refused.value.details == {"field": "model"}

    async def awaited() -> None:
        assert await agents.require("acme", "deskBot") == BOT
        assert await agents.find("globex", "deskBot") is None
        with pytest.raises(errors.InvalidInput):
            await agents.require("acme", "nobody", field="agentId")

    anyio.run(awaited)


def test_display_names_read_the_store_only_beyond_the_roster(db: Database) -> None:
    agents = AgentDirectory(default_roster(), db)
    names = anyio.run(agents.display_names, "acme", ["chief", "deskBot", None, "gone"])
    assert names == {"chief": agents.supervisor.display_name, "deskBot": "Desk Bot"}
    db.close()  # the roster alone needs no read
    only_roster = anyio.run(agents.display_names, "acme", ["chief", "webEngineer"])
    assert set(only_roster) == {"chief", "webEngineer"}
