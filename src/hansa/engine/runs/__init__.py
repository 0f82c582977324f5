"""Runs: approved plans executed as tasks, group by group, under the four laws.

The public face is ``service`` (create, approve, confirm, cancel, pause, resume,
preempt, read), ``undo`` (undo a step, roll a run back) and ``tools`` (the tool loop of
a turn or a session's step); turns, planning and the API use only these names. The
scheduler, the run job and task invocation are this package's own.
"""

from hansa.engine.runs.change import RunChange
from hansa.engine.runs.connectors import trusted_targets
from hansa.engine.runs.drafts import TaskDraft, default_summary, drafts_from_plan
from hansa.engine.runs.service import (
    NewRun,
    RunView,
    approve,
    approving,
    cancel,
    cancelling,
    confirm,
    create_run,
    get_task,
    on_run,
    open_planning,
    pause,
    pausing,
    preempt,
    resume,
    resuming,
    store_run,
    view,
)
from hansa.engine.runs.tools import (
    Sink,
    ToolCaller,
    ToolDone,
    ToolLoop,
    hold_for_confirmation,
)
from hansa.engine.runs.undo import NotUndoable, UndoFailed, rollback, undo_task, undoable

__all__ = [
    "NewRun",
    "NotUndoable",
    "RunChange",
    "RunView",
    "TaskDraft",
    "Sink",
    "ToolCaller",
    "ToolDone",
    "ToolLoop",
    "UndoFailed",
    "approve",
    "approving",
    "cancel",
    "cancelling",
    "confirm",
    "create_run",
    "default_summary",
    "drafts_from_plan",
    "get_task",
    "hold_for_confirmation",
    "on_run",
    "open_planning",
    "pause",
    "pausing",
    "preempt",
    "resume",
    "resuming",
    "rollback",
    "store_run",
    "trusted_targets",
    "undo_task",
    "undoable",
    "view",
]
