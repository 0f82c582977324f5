"""A planning message said whole streams as a reply's text does (``turns/deltas.say_whole``,
what ``PlanningRequest.say`` writes with)."""

from __future__ import annotations

from hansa.domain import event, message
from hansa.engine.runtime.recorder import Batch
from hansa.engine.turns import deltas


def _payloads(batch: Batch) -> list[event.Payload]:
    return [new.payload for new, _ in batch.items]


def test_the_deltas_come_first_under_the_messages_id_and_add_up_to_it() -> None:
    batch = Batch("c1", "t1")
    text = "Goal: a new page.\n\nBefore I plan this I need a few details."
    msg_id = deltas.say_whole(batch, text, agent_id="chief", max_chars=16, metadata={"a": 1})

    *streamed, said = _payloads(batch)
    assert all(isinstance(p, event.TextDeltaData) for p in streamed)
    assert isinstance(said, event.MessageData)
    assert said.message_id == msg_id and said.content == text
    assert said.kind is message.Kind.ASSISTANT and said.author is message.Author.ASSISTANT
    parts = [p.delta for p in streamed if isinstance(p, event.TextDeltaData)]
    assert "".join(parts) == text and max(map(len, parts)) == 16 and len(parts) == 4
    assert {p.message_id for p in streamed if isinstance(p, event.TextDeltaData)} == {msg_id}
    stored = batch.items[-1][1]
    assert stored is not None and stored.metadata == {"a": 1} and stored.agent_id == "chief"
    assert {new.agent_id for new, _ in batch.items} == {"chief"}


def test_a_short_message_is_one_delta_and_a_run_batch_names_its_run() -> None:
    batch = Batch("c1", "t1").for_run("r1")
    deltas.say_whole(batch, "Thanks.", agent_id="chief", max_chars=2048)

    assert [type(p) for p in _payloads(batch)] == [event.TextDeltaData, event.MessageData]
    assert {new.run_id for new, _ in batch.items} == {"r1"}
