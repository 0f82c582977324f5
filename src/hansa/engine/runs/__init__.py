"""Runs: approved plans executed as tasks, group by group, under the four laws.

The public face is ``service`` (create, approve, confirm, cancel, pause, resume,
preempt, read), ``undo`` (undo a step, roll a run back) and ``tools`` (a turn's tool
calls); turns, planning and the API use only these names. The scheduler, the run job
and task invocation are this package's own.
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
    ToolDone,
    ToolRun,
    hold_for_confirmation,
    run_tool,
    settle_tool,
)
from hansa.engine.runs.undo import NotUndoable, UndoFailed, rollback, undo_task, undoable

__all__ = [
    "NewRun",
    "NotUndoable",
    "RunChange",
    "RunView",
    "TaskDraft",
    "ToolDone",
    "ToolRun",
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
    "run_tool",
    "settle_tool",
    "store_run",
    "trusted_targets",
    "undo_task",
    "undoable",
    "view",
]
