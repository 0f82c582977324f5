"""The node types of prompt graphs (seed 001) as task types: a graph's node is a run's task.

``llm.invoke`` asks a model (the node's, or its agent's) with a templated prompt;
``message.send`` posts a message to the conversation; ``condition`` tests the facts its
fields name with the rules' evaluator (``domain/conditions.py``) and answers the branch it
takes (the scheduler skips the other); ``service.call`` calls an outside HTTP service, by
url or by a name the project's config gives an address, through the outbound client
(irreversible unless a harmless GET);
``parallel`` forks (its out-edge targets run side by side); ``wait`` (task type
``wait.durable``) is held by the run job, durably, before it completes. Their configs are
``domain/node_configs.py``'s. Every agent may own them (``ANY_AGENT``); none is offered to an
agent as a tool (``graph_node``). What the run machinery does with each beyond executing
it is said here, on its task type (``settle``, ``hold``, ``flow``, ``answers``, ``binds``,
``refers``, ``ends_turn``), never by its name in the engine.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import timedelta

import anyio.to_thread

from hansa.domain import node_configs as graph
from hansa.domain.conditions import DEFAULT_BUDGET_SECONDS, Evaluator
from hansa.domain.conversation import State
from hansa.domain.rules import Operator
from hansa.domain.secrets import mask_url
from hansa.domain.service import Service, same_origin
from hansa.tasks.base import (
    ANY_AGENT,
    Change,
    Flow,
    Judging,
    MergeContext,
    MoveConversation,
    OpenHandoff,
    Result,
    TaskContext,
    TaskFailed,
    TaskType,
)
from hansa.tasks.builtin.webhook import answered, harmless
from hansa.tasks.connectors import outbound
from hansa.tasks.registry import Register

MAX_ANSWER_CHARS = graph.MAX_TEXT
"""An ``llm.invoke`` answer is cut to this many characters (it feeds later templates)."""
ENDS_THE_TURN = frozenset({State.HANDOFF_PENDING, State.RESOLVED, State.ARCHIVED})
"""States after which no assistant answers the message: a rule's ``state.transition`` to
one ends the turn."""


async def _invoke(p: graph.LlmInvoke, ctx: TaskContext) -> Result:
    if ctx.complete is None:
        raise TaskFailed("no model can be asked here", code="no_model")
    prompt = p.prompt_template
    if p.context_fields:  # the seed's contextFields: those namespaces, after the prompt
        given = {name: (p.facts or {}).get(name, {}) for name in p.context_fields}
        prompt += "\n\nContext:\n" + json.dumps(given, ensure_ascii=False, default=str)
    text = await ctx.complete(
        prompt,
        system=p.system_prompt,
        model=p.spec(),
        temperature=p.temperature,
        max_tokens=p.max_tokens,
    )
    return {"text": text[:MAX_ANSWER_CHARS]}


async def _send(p: graph.MessageSend, ctx: TaskContext) -> Result:
    if ctx.say is None:
        raise TaskFailed("nothing may be said to the conversation here", code="no_conversation")
    ctx.say(p.content)
    return {"text": p.content}


async def _test(p: graph.Condition, ctx: TaskContext) -> Result:
    # on a worker thread, within the evaluation budget: a pattern never holds the loop
    budget = float(ctx.connectors.get("conditionBudget", DEFAULT_BUDGET_SECONDS))
    return await anyio.to_thread.run_sync(decided, p, budget)


def settled(p: graph.Condition) -> Result | None:
    """A condition decided as it starts, in the run's transaction; None (executed instead,
    on a worker thread) when it has a ``matches`` or ``words`` test, which may take time."""
    if any(t.operator in (Operator.MATCHES, Operator.WORDS) for t in p.group().tests()):
        return None
    return decided(p)


def decided(p: graph.Condition, budget_seconds: float = DEFAULT_BUDGET_SECONDS) -> Result:
    """A condition's result: the branch it takes, and how each test fared, by the rules'
    evaluator over the facts its fields named (filled as it started); its pattern tests
    share ``budget_seconds`` (``HANSA_RULE_EVALUATION_BUDGET_MS``)."""
    held, tests = Evaluator(budget_seconds).group(p.group(), p.facts or {})
    return {
        "branch": "true" if held else "false",
        "conditions": [t.model_dump(mode="json", by_alias=True) for t in tests],
    }


async def _call(p: graph.ServiceCall, ctx: TaskContext) -> Result:
    url, headers = p.url, dict(p.headers or {})
    if url is None:
        service = await _service(p, ctx)
        url, headers = service.url(p.path), {**headers, **service.headers}
        if not same_origin(service.base_url, url):
            raise TaskFailed(
                f"the path leads away from service {service.name!r}", code="bad_service_path"
            )
    policy: outbound.OutboundPolicy = ctx.connector("outbound")
    await ctx.report("create", "service", mask_url(url), "start")
    result = await outbound.call(
        policy,
        url=url,
        method=p.method,
        headers=headers,
        body=p.body,
        idempotency_key=ctx.idempotency_key,
    )
    body = result["body"]
    found: Result = {"statusCode": result["statusCode"], "body": body}
    if p.result_key is not None and isinstance(body, dict):  # {{logsResult.total}}, as the seed
        found = {**body, **found}
    return found


async def _service(p: graph.ServiceCall, ctx: TaskContext) -> Service:
    """The tenant's service the node names (``/api/services``), its headers opened."""
    assert p.service is not None
    find: Callable[[str], Awaitable[Service | None]] = ctx.connector("services")
    found = await find(p.service)
    if found is None:
        raise TaskFailed(
            f"no service called {p.service!r} is configured: add it with POST /api/services, "
            "or give the node a url",
            code="unknown_service",
        )
    return found


