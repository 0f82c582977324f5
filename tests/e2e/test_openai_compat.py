"""OpenAI-compatible chat (issue 21 item 5), driven by the official ``openai`` client against
the real server: a completion is a turn of the agent named as ``model``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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


_MADE: list[OpenAI] = []
"""The clients a test made: closed when it ends, so no pooled socket outlives its test (an
unclosed one is a ResourceWarning, an error, in whichever later test collects it)."""


@pytest.fixture(autouse=True)
def _closing() -> Iterator[None]:
    yield
    while _MADE:
        _MADE.pop().close()


def _openai(keyed: tuple[Server, str], key: str | None = None) -> OpenAI:
    server, own = keyed
    client = OpenAI(base_url=f"{server.url}/v1", api_key=key or own, max_retries=0)
    _MADE.append(client)
    return client


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


def _turn_tokens(keyed: tuple[Server, str], cid: str) -> tuple[int, int, int]:
    """What Hansa recorded of the conversation's model calls (one turn each here)."""
    server, key = keyed
    with server.client(headers=bearer(key)) as client:
        calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    assert calls and len({c["turnId"] for c in calls}) == 1, calls
    prompt = sum(c["promptTokens"] for c in calls)
    completion = sum(c["completionTokens"] for c in calls)
    return prompt, completion, prompt + completion


def test_usage_is_the_turns_model_calls(keyed: tuple[Server, str]) -> None:
    client = _openai(keyed)
    ask = [{"role": "user", "content": "How is our SEO doing?"}]
    answered = client.chat.completions.with_raw_response.create(model="chief", messages=ask)
    usage = answered.parse().usage
    with client.chat.completions.with_streaming_response.create(
        model="growthLead",
        messages=[{"role": "user", "content": "Any SEO tips?"}],
        stream=True,
        stream_options={"include_usage": True},
    ) as response:
        streamed_cid = response.headers[HEADER]
        chunks = list(response.parse())
    plain = list(
        client.chat.completions.create(
            model="chief", messages=[{"role": "user", "content": "Thanks!"}], stream=True
        )
    )
    with client.chat.completions.stream(  # the SDK's helper puts the chunks together
        model="chief",
        messages=[{"role": "user", "content": "One more tip?"}],
        stream_options={"include_usage": True},
    ) as helper:
        final = helper.get_final_completion()

    assert usage is not None and usage.total_tokens > 0
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == _turn_tokens(
        keyed, answered.headers[HEADER]
    )
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens, last.usage.total_tokens) == (
        _turn_tokens(keyed, streamed_cid)
    )
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(c.usage is None and c.choices for c in plain), "no usage chunk unless asked"
    assert final.choices[0].message.content and final.usage is not None
    assert final.usage.total_tokens > 0


@pytest.mark.parametrize(
    ("param", "extra"),
    [
        ("n", {"n": 2}),
        (
            "tools",
            {
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "get_weather", "parameters": {"type": "object"}},
                    }
                ]
            },
        ),
        ("response_format", {"response_format": {"type": "json_object"}}),
        (
            "response_format",
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
        ),
        ("logprobs", {"logprobs": True}),
    ],
)
def test_unsupported_parameters_are_refused_in_openais_shape(
    keyed: tuple[Server, str], param: str, extra: dict[str, Any]
) -> None:
    server, key = keyed
    with server.client(headers=bearer(key)) as hansa:
        before = len(hansa.get("/api/conversations").json())
    with pytest.raises(openai.BadRequestError) as refused:
        _openai(keyed).chat.completions.create(
            model="chief",
            messages=[{"role": "user", "content": "Hi"}],
            **extra,
        )
    with server.client(headers=bearer(key)) as hansa:
        after = len(hansa.get("/api/conversations").json())

    assert refused.value.status_code == 400
    assert refused.value.param == param and refused.value.type == "invalid_request_error"
    assert refused.value.code == "unsupported_parameter"
    assert after == before, "nothing was posted"


def test_the_defaults_of_those_parameters_are_accepted(keyed: tuple[Server, str]) -> None:
    answer = _openai(keyed).chat.completions.create(
        model="chief",
        messages=[{"role": "user", "content": "Hello"}],
        n=1,
        response_format={"type": "text"},
        tool_choice="none",
        temperature=0.2,
    )

    assert len(answer.choices) == 1 and answer.choices[0].message.content


def test_a_model_is_retrieved_by_its_agents_id(keyed: tuple[Server, str]) -> None:
    client = _openai(keyed)
    chief = client.models.retrieve("chief")
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.retrieve("gpt-4o")

    assert chief.id == "chief" and chief.object == "model" and chief.owned_by == "hansa"
    assert "'gpt-4o' is not an agent" in str(missing.value)
