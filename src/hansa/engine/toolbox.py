"""The tools an agent may use in a turn or a session's step, the laws' verdict on each call
the model makes, and each call's answer as the model reads it.

A tool is a registered task type that the law of allowed scope lets this agent use in
this project: its name is the task type's (``entity.read``; the provider adapters send it
as ``entity_read`` and map the answer back), its parameters are the task type's JSON
schema. Pure: no I/O, so the agent loop's checks are unit-tested on their own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from hansa import errors
from hansa.domain import event, secrets
from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.engine import laws
from hansa.engine.context_packs import estimate_tokens
from hansa.models.base import ChatMessage, ToolCall, ToolDefinition
from hansa.tasks.base import TaskType
from hansa.tasks.registry import TaskRegistry

MAX_RESULT_CHARS = 8_000
"""A tool's answer is cut to this many characters in the prompt (the event keeps it whole)."""

_WIRE = re.compile(r"[^A-Za-z0-9_-]")


def wire_name(name: str) -> str:
    """``name`` as OpenAI and Anthropic accept it (``entity.read`` -> ``entity_read``)."""
    return _WIRE.sub("_", name)[:64]


class ToolLoopLimit(errors.HansaError):
    """The model still asked for tools after the last round it was allowed."""

    code = "tool_loop_limit"

    def __init__(self, rounds: int) -> None:
        super().__init__(f"the model still asked for tools after {rounds} rounds")
        self.rounds = rounds


@dataclass(frozen=True)
class Refused:
    """The call does not run; the model is told why (a tool error)."""

    code: str
    """``unknown_tool``, ``scope_denied``, ``missing_parameters`` or ``invalid_input``."""
    message: str


@dataclass(frozen=True)
class Runs:
    """A reversible call the laws allow: its executor runs now."""

    task_type: TaskType[Any]
    params: BaseModel


@dataclass(frozen=True)
class Waits:
    """An irreversible call (law of no return): it becomes a run awaiting confirmation."""

    task_type: TaskType[Any]
    parameters: dict[str, Any]


Verdict = Refused | Runs | Waits
"""What the laws decided about one tool call."""


class Toolbox:
    """The task types ``agent`` may use in ``project``, offered to its model as tools."""

    def __init__(
        self,
        registry: TaskRegistry,
        agent: AgentDefinition,
        project: ProjectContext,
        *,
        trusted: frozenset[tuple[str, int]] = frozenset(),
        without: frozenset[str] = frozenset(),
    ) -> None:
        self.registry = registry
        self.agent = agent
        self.project = project
        self.trusted = trusted
        """Outbound targets the operator vetted (a GET webhook to one is reversible)."""
        self.tools: dict[str, TaskType[Any]] = {
            t.name: t
            for t in registry.all()
            if t.name not in without
            and not t.graph_node
            and laws.scope_refusal(t, agent, project) is None
        }
        """The offered task types by name: those the law of allowed scope permits (but those
        named in ``without``)."""
        self._by_wire = {wire_name(name): name for name in self.tools}
        self._definitions: tuple[ToolDefinition, ...] | None = None

    def __bool__(self) -> bool:
        return bool(self.tools)

    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The offered tools, by name."""
        if self._definitions is None:
            self._definitions = tuple(_definition(t) for t in self.tools.values())
        return self._definitions

    def tokens(self) -> int:
        """The estimated tokens of the offered tools' definitions in a prompt."""
        return sum(_tokens(t) for t in self.tools.values())

    def name_of(self, called: str) -> str:
        """The task type a call names: its own name, or its wire form (``entity_read``)."""
        if called in self.registry:
            return called
        return self._by_wire.get(called, called)

    def judge(self, call: ToolCall) -> Verdict:
        """The laws on one call: scope and clarity refuse; no return holds it for consent.

        Every call is judged again, offered or not: a model may name any tool.
        """
        name = self.name_of(call.name)
        if name not in self.registry or self.registry.get(name).graph_node:
            return Refused("unknown_tool", f"there is no tool called {call.name!r}")
        verdict = laws.judge(
            self.registry, name, call.arguments, self.agent, self.project, trusted=self.trusted
        )
        try:
            verdict.raise_for_refusal()
        except errors.HansaError as exc:
            return Refused(exc.code, exc.message)
        assert verdict.params is not None
        task_type = self.registry.get(name)
        if not verdict.reversible:
            return Waits(task_type, dict(call.arguments))
        return Runs(task_type, verdict.params)


def _definition(task_type: TaskType[Any]) -> ToolDefinition:
    description = task_type.description
    if task_type.reversible_when is not None:
        description += " Some calls cannot be undone: those wait for the user's confirmation."
    elif not task_type.is_reversible_by_system:
        description += " It cannot be undone: it waits for the user's confirmation."
    return ToolDefinition(task_type.name, description, task_type.schema())


_TOKENS: dict[int, tuple[TaskType[Any], int]] = {}
"""Each task type's tokens as a tool, by its id (with the type itself, so that a new type
at a reused id is not mistaken for it): the same for every turn that offers it."""
_MAX_TOKENS_KEPT = 4096


def _tokens(task_type: TaskType[Any]) -> int:
    kept = _TOKENS.get(id(task_type))
    if kept is not None and kept[0] is task_type:
        return kept[1]
    tool = _definition(task_type)
    text = json.dumps(
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    )
    if len(_TOKENS) >= _MAX_TOKENS_KEPT:
        _TOKENS.clear()
    _TOKENS[id(task_type)] = (task_type, estimate_tokens(text) + 1)  # +1: the list's ", "
    return _TOKENS[id(task_type)][1]


@dataclass(frozen=True)
class Settled:
    """One tool call's answer: its result, or why it has none."""

    call: ToolCall
    name: str
    """The task type the call named."""
    result: Any = None
    error: event.ToolError | None = None

    def payload(self) -> event.ToolResultData:
        """The ``tool_result`` event, secrets masked."""
        return event.ToolResultData(
            tool_call_id=self.call.id,
            name=self.name,
            ok=self.error is None,
            result=secrets.mask(self.result) if self.error is None else None,
            error=self.error,
        )

    def message(self) -> ChatMessage:
        """The answer as the model reads it: JSON, cut to ``MAX_RESULT_CHARS``."""
        if self.error is not None:
            body = {"error": self.error.code, "message": self.error.message}
            return ChatMessage.tool_result(self.call.id, json.dumps(body), is_error=True)
        text = json.dumps(secrets.mask(self.result), ensure_ascii=False, default=str)
        if len(text) > MAX_RESULT_CHARS:
            text = text[: MAX_RESULT_CHARS - 1] + "…"
        return ChatMessage.tool_result(self.call.id, text)
