"""A conversation's rolling summary versions in the store: paged newest first, read one by
one, tenant-bound."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.base import utcnow
from hansa.domain.summary import ConversationSummary, StateUpdate, SummaryFacts
from hansa.store import summaries
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def _version(cid: str, version: int) -> ConversationSummary:
    facts = SummaryFacts(
        ids=["01JQ7ZP3V5K2M8N4R6T9W1X3Y5"],
        kept_message_ids=[f"paste{version}"],
        dropped_message_ids=["m1", "m2"],
        state_updates=[StateUpdate(agent_id="chief", set={"goal": f"g{version}"})],
    )
    return ConversationSummary(
        conversation_id=cid,
        version=version,
        covered_through_seq=10 * version,
        covered_messages=2 * version,
        text=f"version {version}",
        facts=facts,
        created_at=utcnow(),
    )


def test_versions_page_newest_first_and_read_back_whole(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()

    def add(conn: Connection) -> None:
        summaries.lock(conn, T, cid)
        for v in (1, 2, 3):
            summaries.add(conn, T, _version(cid, v))

    db.write_now(add)

    def page(before: int | None, limit: int) -> list[int]:
        found = db.write_now(lambda conn: summaries.page(conn, T, cid, before, limit))
        return [s.version for s in found]

    assert page(None, 20) == [3, 2, 1]
    assert page(None, 2) == [3, 2] and page(2, 2) == [1] and page(1, 2) == []
    two = db.write_now(lambda conn: summaries.get(conn, T, cid, 2))
    assert two.facts.kept_message_ids == ["paste2"]
    assert two.facts.state_updates == [StateUpdate(agent_id="chief", set={"goal": "g2"})]
    assert two == db.write_now(lambda conn: summaries.page(conn, T, cid, 3, 1))[0]


def test_an_unknown_version_or_another_tenants_conversation_is_not_found(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: summaries.get(conn, T, cid, 1))
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: summaries.page(conn, "globex", cid, None, 20))
