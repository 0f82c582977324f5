"""What ``GET /metrics`` exports, in Prometheus's text format.

One ``Metrics`` per process, on a registry of its own (never prometheus-client's global
one), hangs off the engine's ``Services``. It learns of outcomes where they become true:

- turns, runs and tasks from the events each committed transaction appended
  (``Recorder.write`` hands them over after the commit): a turn's ``done``, a run's
  final ``run_status``, a task's final ``task_status``;
- model calls from their ``LlmCall`` records (``engine/llm.py``), stored or not;
- jobs from the worker's handlers (``engine/running.py`` times each one);
- HTTP requests from the access log (``api/access.py``), by method, route template (the
  path as declared, ``/api/runs/{run_id}``; ``unmatched`` for a path no route has) and
  status;
- the queue's depth from the ``jobs`` table, and the live streams from the bus, read when
  the metrics are scraped (a stream that closed, however abruptly, is no longer counted:
  issue 35's churn test reads them).

Labels are few and bounded (statuses, job kinds, providers, routes): no tenant,
conversation or model name, so the export says nothing about any tenant's work but its
volume. The ``*_created`` series prometheus-client adds to each counter and histogram are
left out (they doubled the export for a value Prometheus does not use).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from hansa.domain import event, run
from hansa.domain.job import JobKind, JobStatus
from hansa.domain.llm_call import CallStatus, LlmCall

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
"""The media type of ``render``'s output."""

RUN_ENDS = frozenset({run.RunStatus.COMPLETED, run.RunStatus.FAILED, run.RunStatus.CANCELLED})
TASK_ENDS = frozenset(
    {
        run.TaskStatus.COMPLETED,
        run.TaskStatus.FAILED,
        run.TaskStatus.CANCELLED,
        run.TaskStatus.AMBIGUOUS,
    }
)
QUEUE_STATES = (JobStatus.QUEUED, JobStatus.RUNNING)
"""The job statuses ``hansa_queue_jobs`` reports (done and failed jobs are history)."""

_OUTCOMES = {True: "ok", False: "error"}
"""A model call's outcome label by its success (a cut one is ``cancelled``)."""
_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)


class Metrics:
    """The process's counters and histograms, and their export."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        """Only these metrics: two apps in one process (tests) never share one."""
        r = self.registry
        self.turns = Counter("hansa_turns", "Turns ended, by status.", ["status"], registry=r)
        self.runs = Counter("hansa_runs", "Runs ended, by status.", ["status"], registry=r)
        self.tasks = Counter(
            "hansa_tasks", "Task outcomes (final statuses).", ["status"], registry=r
        )
        self.jobs = Histogram(
            "hansa_job_seconds",
            "Time this process's worker spent on a job, by kind and outcome (ok or error).",
            ["kind", "outcome"],
            buckets=_SECONDS,
            registry=r,
        )
        self.llm_calls = Counter(
            "hansa_llm_calls",
            "Model calls, by provider and outcome.",
            ["provider", "outcome"],
            registry=r,
        )
        self.llm_seconds = Histogram(
            "hansa_llm_call_seconds",
            "Model call latency.",
            ["provider"],
            buckets=_SECONDS,
            registry=r,
        )
        self.tokens = Counter(
            "hansa_llm_tokens",
            "Tokens of model calls, by provider and kind (prompt or completion).",
            ["provider", "kind"],
            registry=r,
        )
        self.cost = Counter(
            "hansa_llm_cost_usd",
            "What model calls cost, in US dollars.",
            ["provider"],
            registry=r,
        )
        self.requests = Histogram(
            "hansa_http_request_seconds",
            "HTTP requests this process answered and how long each took, by method, route "
            "template and status (its _count is the request rate).",
            ["method", "route", "status"],
            buckets=_SECONDS,
            registry=r,
        )
        self.queue = Gauge(
            "hansa_queue_jobs",
            "Jobs in the shared queue (all processes), by kind and status, read at scrape.",
            ["kind", "status"],
            registry=r,
        )

        self.streams = Gauge(
            "hansa_live_streams",
            "Live event streams (SSE, WebSocket) this process serves, read at scrape.",
            registry=r,
        )
        self.followed = Gauge(
            "hansa_followed_conversations",
            "Conversations with a live event stream in this process, read at scrape.",
            registry=r,
        )

    def saw(self, stored: Sequence[event.Event]) -> None:
        """Count what the events of one committed transaction ended."""
        for ev in stored:
            data = ev.payload
            if isinstance(data, event.DoneData) and ev.run_id is None:
                self.turns.labels(data.status).inc()
            elif isinstance(data, event.RunStatusData) and data.status in RUN_ENDS:
                self.runs.labels(data.status.value).inc()
            elif isinstance(data, event.TaskStatusData) and data.status in TASK_ENDS:
                self.tasks.labels(data.status.value).inc()

    def called(self, call: LlmCall) -> None:
        """Count one model call: its outcome, latency, tokens and cost."""
        provider = call.provider
        outcome = "cancelled" if call.status is CallStatus.CANCELLED else _OUTCOMES[call.success]
        self.llm_calls.labels(provider, outcome).inc()
        self.llm_seconds.labels(provider).observe(call.latency_ms / 1000)
        self.tokens.labels(provider, "prompt").inc(call.prompt_tokens)
        self.tokens.labels(provider, "completion").inc(call.completion_tokens)
        self.cost.labels(provider).inc(call.cost_usd)

    def answered(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one HTTP request (``route`` its template) and its duration."""
        self.requests.labels(method, route, str(status)).observe(seconds)

    def job_done(self, kind: JobKind, seconds: float, *, ok: bool) -> None:
        """Count one job this process's worker ran for ``seconds``."""
        self.jobs.labels(kind.value, "ok" if ok else "error").observe(seconds)

    def render(
        self, depth: Mapping[tuple[JobKind, JobStatus], int], streams: int = 0, followed: int = 0
    ) -> bytes:
        """The export, with the queue's ``depth`` by (kind, status) as just read, and the live
        ``streams`` and the conversations they follow as the bus counts them."""
        self.streams.set(streams)
        self.followed.set(followed)
        for kind in JobKind:
            for status in QUEUE_STATES:
                self.queue.labels(kind.value, status.value).set(depth.get((kind, status), 0))
        return generate_latest(_WithoutCreated(self.registry))


class _WithoutCreated(Collector):
    """A registry's metrics without their ``*_created`` samples."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        for family in self._registry.collect():
            family.samples = [s for s in family.samples if not s.name.endswith("_created")]
            yield family
