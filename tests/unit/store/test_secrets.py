"""Secrets sealed at rest: the box, the key setting, and projects in a real database."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet

from hansa import errors
from hansa.domain.base import utcnow
from hansa.domain.project import Project
from hansa.domain.secrets import MASK
from hansa.settings import Settings
from hansa.store import projects, secrets
from hansa.store.db import DEFAULT_TENANT_ID, Database

KEY = Fernet.generate_key().decode()
CONFIG = {"wordpress": {"baseUrl": "https://s.example", "username": "ed", "appPassword": "p-123"}}


def test_a_sealed_config_opens_to_the_same_config_and_shows_no_secret() -> None:
    box = secrets.SecretBox((KEY,))
    sealed = box.seal(CONFIG)
    assert "p-123" not in json.dumps(sealed)
    assert sealed["wordpress"]["appPassword"].startswith(secrets.PREFIX)
    assert sealed["wordpress"]["username"] == "ed"
    assert box.seal(sealed) == sealed, "sealing twice changes nothing"
    assert box.open(sealed) == CONFIG
    assert secrets.is_sealed(sealed) and not secrets.holds_clear(sealed)
    assert secrets.holds_clear(CONFIG) and not secrets.is_sealed(CONFIG)


def test_keys_rotate_and_a_foreign_key_is_a_clear_failure() -> None:
    old, new = KEY, Fernet.generate_key().decode()
    sealed = secrets.SecretBox((old,)).seal(CONFIG)
    assert secrets.box(f"{new},{old}").open(sealed) == CONFIG, "an older key still opens"
    with pytest.raises(secrets.SecretUnreadable, match="does not list"):
        secrets.SecretBox((new,)).open(sealed)
    with pytest.raises(secrets.SecretUnreadable, match="not set"):
        secrets.SecretBox().open(sealed)


def test_without_a_key_nothing_is_sealed() -> None:
    assert secrets.box(None).seal(CONFIG) == CONFIG
    assert not secrets.box("").sealing


def test_the_key_setting_is_checked_and_never_shown() -> None:
    settings = Settings(secret_key=f"{KEY}, {Fernet.generate_key().decode()}")
    assert KEY not in repr(settings) and KEY not in str(settings.model_dump())
    assert settings.secret_keys() is not None and KEY in settings.secret_keys()
    with pytest.raises(ValueError, match="key 1 is not a Fernet key"):
        Settings(secret_key="correct horse battery staple")


def _project(config: dict) -> Project:
    return Project(
        id="p1",
        tenant_id=DEFAULT_TENANT_ID,
        name="Site",
        domain=None,
        cms_platform="wordpress",
        allowed_task_types=None,
        config=config,
        created_at=utcnow(),
    )


def _raw_config(db: Database) -> str:
    query = sa.text("SELECT config FROM projects WHERE id = 'p1'")
    return str(db.write_now(lambda conn: conn.execute(query).scalar_one()))


def test_projects_store_sealed_secrets_and_merge_them_on_update(db: Database) -> None:
    box = secrets.box(KEY)
    db.write_now(lambda conn: projects.create(conn, _project(CONFIG), box))
    assert "p-123" not in _raw_config(db)

    patch = {
        "config": {"wordpress": {**CONFIG["wordpress"], "username": "al", "appPassword": MASK}}
    }
    updated = db.write_now(
        lambda conn: projects.update(conn, DEFAULT_TENANT_ID, "p1", patch, utcnow(), box)
    )
    assert box.open(updated.config)["wordpress"] == {**CONFIG["wordpress"], "username": "al"}
    assert "p-123" not in _raw_config(db)

    moved = {"config": {"wordpress": {"baseUrl": "https://evil.example", "appPassword": MASK}}}
    with pytest.raises(errors.InvalidInput, match="sent again"):
        db.write_now(
            lambda conn: projects.update(conn, DEFAULT_TENANT_ID, "p1", moved, utcnow(), box)
        )


def test_start_up_seals_what_was_stored_in_clear(db: Database) -> None:
    db.write_now(lambda conn: projects.create(conn, _project(CONFIG)))
    assert "p-123" in _raw_config(db)
    assert db.write_now(lambda conn: projects.secrets_at_rest(conn, secrets.box(None))) == (1, 0)

    counts = db.write_now(lambda conn: projects.secrets_at_rest(conn, secrets.box(KEY)))

    assert counts == (0, 1)
    assert "p-123" not in _raw_config(db)
    stored = db.write_now(lambda conn: projects.get(conn, DEFAULT_TENANT_ID, "p1"))
    assert secrets.box(KEY).open(stored.config) == CONFIG
