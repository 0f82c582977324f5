"""The timeline's sentence for a task's status change: a completed task as its type
describes it, any other change from its status alone."""

from __future__ import annotations

from hansa.engine.runs import story
from hansa.tasks.registry import default_registry

REGISTRY = default_registry()


def test_a_completed_task_reads_as_its_type_describes_it() -> None:
    told = story.task_outcome(REGISTRY, "create_ticket", "completed", {"ticketId": "T7"})
    assert told == "Ticket T7 created"


def test_a_type_without_a_description_reads_as_completed_with_its_summary() -> None:
    assert (
        story.task_outcome(REGISTRY, "message.send", "completed", {"text": "hi"}, "tell (node)")
        == "message.send completed: tell (node)"
    )
    assert story.task_outcome(REGISTRY, "gone.type", "completed", None) == "gone.type completed"


def test_other_changes_read_from_the_status() -> None:
    failed = {"error": {"code": "refused", "message": "no scope"}}
    assert story.task_outcome(REGISTRY, "create_page", "failed", failed) == (
        "create_page failed: no scope"
    )
    assert (
        story.task_outcome(REGISTRY, "wait.durable", "open", None, previous="awaiting_confirmation")
        == "wait.durable was confirmed and will run"
    )
