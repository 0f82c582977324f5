"""The metrics export counts what committed events ended, and model calls."""

from __future__ import annotations

from datetime import UTC, datetime

from hansa.domain import event
from hansa.domain.job import JobKind, JobStatus
from hansa.domain.llm_call import CallStatus, LlmCall
from hansa.domain.run import RunStatus, TaskStatus
from hansa.engine.metrics import Metrics

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _event(payload: event.Payload, *, run_id: str | None = None) -> event.Event:
    return event.Event(
        seq=1,
        conversation_id="c",
        turn_id="t",
        run_id=run_id,
        task_id=None,
        agent_id=None,
        created_at=NOW,
        payload=payload,
    )


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


def test_a_turn_a_run_and_final_task_statuses_are_counted_once() -> None:
    metrics = Metrics()
    metrics.saw(
        [
            _event(event.TaskStatusData(status=TaskStatus.IN_PROGRESS), run_id="r"),
            _event(event.TaskStatusData(status=TaskStatus.COMPLETED), run_id="r"),
            _event(event.RunStatusData(status=RunStatus.RUNNING), run_id="r"),
            _event(event.RunStatusData(status=RunStatus.FAILED), run_id="r"),
            _event(event.DoneData(status="failed"), run_id="r"),  # the run's done: no turn
            _event(event.DoneData(status="completed")),
        ]
    )
    assert _sample(metrics, "hansa_turns_total", status="completed") == 1
    assert _sample(metrics, "hansa_turns_total", status="failed") == 0
    assert _sample(metrics, "hansa_runs_total", status="failed") == 1
    assert _sample(metrics, "hansa_runs_total", status="running") == 0
    assert _sample(metrics, "hansa_tasks_total", status="completed") == 1
    assert _sample(metrics, "hansa_tasks_total", status="in_progress") == 0


def test_a_model_call_adds_its_tokens_cost_and_latency() -> None:
    metrics = Metrics()
    call = LlmCall(
        id="x",
        tenant_id="default",
        conversation_id=None,
        turn_id=None,
        run_id=None,
        node_id=None,
        agent_id=None,
        provider="openai",
        model="gpt",
        prompt_tokens=10,
        completion_tokens=5,
        total_tokens=15,
        latency_ms=250.0,
        success=True,
        error=None,
        cost_usd=0.002,
        created_at=NOW,
    )
    metrics.called(call)
    metrics.called(call.model_copy(update={"success": False}))
    cut = {"success": False, "status": CallStatus.CANCELLED, "estimated": True}
    metrics.called(call.model_copy(update=cut))
    assert _sample(metrics, "hansa_llm_tokens_total", provider="openai", kind="prompt") == 30
    assert _sample(metrics, "hansa_llm_tokens_total", provider="openai", kind="completion") == 15
    assert _sample(metrics, "hansa_llm_cost_usd_total", provider="openai") == 0.006
    assert _sample(metrics, "hansa_llm_calls_total", provider="openai", outcome="error") == 1
    assert _sample(metrics, "hansa_llm_calls_total", provider="openai", outcome="cancelled") == 1
    assert _sample(metrics, "hansa_llm_call_seconds_sum", provider="openai") == 0.75


def test_the_export_reports_every_kind_of_job_in_the_queue() -> None:
    metrics = Metrics()
    metrics.job_done(JobKind.TURN, 0.2, ok=True)
    text = metrics.render({(JobKind.TURN, JobStatus.QUEUED): 3}).decode()
    assert 'hansa_queue_jobs{kind="turn",status="queued"} 3.0' in text
    assert 'hansa_queue_jobs{kind="run",status="running"} 0.0' in text
    assert 'hansa_job_seconds_count{kind="turn",outcome="ok"} 1.0' in text


def test_two_exports_never_share_a_counter() -> None:
    one, two = Metrics(), Metrics()
    one.saw([_event(event.DoneData())])
    assert _sample(two, "hansa_turns_total", status="completed") == 0
