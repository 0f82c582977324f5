"""A turn whose model fails emits error then done, frees the conversation, keeps the server up."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Server, new_conversation, post, running_server, stream


@pytest.fixture(scope="module")
def flaky_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("flaky")
    script = tmp / "script.json"
    script.write_text(json.dumps([{"error": "upstream model is down"}, {"text": "Back again."}]))
    with running_server(tmp, model=f"scripted:{script}") as s:
        yield s


def test_failed_turn_ends_with_error_then_done_and_recovers(flaky_server: Server) -> None:
    with flaky_server.client() as client:
        cid = new_conversation(client)
        first = post(client, cid, "Please improve our SEO traffic")
        failed = stream(client, cid, turn_id=first["turnId"])
        convo = client.get(f"/api/conversations/{cid}").json()
        calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()

        second = post(client, cid, "Try again please")
        ok = stream(client, cid, after=failed[-1]["seq"], turn_id=second["turnId"])
        assert client.get("/healthz").status_code == 200

    types = [e["type"] for e in failed]
    assert types[-2:] == ["error", "done"]
    assert types.count("done") == 1
    assert failed[-1]["data"]["status"] == "failed"
    error = failed[-2]["data"]
    assert error["code"] == "provider_error"
    assert "could not finish" in error["message"] and "upstream" not in error["message"]
    assert convo["state"] == "idle"
    assert len(calls) == 1 and calls[0]["success"] is False
    assert "upstream model is down" in calls[0]["error"]

    assert [e["type"] for e in ok][-1] == "done" and ok[-1]["data"]["status"] == "completed"
    answer = next(e for e in ok if e["type"] == "message" and e["data"]["author"] == "assistant")
    assert answer["data"]["content"] == "Back again."


def test_unscripted_call_fails_loudly_but_safely(flaky_server: Server) -> None:
    # the script is used up: the scripted model refuses, the turn fails cleanly
    with flaky_server.client() as client:
        cid = new_conversation(client)
        turn = post(client, cid, "anything")
        events = stream(client, cid, turn_id=turn["turnId"])
    assert [e["type"] for e in events][-2:] == ["error", "done"]
    assert events[-2]["data"]["code"] == "script_exhausted"


def test_the_cli_says_a_failure_once_with_its_cause(tmp_path: Path) -> None:
    script = tmp_path / "down.json"
    script.write_text(json.dumps([{"error": "upstream model is down"}]))
    with running_server(tmp_path, model=f"scripted:{script}") as server:
        result = subprocess.run(
            [sys.executable, "-m", "hansa", "chat", "hello", "--url", server.url],
            capture_output=True,
            text=True,
            timeout=60,
        )
    out = result.stdout
    assert out.count("could not finish this reply because the language model did not") == 1
    assert "failed (provider_error)" in out and "done (failed)" in out
    assert "upstream model is down" not in out
