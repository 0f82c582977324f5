"""OpenTelemetry spans: a turn, its stages, the tasks it runs and every model call.

Spans go to the process's tracer provider. Without one (the default), OpenTelemetry's API
makes them no-ops that cost next to nothing. ``hansa serve`` installs the SDK's provider
with an OTLP/HTTP exporter when the ``otel`` extra is installed (``pip install
'hansa[otel]'``) and ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``…_TRACES_ENDPOINT``) is set; the
standard ``OTEL_*`` variables configure it. Tests install an in-memory exporter.

A trace crosses the job queue: a job carries the W3C ``traceparent`` (and ``tracestate``)
of the context that queued it in its payload (:func:`carried`, called by ``store/queue.py``;
``store/db.py`` hands a write the context of its caller), and the worker runs the job inside
that context (:func:`resumed`). So a ``POST …/messages`` trace holds its turn, an approval's
holds the run it started, and a run's tasks hang under its run.

Names and attributes (the GenAI semantic conventions where they have a name):

- ``hansa.turn`` (``hansa.conversation_id``, ``hansa.turn_id``, ``gen_ai.conversation.id``),
  with one child per stage it ran: ``hansa.stage <name>``;
- ``invoke_agent <agent id>`` (``gen_ai.operation.name`` ``invoke_agent``,
  ``gen_ai.agent.id``, ``gen_ai.agent.name``, ``gen_ai.conversation.id``): an agent
  answering in a turn (inside ``hansa.stage reply``);
- ``hansa.run`` (``hansa.run_id``, ``gen_ai.conversation.id``): one run job driving a run;
- ``execute_tool <task type>`` (``gen_ai.operation.name`` ``execute_tool``,
  ``gen_ai.tool.name``, ``gen_ai.tool.type`` ``function``, ``gen_ai.tool.call.id`` the
  task's id; ``hansa.task_id``, ``hansa.run_id``, ``hansa.agent_id``): a run's step, or a
  tool an agent called in its turn;
- a model call: span ``chat <model>`` of kind CLIENT with ``gen_ai.operation.name``,
  ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.response.model``,
  ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens`` and, when it fails,
  ``error.type``. No prompt or answer text is recorded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import context, propagate, trace

log = logging.getLogger(__name__)
_TRACER = "hansa"
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


_provider: trace.TracerProvider | None = None
_current: trace.Tracer | None = None
"""The tracer of ``_provider``, made once (OpenTelemetry makes a new one per call, and a
turn opens a span per stage). Without a provider it is a proxy that follows the global
provider once one is installed."""


def use(provider: trace.TracerProvider | None) -> None:
    """Send Hansa's spans to ``provider`` instead of the process's global one (a test's
    in-memory exporter); None: back to the global one."""
    global _provider, _current
    _provider = provider
    _current = None


def _tracer() -> trace.Tracer:
    global _current
    if _current is None:
        _current = trace.get_tracer(_TRACER, tracer_provider=_provider)
    return _current


@contextmanager
def span(name: str, attributes: Mapping[str, str | None] | None = None) -> Iterator[trace.Span]:
    """A span around a block, current inside it; ``None`` attributes are left out."""
    kept = {k: v for k, v in (attributes or {}).items() if v is not None}
    with _tracer().start_as_current_span(name, attributes=kept) as current:
        yield current


Spanning = AbstractContextManager[trace.Span]
"""A span around a block (what :func:`span` gives)."""
CARRIED = ("traceparent", "tracestate")
"""The payload keys a job's trace context travels in (W3C Trace Context)."""


def current() -> context.Context:
    """The trace context now (to hand to a thread, where ``carried`` reads it)."""
    return context.get_current()


def carried(payload: dict[str, Any], of: context.Context | None) -> dict[str, Any]:
    """``payload`` with the trace context ``of`` (its ``traceparent``), when it has a span
    being recorded; else ``payload`` itself."""
    if of is None or not trace.get_current_span(of).get_span_context().is_valid:
        return payload
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=of)
    return {**payload, **{k: v for k, v in carrier.items() if k in CARRIED}}


@contextmanager
def resumed(payload: Mapping[str, Any]) -> Iterator[None]:
    """Run a block in the trace context a job's ``payload`` carries (none: as it is)."""
    carrier = {k: payload[k] for k in CARRIED if isinstance(payload.get(k), str)}
    if not carrier:
        yield
        return
    token = context.attach(propagate.extract(carrier))
    try:
        yield
    finally:
        context.detach(token)


def agent_invocation(
    agent_id: str, agent_name: str, conversation_id: str
) -> AbstractContextManager[trace.Span]:
    """The span of an agent answering in a turn (GenAI ``invoke_agent``)."""
    return span(
        f"invoke_agent {agent_id}",
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": agent_id,
            "gen_ai.agent.name": agent_name,
            "gen_ai.conversation.id": conversation_id,
        },
    )


def tool_execution(
    tool: str, call_id: str, attributes: Mapping[str, str | None]
) -> AbstractContextManager[trace.Span]:
    """The span of a task type run as a step or a tool (GenAI ``execute_tool``)."""
    return span(
        f"execute_tool {tool}",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": call_id,
            **attributes,
        },
    )


def run(run_id: str, conversation_id: str) -> Spanning:
    """The span of a run job driving a run."""
    return span("hansa.run", {"hansa.run_id": run_id, "gen_ai.conversation.id": conversation_id})


def model_call(provider: str, model: str, operation: str = "chat") -> trace.Span:
    """A started span for one model call (not made current: a call has no children);
    ``model_call_done`` ends it."""
    attributes = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }
    return _tracer().start_span(
        f"{operation} {model}", kind=trace.SpanKind.CLIENT, attributes=attributes
    )


def model_call_done(
    current: trace.Span,
    *,
    response_model: str,
    input_tokens: int,
    output_tokens: int,
    error: str | None,
) -> None:
    """End a model call's span with what it used, or its error."""
    current.set_attribute("gen_ai.response.model", response_model)
    current.set_attribute("gen_ai.usage.input_tokens", input_tokens)
    current.set_attribute("gen_ai.usage.output_tokens", output_tokens)
    if error is not None:
        current.set_attribute("error.type", error.split(":", 1)[0][:100])
        current.set_status(trace.Status(trace.StatusCode.ERROR, error[:500]))
    current.end()


def configure() -> bool:
    """Install the SDK's tracer provider with an OTLP/HTTP exporter, when an endpoint is
    configured and the ``otel`` extra is installed; whether it did."""
    if not any(os.environ.get(name) for name in _ENDPOINTS):
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but the otel extra is not installed "
            "(pip install 'hansa[otel]'): no traces are exported"
        )
        return False
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "hansa")})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True
