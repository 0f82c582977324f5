"""The node types of prompt graphs (seed 001) as task types: a graph's node is a run's task.

``llm.invoke`` asks a model (the node's, or its agent's) with a templated prompt;
``message.send`` posts a message to the conversation; ``condition`` tests a value and
answers the branch it takes (the scheduler skips the other); ``service.call`` calls an
outside HTTP service through the outbound client (irreversible unless a harmless GET);
``parallel`` forks (its out-edge targets run side by side); ``wait`` (task type
``wait.durable``) is held by the run job, durably, before it completes. Their configs are
``domain/graph.py``'s. Every agent may own them (``ANY_AGENT``); none is offered to an
agent as a tool (``graph_node``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hansa.domain import node_configs as graph
from hansa.domain.secrets import mask_url
from hansa.tasks.base import ANY_AGENT, Judging, Result, TaskContext, TaskFailed, TaskType
from hansa.tasks.builtin.webhook import harmless
from hansa.tasks.connectors import outbound
from hansa.tasks.registry import Register

MAX_ANSWER_CHARS = graph.MAX_TEXT
"""An ``llm.invoke`` answer is cut to this many characters (it feeds later templates)."""


async def _invoke(p: graph.LlmInvoke, ctx: TaskContext) -> Result:
    if ctx.complete is None:
        raise TaskFailed("no model can be asked here", code="no_model")
    text = await ctx.complete(p.prompt, system=p.system, model=p.model)
    return {"text": text[:MAX_ANSWER_CHARS]}


async def _send(p: graph.MessageSend, ctx: TaskContext) -> Result:
    if ctx.say is None:
        raise TaskFailed("nothing may be said to the conversation here", code="no_conversation")
    ctx.say(p.text)
    return {"text": p.text}


async def _test(p: graph.Condition, ctx: TaskContext) -> Result:
    del ctx
    return decided(p)


def decided(p: graph.Condition) -> Result:
    """A condition's result: the branch it takes, and the value it tested."""
    return {"branch": "true" if holds(p) else "false", "value": p.value}


def holds(p: graph.Condition) -> bool:
    """The condition's one operator applied to its value: compared, never evaluated."""
    value, given = p.value, p.model_fields_set - {"value"}
    if "equals" in given:
        return bool(value == p.equals)
    if "not_equals" in given:
        return bool(value != p.not_equals)
    if "in_" in given:
        return value in (p.in_ or [])
    if "exists" in given:
        return (value is not None and value != "") == p.exists
    number = _number(value)
    if "greater_than" in given:
        return p.greater_than is not None and number > p.greater_than
    return p.less_than is not None and number < p.less_than


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TaskFailed(f"the condition compares a number, not {value!r}", code="not_a_number")
    try:
        return float(value)
    except ValueError:
        raise TaskFailed(
            f"the condition compares a number, not {value!r}", code="not_a_number"
        ) from None


async def _call(p: graph.ServiceCall, ctx: TaskContext) -> Result:
    if p.url is None:
        raise TaskFailed(
            f"no service called {p.service!r} is configured: give the node a url",
            code="unknown_service",
        )
    policy: outbound.OutboundPolicy = ctx.connector("outbound")
    await ctx.report("create", "service", mask_url(p.url), "start")
    result = await outbound.call(
        policy,
        url=p.url,
        method=p.method,
        headers=p.headers or {},
        body=p.body,
        idempotency_key=ctx.idempotency_key,
    )
    return {"statusCode": result["statusCode"], "body": result["body"]}


def _harmless(p: graph.ServiceCall, judging: Judging) -> bool:
    return harmless(p.method, p.url, judging)


async def _fork(p: graph.Parallel, ctx: TaskContext) -> Result:
    del ctx
    return forked(p)


def forked(p: graph.Parallel) -> Result:
    """A fork's result: its strategy (what its children came to is read by the scheduler)."""
    return {"strategy": p.strategy}


PURE: dict[str, Callable[[Any], Result]] = {"condition": decided, "parallel": forked}
"""Node types that read nothing outside and change nothing: the run job decides them as
they start, in its own transaction (their executors serve a call from anywhere else)."""


async def _collect(p: graph.Loop, ctx: TaskContext) -> Result:
    del ctx
    if not isinstance(p.items, list):
        raise TaskFailed(
            f"the loop's items must be a list, not {type(p.items).__name__}", code="not_a_list"
        )
    if len(p.items) > p.max_iterations:
        raise TaskFailed(
            f"the loop has {len(p.items)} items, more than its maxIterations ({p.max_iterations})",
            code="loop_too_long",
        )
    return {"items": p.items, "count": len(p.items)}


async def _update_context(p: graph.ContextUpdate, ctx: TaskContext) -> Result:
    _changes(ctx).append({"context": p.set_})
    return {"set": p.set_}


async def _transition(p: graph.StateTransition, ctx: TaskContext) -> Result:
    _changes(ctx).append({"state": p.to})
    return {"to": p.to}


async def _hand_over(p: graph.HandoffCreate, ctx: TaskContext) -> Result:
    reason = p.reason or "the graph asks for a person"
    _changes(ctx).append({"handoff": {"reason": reason, "priority": p.priority}})
    return {"reason": reason, "priority": p.priority}


def _changes(ctx: TaskContext) -> list[dict[str, Any]]:
    if ctx.changes is None:
        raise TaskFailed("the conversation cannot be changed from here", code="no_conversation")
    return ctx.changes


async def _waited(p: graph.Wait, ctx: TaskContext) -> Result:
    del ctx
    return {"waitedSeconds": p.seconds}


WAIT = "wait.durable"
"""The task type of a graph's ``wait`` node (``wait`` is the plain, sleeping task type)."""

NODE_TASK_TYPES = {"wait": WAIT}
"""Graph node types whose task type has another name."""


def register(add: Register) -> None:
    """Register the graph node types."""
    nodes: list[tuple[str, str, type[Any], Any]] = [
        ("llm.invoke", "Ask a model with a prompt.", graph.LlmInvoke, _invoke),
        ("message.send", "Post a message to the conversation.", graph.MessageSend, _send),
        ("condition", "Take one branch or the other.", graph.Condition, _test),
        ("parallel", "Run the next nodes side by side.", graph.Parallel, _fork),
        ("loop", "Run the next nodes once per item.", graph.Loop, _collect),
        ("context.update", "Merge values into the context.", graph.ContextUpdate, _update_context),
        ("state.transition", "Move the conversation.", graph.StateTransition, _transition),
        ("handoff.create", "Hand the conversation to a person.", graph.HandoffCreate, _hand_over),
        (WAIT, "Wait, durably, then go on.", graph.Wait, _waited),
    ]
    for name, description, params, executor in nodes:
        add(TaskType(name, description, params, executor, ANY_AGENT, graph_node=True))
    add(
        TaskType(
            "service.call",
            "Call an outside HTTP service.",
            graph.ServiceCall,
            _call,
            ANY_AGENT,
            is_reversible_by_system=False,
            reversible_when=_harmless,
            graph_node=True,
        )
    )
