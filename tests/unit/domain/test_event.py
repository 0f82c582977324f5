from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from hansa.domain import event


def _event(payload: event.Payload) -> event.Event:
    return event.Event(
        seq=3,
        conversation_id="c1",
        turn_id="t1",
        run_id=None,
        task_id=None,
        agent_id="chief",
        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        payload=payload,
    )


def test_wire_shape_is_api_md_envelope_with_camel_case_data() -> None:
    wire = _event(
        event.RoutingData(
            previous_agent_id="chief",
            agent_id="growthLead",
            rule_id="growth",
            matched="seo",
            reason="SEO intent",
        )
    ).to_wire()
    assert set(wire) == {
        "seq",
        "type",
        "conversationId",
        "turnId",
        "runId",
        "taskId",
        "agentId",
        "createdAt",
        "data",
    }
    assert wire["type"] == "routing"
    assert wire["data"]["previousAgentId"] == "chief"
    assert "type" not in wire["data"]


def test_stored_payload_round_trips_through_its_tag() -> None:
    original = event.TextDeltaData(message_id="m1", delta="hello")
    stored = original.model_dump(mode="json", by_alias=True, exclude={"type"})
    assert event.payload_from_stored("text_delta", stored) == original


def test_unknown_tag_is_rejected() -> None:
    with pytest.raises(ValidationError):
        event.payload_from_stored("no_such_event", {})
