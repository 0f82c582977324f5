"""The messaging webhook's body and ids (engine/turns/inbound.py): the seed's body parses as
written; a message's ids are the same for each delivery and another tenant's are others."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hansa.engine.turns.inbound import InboundMessage, derived_id

SEED = {
    "id": "msg-1",
    "conversationId": "0b5e9f8e-1c1a-4d55-9d1f-7f0b8e2a9c11",
    "orgId": "acme",
    "from": {"principalId": "user-42", "principalType": "user"},
    "to": {"principalId": "assistant:support", "principalType": "assistant"},
    "content": "Where is my order?",
    "contentType": "text/plain",
    "sequence": 7,
    "priority": "normal",
    "createdAt": "2026-11-27T10:30:00Z",
}


def test_the_seeds_body_parses_as_written_and_dumps_back_the_same() -> None:
    msg = InboundMessage.model_validate(SEED)
    assert msg.sender.principal_id == "user-42" and msg.to.principal_id == "assistant:support"
    dumped = msg.model_dump(mode="json", by_alias=True)
    assert dumped["from"] == SEED["from"] and dumped["createdAt"].startswith("2026-11-27T10:30")
    with pytest.raises(ValidationError):
        InboundMessage.model_validate({**SEED, "threadId": "x"})


def test_ids_are_the_same_for_each_delivery_and_differ_by_tenant_and_kind() -> None:
    first = derived_id("acme", "msg-1", "message")
    assert first == derived_id("acme", "msg-1", "message") and len(first) == 26
    assert first != derived_id("other", "msg-1", "message")
    assert first != derived_id("acme", "msg-1", "turn")
    assert first != derived_id("acme", "msg-2", "message")
