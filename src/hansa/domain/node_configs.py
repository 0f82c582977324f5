"""The node types of prompt graphs and their configs (seed 001): what each node of a graph
may be told, checked when the graph is saved (``domain/graph.py``) and validated again as
the node's task parameters when it runs (``tasks/builtin/graph_nodes.py``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    model_validator,
)

from hansa.domain.base import Wire
from hansa.domain.conversation import State
from hansa.domain.handoff import Priority

ID_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""A node id (also a loop's ``itemKey``): identifier-like, at most 64 characters, so that
``{{<nodeId>.result.x}}`` names it unambiguously."""
RESERVED_IDS = frozenset({"message", "user", "context", "project", "llmResponse", "inputs"})
"""Template namespaces: a node of one of these ids would hide it."""
MAX_TEXT = 64 * 1024
"""The longest template (a prompt, a message) a config may hold."""
MAX_LOOP_ITERATIONS = 100
MAX_WAIT_SECONDS = 30 * 24 * 3600
MAX_TIMEOUT_MS = 24 * 3600 * 1000


class _Config(Wire):
    """A node's config: camelCase keys only, and no unknown key (a typo is an error)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False)


_Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
_Key = Annotated[str, Field(pattern=f"^{ID_PATTERN.pattern}$", max_length=64)]
_Number = StrictInt | StrictFloat


class LlmInvoke(_Config):
    """``llm.invoke``: a templated prompt to a model; its result is ``{text}``."""

    prompt: _Text
    system: _Text | None = None
    model: str | None = Field(default=None, min_length=1, max_length=200)
    """``provider:model``; none: the agent's model."""
    agent_id: str | None = Field(default=None, min_length=1, max_length=64)


class ServiceCall(_Config):
    """``service.call``: an outbound HTTP request to a ``url`` or a named ``service``."""

    url: str | None = Field(default=None, min_length=1, max_length=2048)
    service: _Key | None = None
    """A name from the ``services`` map of the settings."""
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "GET"
    body: Any = None
    headers: dict[str, str] | None = None

    @model_validator(mode="after")
    def _one_target(self) -> ServiceCall:
        if (self.url is None) == (self.service is None):
            raise ValueError("give either url or service")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return self


class MessageSend(_Config):
    """``message.send``: a templated message in the conversation."""

    text: _Text


_OPERATORS = ("equals", "notEquals", "in", "exists", "greaterThan", "lessThan")


class Condition(_Config):
    """``condition``: one test of ``value`` (usually a template) by exactly one operator.

    ``{value: "{{check.result.ok}}", equals: true}``; its out-edges say ``when`` "true" or
    "false". Operators: equals, notEquals, in, exists, greaterThan, lessThan.
    """

    value: Any
    equals: Any = None
    not_equals: Any = None
    in_: list[Any] | None = Field(default=None, alias="in", max_length=100)
    exists: StrictBool | None = None
    greater_than: _Number | None = None
    less_than: _Number | None = None

    @model_validator(mode="after")
    def _one_operator(self) -> Condition:
        given = [f for f in self.model_fields_set if f != "value"]
        if len(given) != 1:
            raise ValueError(f"give exactly one operator of {', '.join(_OPERATORS)}")
        return self


class Parallel(_Config):
    """``parallel``: its out-edge targets run side by side."""

    strategy: Literal["all", "any", "settle"]
    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)


class Loop(_Config):
    """``loop``: its body once per item of ``items`` (a template or a list), bound to
    ``{{itemKey}}`` (and ``{{indexKey}}``), at most ``maxIterations`` times."""

    items: _Text | Annotated[list[Any], Field(min_length=1, max_length=MAX_LOOP_ITERATIONS)]
    item_key: _Key
    index_key: _Key | None = None
    max_iterations: int = Field(ge=1, le=MAX_LOOP_ITERATIONS)

    @model_validator(mode="after")
    def _keys(self) -> Loop:
        if self.item_key == self.index_key:
            raise ValueError("itemKey and indexKey must differ")
        if {self.item_key, self.index_key} & RESERVED_IDS:
            raise ValueError(f"itemKey and indexKey may not be one of {sorted(RESERVED_IDS)}")
        return self


class Wait(_Config):
    """``wait``: the run waits, durably, then goes on."""

    seconds: float = Field(gt=0, le=MAX_WAIT_SECONDS)


class HandoffCreate(_Config):
    """``handoff.create``: hand the conversation to a person."""

    reason: str | None = Field(default=None, min_length=1, max_length=500)
    priority: Priority = "normal"


class ContextUpdate(_Config):
    """``context.update``: merge values into the conversation's context."""

    set_: dict[str, Any] = Field(alias="set")


class StateTransition(_Config):
    """``state.transition``: move the conversation to another state."""

    to: State


NODE_CONFIGS: dict[str, type[_Config]] = {
    "llm.invoke": LlmInvoke,
    "service.call": ServiceCall,
    "message.send": MessageSend,
    "condition": Condition,
    "parallel": Parallel,
    "loop": Loop,
    "wait": Wait,
    "handoff.create": HandoffCreate,
    "context.update": ContextUpdate,
    "state.transition": StateTransition,
}
"""The engine's node types and their configs; a registered task type is a node type too,
its config being the task's parameters (checked when the task is created)."""
