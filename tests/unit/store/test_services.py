"""A tenant's named services in the store, on SQLite and PostgreSQL: unique by name within a
tenant (another tenant may use the name), changed in place, forgotten; unknown names 404."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from factories import NOW
from hansa import errors
from hansa.domain.service import Service
from hansa.store import services, tenants
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def _service(name: str, tenant: str = T, **extra: object) -> Service:
    fields: dict[str, object] = {
        "id": f"{tenant}-{name}",
        "tenant_id": tenant,
        "name": name,
        "base_url": "https://logs.example",
        "headers": {"Authorization": "sealed:v1:…"},
        "unattended_methods": ["GET"],
        "created_at": NOW,
        "updated_at": NOW,
        **extra,
    }
    return Service.model_validate(fields)


def test_services_are_kept_per_tenant_by_name(db: Database) -> None:
    def setup(conn: sa.Connection) -> None:
        tenants.ensure(conn, "globex", NOW)
        services.create(conn, _service("logging"))
        services.create(conn, _service("crm"))
        services.create(conn, _service("logging", "globex"))

    db.write_now(setup)
    mine = db.write_now(lambda conn: services.list_all(conn, T))
    assert [s.name for s in mine] == ["crm", "logging"]
    assert db.write_now(lambda conn: services.names(conn, "globex")) == {"logging"}
    found = db.write_now(lambda conn: services.get(conn, T, "logging"))
    assert found == _service("logging")
    assert db.write_now(lambda conn: services.find(conn, T, "nope")) is None

    with pytest.raises(errors.Conflict):
        db.write_now(lambda conn: services.create(conn, _service("crm", id="other")))
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: services.get(conn, "globex", "crm"))


def test_a_service_is_changed_in_place_and_forgotten(db: Database) -> None:
    db.write_now(lambda conn: services.create(conn, _service("logging")))
    changed = _service("logging", base_url="https://logs2.example", unattended_methods=["POST"])
    db.write_now(lambda conn: services.replace(conn, changed))
    assert db.write_now(lambda conn: services.get(conn, T, "logging")) == changed
    assert db.write_now(lambda conn: services.count(conn, T)) == 1
    db.write_now(lambda conn: services.delete(conn, T, "logging"))
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: services.delete(conn, T, "logging"))
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: services.replace(conn, changed))
