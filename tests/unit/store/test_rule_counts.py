"""What the rules' limits read (issue 28): how many rules a tenant has, and whether a
trigger has any rule for a project without parsing them."""

from __future__ import annotations

from factories import NOW
from hansa.domain.base import new_id
from hansa.domain.rules import Action, Rule, RuleSpec
from hansa.store import rules
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def _rule(project_id: str | None = None, *, enabled: bool = True) -> Rule:
    spec = RuleSpec(
        name="r",
        trigger="context.updated",
        enabled=enabled,
        actions=[Action(type="context.update", params={"set": {"x": 1}})],
    )
    return Rule(
        **spec.model_dump(exclude={"project_id"}),
        project_id=project_id,
        id=new_id(),
        tenant_id=T,
        created_at=NOW,
        updated_at=NOW,
    )


def test_counts_and_any_for_trigger_agree_with_for_trigger(db: Database) -> None:
    def any_for(project_id: str | None) -> bool:
        return db.write_now(
            lambda conn: rules.any_for_trigger(conn, T, "context.updated", project_id)
        )

    assert db.write_now(lambda conn: rules.count(conn, T)) == 0
    assert not any_for(None)
    for rule in (_rule("p1"), _rule(enabled=False)):
        db.write_now(lambda conn, rule=rule: rules.create(conn, rule))
    assert db.write_now(lambda conn: rules.count(conn, T)) == 2
    assert (any_for(None), any_for("p1"), any_for("p2")) == (False, True, False)
    db.write_now(lambda conn: rules.create(conn, _rule()))
    assert (any_for(None), any_for("p2")) == (True, True)
    for project_id in (None, "p1", "p2"):
        found = db.write_now(
            lambda conn, p=project_id: rules.for_trigger(conn, T, "context.updated", p)
        )
        assert bool(found) == any_for(project_id)
