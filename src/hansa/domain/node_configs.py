"""The node types of prompt graphs and their configs (seed 001): what each node of a graph
(or each action of a rule) may be told, checked when the graph or rule is saved
(``domain/graph.py``) and validated again as the node's task parameters when it runs
(``tasks/builtin/graph_nodes.py``).

The names are the seed's ("Action Handler Deep Dive"): ``message.send {content}``,
``llm.invoke {provider, model, systemPrompt, promptTemplate, temperature, maxTokens,
contextFields}``, ``service.call {service, method, path, body, resultKey}``, ``condition
{condition: {field, operator, value}}`` in the rules' one condition language,
``parallel {strategy, timeout}``, ``loop {collection, itemKey, indexKey}``. The nested
action lists (``ifTrue``, ``ifFalse``, ``actions``) are not configs: they become nodes and
edges (``domain/action_lists.py``). :func:`canonical` turns the names Hansa used before
(``text``, ``prompt``, ``system``, ``items``, ``timeoutMs``, the six-operator condition)
into these, so a graph stored with them reads back, and runs, in the one form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    model_validator,
)

from hansa.domain.base import Wire
from hansa.domain.conversation import State
from hansa.domain.handoff import Priority
from hansa.domain.rules import Condition as Test
from hansa.domain.rules import ConditionGroup

ID_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""A node id (also a loop's ``itemKey``, a ``resultKey``): identifier-like, at most 64
characters, so that ``{{<nodeId>.x}}`` names it unambiguously."""
RESERVED_IDS = frozenset({"message", "user", "context", "project", "llmResponse", "inputs"})
"""Template namespaces: a node of one of these ids would hide it."""
MAX_TEXT = 64 * 1024
"""The longest template (a prompt, a message) a config may hold."""
MAX_LOOP_ITERATIONS = 100
MAX_WAIT_SECONDS = 30 * 24 * 3600
MAX_TIMEOUT_MS = 24 * 3600 * 1000
FACTS = "facts"
"""The parameter the engine fills as a task starts with the values a node names by path
(a condition's fields, an ``llm.invoke``'s ``contextFields``); never written by a caller."""
NAMESPACES = ("message", "user", "context", "project")
DEFAULT_PROVIDER = "openai"
"""The seed's default provider: an ``llm.invoke``'s bare ``model`` is one of its models."""
OWN_SPECS = frozenset({"local", "scripted"})
"""Model specs of Hansa's own that need no provider."""
TYPE_NAMES = {
    "message-trigger": "message.trigger",
    "service-call": "service.call",
    "llm-invoke": "llm.invoke",
    "message-send": "message.send",
}
"""The seed's graph component types as its "Prompt Graphs" section spells them, and the
node types (the action names) they are."""


