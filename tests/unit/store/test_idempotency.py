from datetime import timedelta

from hansa.domain.base import utcnow
from hansa.store import idempotency
from hansa.store.db import DEFAULT_TENANT_ID, Database

T = DEFAULT_TENANT_ID


def _ages(now_minus_abandoned: float = 600, now_minus_ttl: float = 86_400) -> idempotency.Ages:
    now = utcnow()
    return idempotency.Ages(
        abandoned_before=now - timedelta(seconds=now_minus_abandoned),
        expired_before=now - timedelta(seconds=now_minus_ttl),
    )


def test_a_key_is_reserved_once_then_replayed(db: Database) -> None:
    now = utcnow()
    assert db.write_now(lambda c: idempotency.reserve(c, T, "k", "h1", now, _ages())) is None
    running = db.write_now(lambda c: idempotency.reserve(c, T, "k", "h1", now, _ages()))
    assert running == idempotency.Stored("h1", 0, None)
    db.write_now(lambda c: idempotency.complete(c, T, "k", 201, '{"id": 1}'))
    kept = db.write_now(lambda c: idempotency.reserve(c, T, "k", "h2", now, _ages()))
    assert kept == idempotency.Stored("h1", 201, '{"id": 1}')


def test_a_reservation_nobody_answered_is_taken_over_once_abandoned(db: Database) -> None:
    long_ago = utcnow() - timedelta(minutes=30)
    db.write_now(lambda c: idempotency.reserve(c, T, "k", "h1", long_ago, _ages()))
    fresh = db.write_now(lambda c: idempotency.reserve(c, T, "k", "h1", utcnow(), _ages(3600)))
    assert fresh == idempotency.Stored("h1", 0, None), "30 minutes is not yet abandoned at 60"
    taken = db.write_now(lambda c: idempotency.reserve(c, T, "k", "h2", utcnow(), _ages()))
    assert taken is None
    again = db.write_now(lambda c: idempotency.reserve(c, T, "k", "h2", utcnow(), _ages()))
    assert again == idempotency.Stored("h2", 0, None), "the new reservation holds"


def test_an_answer_past_its_time_to_live_is_forgotten(db: Database) -> None:
    two_days_ago = utcnow() - timedelta(days=2)
    db.write_now(lambda c: idempotency.reserve(c, T, "old", "h1", two_days_ago, _ages()))
    db.write_now(lambda c: idempotency.complete(c, T, "old", 200, "{}"))
    db.write_now(lambda c: idempotency.reserve(c, T, "swept", "h1", two_days_ago, _ages()))
    db.write_now(lambda c: idempotency.reserve(c, T, "new", "h1", utcnow(), _ages()))
    assert db.write_now(lambda c: idempotency.reserve(c, T, "old", "h2", utcnow(), _ages())) is None
    assert db.write_now(lambda c: idempotency.sweep(c, _ages().expired_before)) == 1
    kept = db.write_now(lambda c: idempotency.reserve(c, T, "new", "h1", utcnow(), _ages()))
    assert kept == idempotency.Stored("h1", 0, None)
    assert (
        db.write_now(lambda c: idempotency.reserve(c, T, "swept", "h", utcnow(), _ages())) is None
    )
