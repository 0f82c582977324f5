"""Traces across the job queue (issue 33 item 9), from a real server to an OTLP/HTTP receiver.

The server exports with the ``otel`` extra's OTLP exporter (``OTEL_EXPORTER_OTLP_ENDPOINT``);
the receiver here decodes each export with ``opentelemetry-proto``, as a collector would. A
``POST …/messages`` trace holds its turn (the job carried its ``traceparent``), the agent's
answer is a GenAI ``invoke_agent`` span, an approval's trace holds the run it started as a
``hansa.run`` span with its tasks as ``execute_tool`` spans under it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from harness import Server, new_conversation, poll_until, running_server, turn, waits


@dataclass(frozen=True)
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]


class Receiver:
    """An OTLP/HTTP trace receiver: every span exported to it, decoded."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                export = ExportTraceServiceRequest()
                export.ParseFromString(raw)
                for resource in export.resource_spans:
                    for scope in resource.scope_spans:
                        receiver.spans.extend(_span(s) for s in scope.spans)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def named(self, prefix: str) -> list[Span]:
        return [s for s in list(self.spans) if s.name.startswith(prefix)]


def _span(s: Any) -> Span:
    attributes = {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in s.attributes}
    return Span(s.name, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), attributes)


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Receiver]]:
    receiver = Receiver()
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_SERVICE_NAME": "hansa-test",
    }
    with running_server(tmp_path_factory.mktemp("traces"), env=env) as server:
        yield server, receiver
    receiver.httpd.shutdown()
    receiver.httpd.server_close()


def _ancestors(span: Span, spans: list[Span]) -> list[Span]:
    by_id = {s.span_id: s for s in spans}
    found: list[Span] = []
    while span.parent_id in by_id:
        span = by_id[span.parent_id]
        found.append(span)
    return found


def test_a_posted_message_trace_holds_its_turn_and_the_agents_invocation(
    traced: tuple[Server, Receiver],
) -> None:
    server, receiver = traced
    with server.client() as client:
        cid = new_conversation(client)
        events = turn(client, cid, "Hello, who are you?")
        turn_id = events[-1]["turnId"]

        def arrived(_: Any) -> bool:
            turns = [
                s
                for s in receiver.named("hansa.turn")
                if s.attributes.get("hansa.turn_id") == turn_id
            ]
            return bool(turns) and any(s.name.startswith("invoke_agent") for s in receiver.spans)

        poll_until(client, "/healthz", arrived, seconds=30)
    spans = list(receiver.spans)
    (the_turn,) = [s for s in spans if s.attributes.get("hansa.turn_id") == turn_id]
    above = _ancestors(the_turn, spans)
    posts = [s for s in above if s.name.startswith("POST ") and "messages" in s.name]

    assert the_turn.parent_id, "the turn is no root: its job carried the request's context"
    assert posts, f"the turn hangs under its POST …/messages span, not {[s.name for s in above]}"
    assert the_turn.attributes["gen_ai.conversation.id"] == cid
    (agent,) = [
        s for s in spans if s.name == "invoke_agent chief" and s.trace_id == the_turn.trace_id
    ]
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.id"] == "chief"
    assert agent.attributes["gen_ai.agent.name"] == "Hans"
    assert agent.attributes["gen_ai.conversation.id"] == cid
    assert the_turn in _ancestors(agent, spans)
    chats = [s for s in spans if s.name.startswith("chat ") and s.trace_id == the_turn.trace_id]
    assert chats and all(
        agent in _ancestors(c, spans) or the_turn in _ancestors(c, spans) for c in chats
    )


def test_an_approval_trace_holds_its_run_and_the_runs_tools(
    traced: tuple[Server, Receiver],
) -> None:
    server, receiver = traced
    with server.client() as client:
        cid = new_conversation(client)
        body = {"conversationId": cid, "title": "Traced", "tasks": waits("A", "B")}
        run = client.post("/api/runs", json=body).json()
        assert client.post(f"/api/runs/{run['id']}/approve").status_code == 200

        def tools(_: Any = None) -> list[Span]:
            return [
                s
                for s in receiver.named("execute_tool wait")
                if s.attributes.get("hansa.run_id") == run["id"]
            ]

        def driven(_: Any = None) -> list[Span]:
            return [
                s
                for s in receiver.named("hansa.run")
                if s.name == "hansa.run" and s.attributes.get("hansa.run_id") == run["id"]
            ]

        # the run's span ends after its tools' and may be exported in a later batch
        poll_until(client, "/healthz", lambda _: len(tools()) == 2 and driven(), seconds=30)
    spans = list(receiver.spans)
    the_run = driven()[0]  # its first job's (a later job of the run would be another span)
    approvals = [s for s in _ancestors(the_run, spans) if s.name.startswith("POST ")]

    assert approvals and "approve" in approvals[0].name, "the run is in its approval's trace"
    assert the_run.attributes["gen_ai.conversation.id"] == cid
    for tool in tools():
        assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
        assert tool.attributes["gen_ai.tool.name"] == "wait"
        assert tool.attributes["gen_ai.tool.type"] == "function"
        assert tool.attributes["gen_ai.tool.call.id"] == tool.attributes["hansa.task_id"]
        assert any(s.name == "hansa.run" for s in _ancestors(tool, spans)), (
            "a task hangs under a run"
        )
        assert tool.trace_id == the_run.trace_id