class _Config(Wire):
    """A node's config: camelCase keys only, and no unknown key (a typo is an error)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False)


_Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
_Key = Annotated[str, Field(pattern=f"^{ID_PATTERN.pattern}$", max_length=64)]
_Facts = dict[str, Any] | None


class LlmInvoke(_Config):
    """``llm.invoke``: a templated prompt to a model (none: the user's message); its result
    is ``{text}``, and the latest answer is ``{{llmResponse}}``."""

    prompt_template: _Text
    system_prompt: _Text | None = None
    provider: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_-]{0,39}$")
    """With ``model``: the ``provider:model`` spec; alone it means nothing."""
    model: str | None = Field(default=None, min_length=1, max_length=200)
    """``model`` (with ``provider``) or ``provider:model``; none: the agent's model."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)
    context_fields: list[Literal["message", "user", "context", "project"]] | None = None
    """Namespaces given to the model after the prompt, as JSON."""
    agent_id: str | None = Field(default=None, min_length=1, max_length=64)
    result_key: _Key | None = None
    facts: _Facts = None

    def spec(self) -> str | None:
        """The model spec the node asks for (``provider:model``; a bare model name is the
        seed's default provider's, unless it is a spec of Hansa's own), or None: the
        agent's."""
        if self.model is None or ":" in self.model:
            return self.model
        if self.provider is None and self.model in OWN_SPECS:
            return self.model
        return f"{self.provider or DEFAULT_PROVIDER}:{self.model}"


class ServiceCall(_Config):
    """``service.call``: an outbound HTTP request to a ``url``, or to ``path`` on a named
    ``service`` (the tenant's, ``/api/services``: its base URL and headers)."""

    url: str | None = Field(default=None, min_length=1, max_length=2048)
    service: _Key | None = None
    path: str | None = Field(default=None, max_length=2048, pattern=r"^/")
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "GET"
    body: Any = None
    headers: dict[str, str] | None = None
    result_key: _Key | None = None
    """Names the response for later templates (``{{<resultKey>.x}}``, the body's fields)."""

    @model_validator(mode="after")
    def _one_target(self) -> ServiceCall:
        if (self.url is None) == (self.service is None):
            raise ValueError("give either url or service")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        if self.path is not None and self.service is None:
            raise ValueError("path goes with service")
        return self


class MessageSend(_Config):
    """``message.send``: a templated message in the conversation (none: the last model
    answer)."""

    content: _Text


class MessageTrigger(_Config):
    """``message.trigger``: where a graph starts on a message; its result is the message
    (``{{trigger.content}}`` for a node of id ``trigger``)."""

    facts: _Facts = None


class Condition(_Config):
    """``condition``: ``{condition: {field, operator, value}}`` or a group of them, the rules'
    language (every operator, nested ``and``/``or`` groups); ``field`` names what a
    template reference names (``logsResult.total``, ``message.content``). Its out-edges say
    ``when`` "true" or "false"."""

    condition: Test | ConditionGroup
    facts: _Facts = None

    def group(self) -> ConditionGroup:
        """The condition as a group (a single test is a group of one)."""
        if isinstance(self.condition, ConditionGroup):
            return self.condition
        return ConditionGroup(conditions=[self.condition])


class Parallel(_Config):
    """``parallel``: its out-edge targets run side by side."""

    strategy: Literal["all", "any", "settle"] = "all"
    timeout: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    """Milliseconds from the fork until its children are stopped."""


class Loop(_Config):
    """``loop``: its body once per item of ``collection`` (a template or a list), bound to
    ``{{itemKey}}`` (and ``{{indexKey}}``), at most ``maxIterations`` times."""

    collection: _Text | Annotated[list[Any], Field(min_length=1, max_length=MAX_LOOP_ITERATIONS)]
    item_key: _Key
    index_key: _Key | None = None
    max_iterations: int = Field(default=MAX_LOOP_ITERATIONS, ge=1, le=MAX_LOOP_ITERATIONS)

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
    metadata: dict[str, Any] | None = None
    """Kept with the node's result (``{category: "support"}``)."""


class ContextUpdate(_Config):
    """``context.update``: merge values into the conversation's context."""

    set_: dict[str, Any] = Field(alias="set")


class StateTransition(_Config):
    """``state.transition``: move the conversation to another state."""

    to: State


NODE_CONFIGS: dict[str, type[_Config]] = {
    "message.trigger": MessageTrigger,
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

_RENAMED: dict[str, dict[str, str]] = {
    "message.send": {"text": "content"},
    "llm.invoke": {"prompt": "promptTemplate", "system": "systemPrompt"},
    "loop": {"items": "collection"},
    "parallel": {"timeoutMs": "timeout"},
}
"""Names of Hansa's first graph configs, and the seed's names that replaced them."""
_DEFAULTS: dict[str, dict[str, str]] = {
    "llm.invoke": {"promptTemplate": "{{message.content}}"},
    "message.send": {"content": "{{llmResponse}}"},
}
"""What a node the seed's graph leaves without a prompt or a text means: a model asked the
user's message, a reply of its answer. Written into the config, so the graph says it."""
_OPERATORS = {
    "equals": "eq",
    "notEquals": "neq",
    "in": "in",
    "greaterThan": "gt",
    "lessThan": "lt",
}
"""The first graph condition's operators, in the rules' language."""
_WHOLE = re.compile(r"^\s*\{\{\s*([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}\s*$")


def canonical(kind: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` in the one form: the seed's names for Hansa's earlier ones, a prompt or a
    text left out filled in (:data:`_DEFAULTS`), and the earlier condition (``{value:
    "{{x.y}}", equals: 1}``) as ``{condition: {field: "x.y", operator: "eq", value: 1}}``.
    Anything else is left for the config's checks to judge."""
    renamed = _RENAMED.get(kind, {})
    out = {(k if renamed.get(k, k) in config else renamed[k]): v for k, v in config.items()}
    if kind == "condition" and "condition" not in out:
        return _old_condition(out)
    return {**_DEFAULTS.get(kind, {}), **out}


def _old_condition(config: dict[str, Any]) -> dict[str, Any]:
    value = config.get("value")
    tests = {k: v for k, v in config.items() if k in {*_OPERATORS, "exists"}}
    whole = _WHOLE.match(value) if isinstance(value, str) else None
    if whole is None or len(tests) != 1 or len(config) != 2:
        return config
    (op, given), field = next(iter(tests.items())), whole.group(1)
    if op == "exists":
        test = {"field": field, "operator": "exists" if given else "not_exists"}
    else:
        test = {"field": field, "operator": _OPERATORS[op], "value": given}
    return {"condition": test}
