"""A run's log: levels derived from events, the line of text each entry carries."""

from __future__ import annotations

from typing import get_args

import pytest

from factories import NOW
from hansa.domain import event, run_log
from hansa.domain.run import RunStatus, TaskStatus
from hansa.domain.run_log import Level

ERROR, INFO, DEBUG = Level.ERROR, Level.INFO, Level.DEBUG


def _tags() -> set[str]:
    union = get_args(event.Payload)[0]
    return {cls.model_fields["type"].default for cls in get_args(union)}


def _tool_error() -> event.ToolError:
    return event.ToolError(code="scope_denied", message="no")


CASES: list[tuple[event.Payload, Level, str]] = [
    (event.RunStatusData(status=RunStatus.FAILED, previous=RunStatus.RUNNING), ERROR, "run failed"),
    (event.RunStatusData(status=RunStatus.COMPLETED), INFO, "run completed"),
    (event.RunCreatedData(title="Launch", status=RunStatus.AWAITING_APPROVAL), INFO, "run created"),
    (
        event.TaskStatusData(status=TaskStatus.FAILED, previous=TaskStatus.IN_PROGRESS),
        ERROR,
        "task analyze: in_progress → failed",
    ),
    (event.TaskStatusData(status=TaskStatus.AMBIGUOUS), ERROR, "task analyze: ambiguous"),
    (
        event.TaskStatusData(status=TaskStatus.COMPLETED, previous=TaskStatus.IN_PROGRESS),
        INFO,
        "task analyze: in_progress → completed",
    ),
    (event.TaskStatusData(status=TaskStatus.SKIPPED), INFO, "task analyze: skipped"),
    (event.TaskCreatedData(task_type="wait", step_group="A", summary="Wait"), INFO, "created"),
    (event.ErrorData(code="task_failed", message="it broke"), ERROR, "error task_failed"),
    (event.StatusData(message_id="m", text="Dana is on it"), INFO, "Dana is on it"),
    (
        event.MessageData(message_id="m", kind="assistant", author="assistant", content="Done."),
        INFO,
        "assistant: Done.",
    ),
    (event.OperationData(name="create page “Home”: start"), INFO, "create page “Home”: start"),
    (
        event.ThinkingData(message_id="m", summary="Checking the pages", phase="planning"),
        DEBUG,
        "Checking the pages",
    ),
    (
        event.ToolCallData(tool_call_id="c", name="webhook.call", arguments={}),
        DEBUG,
        "tool_call webhook.call",
    ),
    (
        event.ToolResultData(tool_call_id="c", name="entity.read", ok=False, error=_tool_error()),
        DEBUG,
        "tool_result entity.read: scope_denied",
    ),
    (event.TextDeltaData(message_id="m", delta="Hel"), DEBUG, "Hel"),
    (event.DoneData(status="failed"), DEBUG, "done (failed)"),
    (event.PlanData(plan={}), DEBUG, "plan"),
]


@pytest.mark.parametrize(("payload", "level", "text"), CASES, ids=lambda c: str(c)[:40])
def test_levels_and_lines(payload: event.Payload, level: Level, text: str) -> None:
    assert run_log.level_of(payload) is level
    assert text in run_log.message_of(payload, "analyze")


def test_levels_are_ordered_and_a_minimum_keeps_that_level_and_above() -> None:
    assert DEBUG.rank < INFO.rank < ERROR.rank
    failed = event.RunStatusData(status=RunStatus.FAILED)
    running = event.RunStatusData(status=RunStatus.RUNNING)
    delta = event.TextDeltaData(message_id="m", delta="x")
    assert [run_log.at_least(p, INFO) for p in (failed, running, delta)] == [True, True, False]
    assert [run_log.at_least(p, ERROR) for p in (failed, running, delta)] == [True, False, False]
    assert all(run_log.at_least(p, DEBUG) for p in (failed, running, delta))


def test_the_types_a_store_reads_for_a_level_cover_every_payload_at_that_level() -> None:
    tags = _tags()
    for minimum, types in run_log.TYPES_AT_LEAST.items():
        if types is None:
            continue
        assert types <= tags, "only real event types"
        for payload, level, _ in CASES:
            if level.rank >= minimum.rank:
                assert payload.type in types, (minimum, payload.type)


def test_a_failed_task_names_its_error_code_and_lines_are_short_and_masked() -> None:
    failed = event.TaskStatusData(
        status=TaskStatus.FAILED,
        previous=TaskStatus.IN_PROGRESS,
        result={"error": {"code": "outbound_denied", "message": "private address"}},
    )
    assert (
        run_log.message_of(failed, "fetch") == "task fetch: in_progress → failed (outbound_denied)"
    )
    assert run_log.message_of(failed) == "task: in_progress → failed (outbound_denied)"
    long = event.ThinkingData(message_id="m", summary="word " * 200, phase="planning")
    line = run_log.message_of(long)
    assert len(line) == run_log.MESSAGE_CHARS and line.endswith("…")
    leaky = event.ErrorData(code="x", message="call https://api.test/?api_key=s3cr3t failed")
    assert "s3cr3t" not in run_log.message_of(leaky)


def test_an_entry_carries_the_events_fields_its_node_and_masked_data() -> None:
    e = event.Event(
        seq=7,
        conversation_id="c",
        turn_id=None,
        run_id="r",
        task_id="t",
        agent_id="notificationAgent",
        created_at=NOW,
        payload=event.ToolCallData(
            tool_call_id="c1",
            name="webhook.call",
            arguments={"url": "https://x.test", "headers": {"Authorization": "Bearer abcdefgh"}},
        ),
    )
    wire = run_log.entry(e, "notify", "notify").model_dump(mode="json", by_alias=True)
    assert wire == {
        "seq": 7,
        "at": NOW.isoformat().replace("+00:00", "Z"),
        "level": "debug",
        "type": "tool_call",
        "taskId": "t",
        "nodeId": "notify",
        "agentId": "notificationAgent",
        "message": "tool_call webhook.call",
        "data": {
            "toolCallId": "c1",
            "name": "webhook.call",
            "arguments": {"url": "https://x.test", "headers": {"Authorization": "***"}},
        },
    }
