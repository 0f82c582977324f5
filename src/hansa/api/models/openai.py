"""The OpenAI chat API's shapes (``/v1``, ``api/routes/openai_chat.py``): the request as
OpenAI's clients send it, the completion, the model list."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_MESSAGES = 1_000
"""The most messages a request may carry (only the last user message is posted)."""


class OpenAIMessageIn(BaseModel):
    """One message of the request's history (text, or text parts)."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(BaseModel):
    """``stream_options``: whether the stream ends with a chunk carrying ``usage``."""

    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """The OpenAI chat request. Sampling settings (``temperature``, ``max_tokens``…) are
    accepted and left to the agent's own model settings; what would change the answer's
    shape (``UNSUPPORTED``) is refused."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, max_length=100, description="An agent's id, e.g. chief.")
    messages: list[OpenAIMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    conversation_id: str | None = Field(default=None, max_length=100)
    user: str | None = Field(
        default=None,
        max_length=200,
        description="The end user's id: a new conversation's user (its user.id).",
    )
    n: int | None = Field(default=None, description="Only 1: a turn has one answer.")
    tools: list[dict[str, Any]] | None = Field(
        default=None, description="Not supported: the agent's own tools run inside its turn."
    )
    tool_choice: str | dict[str, Any] | None = None
    functions: list[dict[str, Any]] | None = None
    function_call: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = Field(
        default=None, description='Only {"type": "text"}.'
    )
    logprobs: bool | None = None


class ModelOut(BaseModel):
    """An agent, as the OpenAI model list shows it."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str


class ModelList(BaseModel):
    """``GET /v1/models``."""

    object: Literal["list"] = "list"
    data: list[ModelOut]


class AssistantMessageOut(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChoiceOut(BaseModel):
    index: int
    message: AssistantMessageOut
    finish_reason: Literal["stop"]


class CompletionUsage(BaseModel):
    """The tokens of the turn's model calls (routing, planning, answers, the quality gate)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    """A completed turn, as an OpenAI chat completion (``id`` is ``chatcmpl-<turn id>``)."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChoiceOut]
    usage: CompletionUsage
