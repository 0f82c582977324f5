"""Turns through the in-process app: the model's reply streamed, and a failing model told truly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.models.function import FunctionModel
from inprocess.asgi import of_type, running_app, said, sse_events

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

REPLY = "Fresh from the oven, every morning: bread you can taste the care in."


def _words(messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> Iterator[str]:
    assert p.purpose == "reply"
    yield from (word + " " for word in REPLY.split())


async def test_a_plain_turn_streams_the_models_reply_and_ends_done_completed(
    tmp_path: Path,
) -> None:
    model = FunctionModel(stream_function=_words)
    async with running_app(tmp_path, model, delta_flush_chars=16) as hansa:
        cid = await hansa.conversation()
        posted = await hansa.post(cid, "What is a good tagline for a bakery?")
        response = await hansa.client.get(
            f"/api/conversations/{cid}/events",
            params={"after": posted["seq"] - 1, "until": "done"},
        )
        convo = await hansa.ok("GET", f"/api/conversations/{cid}")
        messages = await hansa.ok("GET", f"/api/conversations/{cid}/messages")

    assert response.status_code == 200
    events = [e for e in sse_events(response.text) if e["turnId"] == posted["turnId"]]
    deltas = [e["data"]["delta"] for e in of_type(events, "text_delta")]
    (reply,) = said(events)
    assert len(deltas) > 1, "the reply reached the stream in pieces, before the message"
    assert "".join(deltas).strip() == reply.strip() == REPLY
    assert events[-1]["type"] == "done" and events[-1]["data"]["status"] == "completed"
    assert len(of_type(events, "done")) == 1
    assert convo["state"] == "idle"
    assert [(m["kind"], m["content"].strip()) for m in messages if m["kind"] != "thinking"] == [
        ("user", "What is a good tagline for a bakery?"),
        ("assistant", REPLY),
    ]


async def test_a_turn_whose_model_raises_fails_truthfully_and_the_next_one_recovers(
    tmp_path: Path,
) -> None:
    calls: list[str] = []

    def flaky(messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> str:
        calls.append(p.purpose)
        if len(calls) == 1:
            raise ConnectionError("upstream model is down (secret detail)")
        return "Back again."

    async with running_app(tmp_path, FunctionModel(flaky)) as hansa:
        cid = await hansa.conversation()
        failed = await hansa.turn(cid, "Please improve our SEO traffic")
        convo = await hansa.ok("GET", f"/api/conversations/{cid}")
        llm_calls = await hansa.ok("GET", "/api/llm-calls", params={"conversationId": cid})
        timeline = await hansa.ok("GET", f"/api/conversations/{cid}/timeline")
        recovered = await hansa.turn(cid, "Try again please")

    assert [e["type"] for e in failed][-2:] == ["error", "done"]
    assert len(of_type(failed, "done")) == 1
    assert failed[-1]["data"]["status"] == "failed"
    error = failed[-2]["data"]
    assert error["code"] == "provider_error"
    assert "secret detail" not in error["message"], "the user is not shown the provider's words"
    (apology,) = said(failed)
    assert "could not finish" in apology and "the language model did not answer" in apology
    assert "secret detail" not in apology
    assert convo["state"] == "idle", "the conversation is free again"
    assert len(llm_calls) == 1 and llm_calls[0]["success"] is False
    assert "upstream model is down" in llm_calls[0]["error"]
    assert [t["kind"] for t in timeline][-2:] == ["error", "done"]
    assert timeline[-1]["summary"] == "Turn failed"
    assert said(recovered) == ["Back again."]
    assert recovered[-1]["data"]["status"] == "completed"
