"""Valid domain records with sensible defaults: name only what a test is about.

``make_task(r, step_group="B")`` is a task of run ``r`` in group B; everything else
is a plain, open, reversible ``wait`` of Hans's. Times default to ``NOW``, a fixed
instant, and a misspelt field is an error rather than silently ignored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from hansa.domain import conversation, run
from hansa.domain.base import new_id
from hansa.store.db import DEFAULT_TENANT_ID

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
"""The default creation and update time of every record made here."""

M = TypeVar("M", bound=BaseModel)


def _build(model: type[M], defaults: dict[str, Any], overrides: dict[str, Any]) -> M:
    unknown = set(overrides) - set(model.model_fields)
    if unknown:
        raise TypeError(f"{model.__name__} has no field {', '.join(sorted(unknown))}")
    return model(**{**defaults, **overrides})


def make_conversation(**overrides: Any) -> conversation.Conversation:
    """An idle conversation of the default tenant, held by Hans, without a project."""
    defaults: dict[str, Any] = {
        "id": new_id(),
        "tenant_id": DEFAULT_TENANT_ID,
        "project_id": None,
        "title": None,
        "state": conversation.State.IDLE,
        "current_agent": "chief",
        "last_seq": 0,
        "created_at": NOW,
        "updated_at": NOW,
        "metadata": {},
    }
    return _build(conversation.Conversation, defaults, overrides)


def make_run(**overrides: Any) -> run.Run:
    """A running run of Hans's in the default tenant, without a project."""
    defaults: dict[str, Any] = {
        "id": new_id(),
        "tenant_id": DEFAULT_TENANT_ID,
        "conversation_id": new_id(),
        "project_id": None,
        "created_by": "chief",
        "title": "Test run",
        "status": run.RunStatus.RUNNING,
        "created_at": NOW,
        "updated_at": NOW,
        "metadata": {},
    }
    return _build(run.Run, defaults, overrides)


def make_task(of: run.Run | None = None, /, **overrides: Any) -> run.Task:
    """An open, reversible ``wait`` of Hans's in group A; of run ``of`` when given."""
    defaults: dict[str, Any] = {
        "id": new_id(),
        "run_id": of.id if of else new_id(),
        "conversation_id": of.conversation_id if of else new_id(),
        "project_id": of.project_id if of else None,
        "parent_task_id": None,
        "step_group": "A",
        "sequence_order": 0,
        "created_by": "chief",
        "status": run.TaskStatus.OPEN,
        "task_type": "wait",
        "parameters": {"seconds": 0},
        "summary": "Wait",
        "is_reversible_by_system": True,
        "irreversible_confirmed_at": None,
        "confirmed_hash": None,
        "attempts": 0,
        "scheduled_at": None,
        "result": None,
        "error": None,
        "created_at": NOW,
        "updated_at": NOW,
        "metadata": {},
    }
    return _build(run.Task, defaults, overrides)
