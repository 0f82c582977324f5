"""OpenAI-compatible chat (issue 21 item 5), driven by the official ``openai`` client against
the real server: a completion is a turn of the agent named as ``model``."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from apikeys import bearer, create_key
from openai import OpenAI

from harness import Server, running_server

HEADER = "X-Hansa-Conversation-Id"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    with running_server(tmp_path_factory.mktemp("openai")) as server:
        yield server, create_key(server, "acme")


def _openai(keyed: tuple[Server, str], key: str | None = None) -> OpenAI:
    server, own = keyed
    return OpenAI(base_url=f"{server.url}/v1", api_key=key or own, max_retries=0)


def _stored(keyed: tuple[Server, str], cid: str) -> list[dict[str, str]]:
    server, key = keyed
    with server.client(headers=bearer(key)) as client:
        messages = client.get(f"/api/conversations/{cid}/messages").json()
    return [{"kind": m["kind"], "content": m["content"]} for m in messages]


def test_the_models_are_the_agents(keyed: tuple[Server, str]) -> None:
    ids = [m.id for m in _openai(keyed).models.list()]

    assert ids[0] == "chief" and {"webEngineer", "growthLead"} <= set(ids)


def test_a_completion_is_a_turn_and_the_header_continues_its_conversation(
    keyed: tuple[Server, str],
) -> None:
    client = _openai(keyed)
    history = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi!"}]
    first = client.chat.completions.with_raw_response.create(model="chief", messages=history)
    cid = first.headers[HEADER]
    answer = first.parse()
    again = client.chat.completions.create(
        model="chief",
        messages=[
            *history,
            {"role": "assistant", "content": answer.choices[0].message.content},
            {"role": "user", "content": "And now?"},
        ],
        extra_headers={HEADER: cid},
    )
    stored = _stored(keyed, cid)

    assert answer.id.startswith("chatcmpl-") and answer.model == "chief"
    assert answer.choices[0].finish_reason == "stop"
    said = [m["content"] for m in stored if m["kind"] == "assistant"]
    assert said == [answer.choices[0].message.content, again.choices[0].message.content]
    users = [m["content"] for m in stored if m["kind"] == "user"]
    assert users == ["Hi!", "And now?"], "only the last user message is posted each time"


def test_a_streamed_completion_sends_the_turns_text_then_done(keyed: tuple[Server, str]) -> None:
    client = _openai(keyed)
    with client.chat.completions.with_streaming_response.create(
        model="growthLead",
        messages=[{"role": "user", "content": [{"type": "text", "text": "Any SEO tips?"}]}],
        stream=True,
    ) as response:
        cid = response.headers[HEADER]
        chunks = list(response.parse())
    stored = _stored(keyed, cid)

    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert len({c.id for c in chunks}) == 1
    assert text == next(m["content"] for m in stored if m["kind"] == "assistant")


def test_an_unknown_model_and_a_wrong_key_are_clear_errors(keyed: tuple[Server, str]) -> None:
    message = [{"role": "user", "content": "Hi"}]
    with pytest.raises(openai.NotFoundError) as unknown:
        _openai(keyed).chat.completions.create(model="gpt-4o", messages=message)  # type: ignore[arg-type]
    with pytest.raises(openai.AuthenticationError):
        _openai(keyed, "hk_not_a_key").chat.completions.create(model="chief", messages=message)  # type: ignore[arg-type]
    with pytest.raises(openai.UnprocessableEntityError):
        _openai(keyed).chat.completions.create(
            model="chief",
            messages=[{"role": "assistant", "content": "no user here"}],
        )

    assert "'gpt-4o' is not an agent" in str(unknown.value)


def test_a_client_without_the_header_continues_by_its_history(keyed: tuple[Server, str]) -> None:
    # Open WebUI and LibreChat send the whole chat again, and no header
    client = _openai(keyed)
    first = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello team"}]
    answered = client.chat.completions.with_raw_response.create(model="chief", messages=first)
    said = answered.parse().choices[0].message.content
    with client.chat.completions.with_streaming_response.create(
        model="chief",
        messages=[
            *first,
            {"role": "assistant", "content": said},
            {"role": "user", "content": "Next?"},
        ],
        stream=True,
    ) as streamed:
        second_cid = streamed.headers[HEADER]
        streamed_text = "".join(c.choices[0].delta.content or "" for c in streamed.parse())
    history = [
        *first,
        {"role": "assistant", "content": said},
        {"role": "user", "content": "Next?"},
        {"role": "assistant", "content": streamed_text},
    ]
    third = client.chat.completions.with_raw_response.create(
        model="chief", messages=[*history, {"role": "user", "content": "Thanks"}]
    )
    changed = client.chat.completions.with_raw_response.create(
        model="chief",
        messages=[
            *first,
            {"role": "assistant", "content": "not what Hans said"},
            {"role": "user", "content": "Hm"},
        ],
    )
    cid = answered.headers[HEADER]
    stored = _stored(keyed, cid)

    assert second_cid == cid and third.headers[HEADER] == cid
    assert [m["content"] for m in stored if m["kind"] == "user"] == [
        "Hello team",
        "Next?",
        "Thanks",
    ]
    assert changed.headers[HEADER] != cid, "a history Hansa did not answer opens a new one"
