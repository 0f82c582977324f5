"""A worker's presence (store/presence.py): a dead owner's running job is claimed at the next
look for takeovers though its lease is still live; a present owner's, or one of an owner that
never held a presence, is not. Owners die for real here: a child process holds the presence
and is killed (SIGKILL)."""

import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import psycopg

from hansa.domain.base import utcnow
from hansa.domain.job import Job, JobKind
from hansa.store import presence, queue
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database
from hansa.store.migrate import _upgrade

LEASE = timedelta(minutes=5)  # never expires in a test: every takeover is by presence

HOLD = """
import sys, time
import sqlalchemy as sa
from hansa.store import presence
held = presence.of(sa.make_url(sys.argv[1]), sys.argv[2])
assert held.hold()
print("held", flush=True)
time.sleep(600)
"""


def _present(url: str, owner: str) -> subprocess.Popen[str]:
    """A process that holds ``owner``'s presence on ``url`` until it is killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, url, owner], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait(10)
    if proc.stdout is not None:
        proc.stdout.close()


def _claimed_by(db: Database, owner: str) -> Job:
    db.write_now(lambda conn: queue.enqueue(conn, T, JobKind.TURN, {}, utcnow(), key=owner))
    (job,) = db.write_now(lambda conn: queue.claim(conn, owner, utcnow(), lease=LEASE, limit=1))
    return job


def _takeovers(db: Database, owner: str) -> list[Job]:
    now = utcnow()
    return db.write_now(lambda conn: queue.claim(conn, owner, now, lease=LEASE, limit=10))


def _past_restart_grace(db: Database) -> None:
    """Just after PostgreSQL started only leases count: wait that out (once per server)."""
    started = db.write_now(
        lambda conn: conn.exec_driver_sql(
            "SELECT extract(epoch FROM now() - pg_postmaster_start_time())"
        ).scalar()
    )
    time.sleep(max(0.0, presence.RESTART_GRACE_SECONDS + 0.5 - float(started)))


def test_a_dead_owners_job_is_taken_over_before_its_lease_ends_on_postgres(
    pg_db: Database,
) -> None:
    _past_restart_grace(pg_db)
    url = pg_db.engine_url().render_as_string(hide_password=False)
    alive, dead = presence.owner_name("alive"), presence.owner_name("dead")
    holders = {owner: _present(url, owner) for owner in (alive, dead)}
    try:
        kept, lost = _claimed_by(pg_db, alive), _claimed_by(pg_db, dead)
        old = _claimed_by(pg_db, "an older worker, with no presence")
        assert _takeovers(pg_db, "rescuer") == [], "present owners keep their jobs"
        _kill(holders[dead])
        time.sleep(0.5)  # the server ends the session on the closed socket
        (taken,) = _takeovers(pg_db, "rescuer")
        assert (taken.id, taken.epoch, taken.attempts) == (lost.id, lost.epoch + 1, 2)
        assert taken.lease_owner == "rescuer"
        assert {kept.id, old.id}.isdisjoint({j.id for j in _takeovers(pg_db, "rescuer")})
    finally:
        for proc in holders.values():
            _kill(proc)


def test_a_dead_owners_leases_are_ended_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/hansa.db"
    db = Database(url)
    try:
        db.write_now(_upgrade)
        alive, dead = presence.owner_name("alive"), presence.owner_name("dead")
        holders = {owner: _present(url, owner) for owner in (alive, dead)}
        me = presence.of(db.engine_url(), presence.owner_name("rescuer"))
        try:
            assert me.hold()
            kept, lost = _claimed_by(db, alive), _claimed_by(db, dead)
            _claimed_by(db, "an older worker, with no presence")
            owners = db.write_now(presence.running_owners)
            assert me.abandoned(owners) == [], "both present owners are alive"
            _kill(holders[dead])
            assert me.abandoned(owners) == [dead]
            assert me.abandoned(owners) == [], "found once: its file is gone"
            now = utcnow()
            db.write_now(lambda conn: presence.end_leases(conn, [dead], now))
            (taken,) = _takeovers(db, "rescuer")
            assert (taken.id, taken.epoch) == (lost.id, lost.epoch + 1)
            assert kept.id != taken.id
        finally:
            me.close()
            for proc in holders.values():
                _kill(proc)
    finally:
        db.close()


def test_the_postgres_lock_is_keyed_by_the_owners_name(pg_db: Database) -> None:
    url = pg_db.engine_url().render_as_string(hide_password=False)
    owner = presence.owner_name("keyed")
    holder = _present(url, owner)
    try:
        dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)
        with psycopg.connect(dsn, autocommit=True) as conn:
            held = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s"
                " AND objid = hashtext(%s)::oid AND objsubid = 2 AND granted",
                (presence.LOCK_SPACE, owner),
            ).fetchone()
        assert held == (1,)
    finally:
        _kill(holder)
