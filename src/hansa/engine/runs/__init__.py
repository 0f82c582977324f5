"""Runs: approved plans executed as tasks, group by group, under the four laws.

The public face is the names below: ``service`` (create, approve, confirm, cancel, pause,
resume, preempt, read), ``undo`` (undo a step, roll a run back), ``tools`` (the one tool
loop of a turn or a session's step), ``one_shot`` (execute one task), the drafts a plan or
a schedule becomes, the connectors' policy and config check, a step's story line, and
the look-up of a project's page or product by name (``lookup``).
Every other package, the API and the command line use only these names (an import-linter
contract in ``pyproject.toml``); only the composition root (``engine/running.py``) reaches
the run job and the summary job. The scheduler, the run job and task invocation are this
package's own.
"""

from hansa.engine.runs.change import RunChange
from hansa.engine.runs.connectors import check_config, outbound_policy, secret_box, trusted_targets
from hansa.engine.runs.drafts import TaskDraft, default_summary, drafts_from_plan
from hansa.engine.runs.lookup import Found, find_named
from hansa.engine.runs.one_shot import details, execute
from hansa.engine.runs.service import (
    NewRun,
    RunView,
    approve,
    approving,
    cancel,
    cancelling,
    confirm,
    create_run,
    create_viewed,
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
from hansa.engine.runs.story import task_outcome
from hansa.engine.runs.tools import (
    Sink,
    ToolCaller,
    ToolDone,
    ToolLoop,
    hold_for_confirmation,
)
from hansa.engine.runs.undo import NotUndoable, UndoFailed, rollback, undo_task, undoable

__all__ = [
    "Found",
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
    "check_config",
    "confirm",
    "create_run",
    "create_viewed",
    "default_summary",
    "details",
    "drafts_from_plan",
    "execute",
    "find_named",
    "get_task",
    "hold_for_confirmation",
    "on_run",
    "open_planning",
    "outbound_policy",
    "pause",
    "pausing",
    "preempt",
    "resume",
    "resuming",
    "rollback",
    "secret_box",
    "store_run",
    "task_outcome",
    "trusted_targets",
    "undo_task",
    "undoable",
    "view",
]
