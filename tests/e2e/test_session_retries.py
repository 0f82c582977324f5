"""A session step's model call that fails transiently is made again (issue 32 item 2), over
the real server and a real OpenAI-compatible HTTP stand-in (``fake_api``): the provider
answers 503 and 429 before it answers, and the step goes through, each attempt an
``llm_calls`` row; a provider that never answers fails the step, which is in the steps log
with its error, and the session fails with it as its reason. A turn's reply goes through the
same retry and says its answer once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import (
    Server,
    events_until,
    hans_says,
    new_conversation,
    poll_until,
    running_server,
    turn,
)
from unit.models.fake_api import FakeAPI, Reply, openai_chunk, serving

FRAME = {"nextStep": "report", "state": {"checked": 1}, "text": "Rankings checked.", "done": True}
UNAVAILABLE = {"error": {"message": "The server is overloaded", "type": "server_error"}}
SLOW_DOWN = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}


def _answer(text: str) -> Reply:
    return Reply(
        events=[
            (None, openai_chunk({"role": "assistant", "content": text})),
            (None, openai_chunk({}, finish="stop")),
            (None, "[DONE]"),
        ]
    )


ANSWER = _answer(json.dumps(FRAME))


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeAPI]:
    with serving() as api:
        yield api


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, provider: FakeAPI) -> Iterator[Server]:
    tmp: Path = tmp_path_factory.mktemp("retries")
    (tmp / "hansa.toml").write_text('[agents.growthLead]\nmodel = "openai:gpt-4o-mini"\n')
    env = {
        "HANSA_OPENAI_BASE_URL": f"{provider.url}/v1",
        "HANSA_OPENAI_API_KEY": "sk-stand-in",
        "HANSA_MODEL_CALL_BACKOFF_SECONDS": "0.05",
    }
    extra = ("--config", str(tmp / "hansa.toml"))
    with running_server(tmp, env=env, extra_args=extra) as s:
        yield s


def _session_until_ended(client: httpx.Client) -> dict[str, Any]:
    started = client.post("/api/agent-sessions", json={"agentId": "growthLead", "goal": "SEO"})
    assert started.status_code == 201, started.text
    path = f"/api/agent-sessions/{started.json()['id']}"
    return poll_until(client, path, lambda s: s["status"] != "running", seconds=60)


def _calls(client: httpx.Client, session: dict[str, Any]) -> list[dict[str, Any]]:
    listed = client.get("/api/llm-calls", params={"conversationId": session["conversationId"]})
    assert listed.status_code == 200, listed.text
    return sorted(listed.json(), key=lambda c: c["status"] != "failed")


def _failed(event: dict[str, Any]) -> bool:
    return event["type"] == "session_status" and event["data"]["status"] == "failed"


def test_a_step_gets_past_a_provider_that_fails_twice(server: Server, provider: FakeAPI) -> None:
    provider.reply(Reply(503, UNAVAILABLE), Reply(429, SLOW_DOWN), ANSWER)
    with server.client() as client:
        session = _session_until_ended(client)
        steps = client.get(f"/api/agent-sessions/{session['id']}/steps").json()
        calls = _calls(client, session)
        said = client.get(f"/api/conversations/{session['conversationId']}/messages").json()

    assert (session["status"], session["reason"]) == ("completed", "done")
    [message] = [m for m in said if m["content"] == "Rankings checked."]
    assert message["metadata"] == {"sessionId": session["id"], "iteration": 1}  # shown, no ***
    assert [s["text"] for s in steps] == ["Rankings checked."]
    assert [c["status"] for c in calls] == ["failed", "failed", "ok"]
    assert "HTTP 503" in calls[0]["error"] or "HTTP 503" in calls[1]["error"]
    assert any("HTTP 429" in c["error"] for c in calls[:2])
    assert calls[2]["success"] is True and calls[2]["error"] is None
    assert {c["nodeId"] for c in calls} == {f"session:{session['id']}"}


def test_a_provider_that_never_answers_fails_the_step_and_the_session(
    server: Server, provider: FakeAPI
) -> None:
    quoting = {"error": {"message": "The server is overloaded (api_key=sk-live-123456)"}}
    provider.reply(*[Reply(503, quoting)] * 3)
    with server.client() as client:
        session = _session_until_ended(client)
        steps = client.get(f"/api/agent-sessions/{session['id']}/steps").json()
        calls = _calls(client, session)
        events = events_until(client, session["conversationId"], _failed)

    assert [c["status"] for c in calls] == ["failed"] * 3
    assert session["status"] == "failed"
    assert "HTTP 503" in session["reason"] and "overloaded" in session["reason"]
    assert "api_key=***" in session["reason"] and "sk-live" not in session["reason"]
    [step] = steps
    assert step["iteration"] == 1 and session["iteration"] == 1
    assert step["data"]["error"] == {"code": "provider_error", "message": session["reason"]}
    assert step["step"] == step["nextStep"] == "1"  # the cursor did not move
    assert step["text"] is None and step["done"] is False
    recorded = next(e["data"] for e in events if e["type"] == "session_step")
    assert recorded["iteration"] == 1 and recorded["text"] is None
    assert events[-1]["data"]["reason"] == session["reason"]


def test_a_turns_reply_gets_past_a_busy_provider_and_says_it_once(
    server: Server, provider: FakeAPI
) -> None:
    provider.reply(
        Reply(503, UNAVAILABLE), _answer("Rankings look steady, nothing to worry about.")
    )
    with server.client() as client:
        cid = new_conversation(client)
        events = turn(client, cid, "How are our rankings doing?", activeAgentId="growthLead")
        calls = _calls(client, {"conversationId": cid})

    assert events[-1]["type"] == "done" and events[-1]["data"]["status"] == "completed"
    assert hans_says(events) == ["Rankings look steady, nothing to worry about."]
    assert [c["status"] for c in calls] == ["failed", "ok"]
    assert "HTTP 503" in calls[0]["error"]