def _harmless(p: graph.ServiceCall, judging: Judging) -> bool:
    """Made without a person's confirmation: a GET kept inside vetted targets carrying no
    earlier result, or a call to a named service by a method the service allows so."""
    if p.service is not None:
        found = judging.service(p.service)
        return found is not None and found.unattended(p.method)
    return p.url is not None and harmless(p.method, p.url, judging)


async def _fork(p: graph.Parallel, ctx: TaskContext) -> Result:
    del ctx
    return forked(p)


def forked(p: graph.Parallel) -> Result:
    """A fork's result: its strategy (what its children came to is read by the scheduler)."""
    return {"strategy": p.strategy}


async def _collect(p: graph.Loop, ctx: TaskContext) -> Result:
    del ctx
    items = p.collection
    if not isinstance(items, list):
        raise TaskFailed(
            f"the loop's collection must be a list, not {type(items).__name__}",
            code="not_a_list",
        )
    if len(items) > p.max_iterations:
        raise TaskFailed(
            f"the loop has {len(items)} items, more than its maxIterations ({p.max_iterations})",
            code="loop_too_long",
        )
    return {"items": items, "count": len(items)}


async def _update_context(p: graph.ContextUpdate, ctx: TaskContext) -> Result:
    _changes(ctx).append(MergeContext(p.set_))
    return {"set": p.set_}


async def _transition(p: graph.StateTransition, ctx: TaskContext) -> Result:
    _changes(ctx).append(MoveConversation(p.to))
    return {"to": p.to}


async def _hand_over(p: graph.HandoffCreate, ctx: TaskContext) -> Result:
    reason = p.reason or "the graph asks for a person"
    _changes(ctx).append(OpenHandoff(reason, p.priority))
    return {"reason": reason, "priority": p.priority, "metadata": p.metadata or {}}


def _changes(ctx: TaskContext) -> list[Change]:
    if ctx.changes is None:
        raise TaskFailed("the conversation cannot be changed from here", code="no_conversation")
    return ctx.changes


def _target(p: graph.StateTransition) -> State:
    return p.to


def _moves_away(p: graph.StateTransition) -> bool:
    return p.to in ENDS_THE_TURN


def _always(p: graph.HandoffCreate) -> bool:
    del p
    return True


async def _waited(p: graph.Wait, ctx: TaskContext) -> Result:
    del ctx
    return {"waitedSeconds": p.seconds}


def _due(p: graph.Wait) -> timedelta:
    return timedelta(seconds=p.seconds)


async def _trigger(p: graph.MessageTrigger, ctx: TaskContext) -> Result:
    del ctx
    return heard(p)


def heard(p: graph.MessageTrigger) -> Result:
    """A ``message.trigger``'s result: the message the graph started on (none: ``{}``)."""
    message = (p.facts or {}).get("message")
    return dict(message) if isinstance(message, dict) else {}


def _message(p: graph.MessageTrigger) -> list[str]:
    del p
    return ["message"]


def _fields(p: graph.Condition) -> list[str]:
    return [t.field for t in p.group().tests()]


def _namespaces(p: graph.LlmInvoke) -> list[str]:
    return list(p.context_fields or [])


def _loop_keys(p: graph.Loop) -> tuple[str, ...]:
    return (p.item_key,) if p.index_key is None else (p.item_key, p.index_key)


def register(add: Register) -> None:
    """Register the graph node types."""
    add(
        TaskType(
            "message.trigger",
            "Start on the message.",
            graph.MessageTrigger,
            _trigger,
            ANY_AGENT,
            graph_node=True,
            settle=heard,
            reads=_message,
        )
    )
    add(
        TaskType(
            "llm.invoke",
            "Ask a model with a prompt.",
            graph.LlmInvoke,
            _invoke,
            ANY_AGENT,
            graph_node=True,
            answers=True,
            reads=_namespaces,
        )
    )
    add(
        TaskType(
            "message.send",
            "Post a message to the conversation.",
            graph.MessageSend,
            _send,
            ANY_AGENT,
            graph_node=True,
            at_once=True,
        )
    )
    add(
        TaskType(
            "condition",
            "Take one branch or the other.",
            graph.Condition,
            _test,
            ANY_AGENT,
            graph_node=True,
            settle=settled,
            reads=_fields,
            refers=_fields,
        )
    )
    add(
        TaskType(
            "parallel",
            "Run the next nodes side by side.",
            graph.Parallel,
            _fork,
            ANY_AGENT,
            graph_node=True,
            settle=forked,
            flow=Flow.FORK,
        )
    )
    add(
        TaskType(
            "loop",
            "Run the next nodes once per item.",
            graph.Loop,
            _collect,
            ANY_AGENT,
            graph_node=True,
            flow=Flow.LOOP,
            binds=_loop_keys,
        )
    )
    add(
        TaskType(
            "context.update",
            "Merge values into the context.",
            graph.ContextUpdate,
            _update_context,
            ANY_AGENT,
            graph_node=True,
            at_once=True,
        )
    )
    add(
        TaskType(
            "state.transition",
            "Move the conversation.",
            graph.StateTransition,
            _transition,
            ANY_AGENT,
            graph_node=True,
            at_once=True,
            ends_turn=_moves_away,
            moves_to=_target,
        )
    )
    add(
        TaskType(
            "handoff.create",
            "Hand the conversation to a person.",
            graph.HandoffCreate,
            _hand_over,
            ANY_AGENT,
            graph_node=True,
            at_once=True,
            ends_turn=_always,
        )
    )
    add(
        TaskType(
            "wait.durable",
            "Wait, durably, then go on.",
            graph.Wait,
            _waited,
            ANY_AGENT,
            graph_node=True,
            node_type="wait",
            hold=_due,
        )
    )
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
            describe=answered("service.call"),
        )
    )
