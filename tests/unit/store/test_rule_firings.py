"""The last firings of each rule: one row per matched rule and evaluation, the oldest pruned
past the limit in the same transaction, read newest first and per tenant."""

from __future__ import annotations

from datetime import timedelta

from factories import NOW
from hansa.domain.base import new_id
from hansa.domain.rules import Action, Firing, Rule, RuleSpec
from hansa.store import rules, tenants
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

OTHER = "globex"


def _firing(rule_id: str, matched: bool = True) -> Firing:
    action = Action(type="context.update", params={"set": {"rule": rule_id}})
    return Firing(rule_id=rule_id, priority=0, matched=matched, conditions=[], actions=[action])


def _rule(tenant_id: str = T) -> Rule:
    spec = RuleSpec(
        name="r",
        trigger="message.received",
        actions=[Action(type="context.update", params={"set": {"x": 1}})],
    )
    return Rule(
        **spec.model_dump(), id=new_id(), tenant_id=tenant_id, created_at=NOW, updated_at=NOW
    )


def _evaluate(db: Database, firings: list[Firing], n: int, tenant_id: str = T) -> None:
    """``n`` evaluations, a minute apart, each in a conversation of its own (c0, c1, ...)."""
    for i in range(n):
        at = NOW + timedelta(minutes=i)
        db.write_now(
            lambda conn, i=i, at=at: rules.record_firings(
                conn, tenant_id, "message.received", f"c{i}", firings, at
            )
        )


def test_only_matched_rules_are_recorded_newest_first(db: Database) -> None:
    hit, miss = _rule(), _rule()
    _evaluate(db, [_firing(hit.id), _firing(miss.id, matched=False)], 3)

    found = db.write_now(lambda conn: rules.firings(conn, T, hit.id))
    missed = db.write_now(lambda conn: rules.firings(conn, T, miss.id))

    assert [f.conversation_id for f in found] == ["c2", "c1", "c0"]
    assert [f.created_at for f in found] == sorted((f.created_at for f in found), reverse=True)
    assert found[0].id > found[1].id > found[2].id
    assert {f.trigger for f in found} == {"message.received"}
    assert found[0].actions == _firing(hit.id).actions
    assert missed == []


def test_each_rule_keeps_only_its_last_firings(db: Database) -> None:
    busy, quiet = _rule(), _rule()
    extra = 5
    _evaluate(db, [_firing(busy.id)], rules.FIRINGS_KEPT + extra)
    _evaluate(db, [_firing(quiet.id)], 2)

    kept = db.write_now(lambda conn: rules.firings(conn, T, busy.id))
    other = db.write_now(lambda conn: rules.firings(conn, T, quiet.id))
    three = db.write_now(lambda conn: rules.firings(conn, T, busy.id, limit=3))

    newest = [f"c{i}" for i in reversed(range(extra, rules.FIRINGS_KEPT + extra))]
    assert [f.conversation_id for f in kept] == newest
    assert [f.conversation_id for f in other] == ["c1", "c0"]
    assert [f.id for f in three] == [f.id for f in kept[:3]]


def test_one_evaluation_with_a_rule_twice_prunes_once(db: Database) -> None:
    rule = _rule()
    _evaluate(db, [_firing(rule.id), _firing(rule.id)], rules.FIRINGS_KEPT)

    kept = db.write_now(lambda conn: rules.firings(conn, T, rule.id))

    assert len(kept) == rules.FIRINGS_KEPT
    assert kept[0].conversation_id == f"c{rules.FIRINGS_KEPT - 1}"


def test_firings_and_last_fired_stay_within_their_tenant(db: Database) -> None:
    db.write_now(lambda conn: tenants.ensure(conn, OTHER, NOW))
    mine, theirs, never = _rule(), _rule(OTHER), _rule()
    _evaluate(db, [_firing(mine.id)], 3)
    _evaluate(db, [_firing(theirs.id)], 1, tenant_id=OTHER)
    ids = [mine.id, theirs.id, never.id]

    last = db.write_now(lambda conn: rules.last_fired(conn, T, ids))
    last_other = db.write_now(lambda conn: rules.last_fired(conn, OTHER, ids))
    peeked = db.write_now(lambda conn: rules.firings(conn, T, theirs.id))

    assert last == {mine.id: NOW + timedelta(minutes=2)}
    assert last_other == {theirs.id: NOW}
    assert peeked == []
    assert db.write_now(lambda conn: rules.last_fired(conn, T, [])) == {}


def test_deleting_a_rule_forgets_its_firings(db: Database) -> None:
    rule, kept = _rule(), _rule()
    db.write_now(lambda conn: rules.create(conn, rule))
    _evaluate(db, [_firing(rule.id), _firing(kept.id)], 2)

    db.write_now(lambda conn: rules.delete(conn, T, rule.id))

    assert db.write_now(lambda conn: rules.firings(conn, T, rule.id)) == []
    assert len(db.write_now(lambda conn: rules.firings(conn, T, kept.id))) == 2
