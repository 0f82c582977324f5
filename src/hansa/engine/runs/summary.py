"""Hans validates a finished run and answers: what was done, with links, or what failed and why.

Never reports a failed task as success (seed 000 §11.2); proposes a recovery path, the
undo of what did complete included. Each completed step was read back when it ended
(its task type's ``check``, ``runs/invoke.py``): every discrepancy with the plan reaches
the final message and the run's metadata (``validation``), seed 000 §6.1.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy import Connection

from hansa.domain import event, message, run
from hansa.domain.job import Job, SummaryJob
from hansa.engine.runs import undo
from hansa.engine.runs.invoke import VALIDATION
from hansa.engine.runtime.faults import crash_point
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import queue, runs

RECOVERY = {
    "permission_denied": "This usually means the credentials are missing or incorrect. I can "
    "help you verify or update them in the project settings, then we can try again.",
    "connector_config": "The project's connection settings are incomplete. Add them in the "
    "project settings and I will run the step again.",
    "outbound_denied": "Hansa only calls public addresses, or targets your administrator has "
    "allowed. Give me a public URL or ask for this target to be allowed.",
    "slug_taken": "Choose another address (slug) for the page and I will create it.",
    "ambiguous_page": "Tell me which page you mean (its id or address) and I will run the "
    "step again.",
    "timeout": "The other system did not answer in time. We can try again in a moment.",
    "connection_failed": "The other system could not be reached. We can try again in a moment.",
    "site_error": "The site reported an internal error. We can try again in a moment.",
    "not_found": "Something the step needed does not exist (any more). Check the reference "
    "and I will adjust the plan.",
}
DEFAULT_RECOVERY = "Tell me how to adjust this step and I will run the plan again."

FINDINGS_SHOWN = 5
"""Review findings the final message lists at most; the run card has them all."""

_SEVERITY = {"error": 0, "warning": 1, "info": 2}


def _describe(task: run.Task, names: dict[str, str]) -> str:
    who = names.get(task.created_by, task.created_by)
    result = task.result or {}
    detail = ""
    if "score" in result:  # a review: its verdict first, then the page it looked at
        count = len(result.get("findings", []))
        detail = f" — score {result['score']}/100, {count} finding{'' if count == 1 else 's'}"
        detail += f", {result['url']}" if "url" in result else ""
    elif "url" in result:
        detail = f" — {result['url']}"
    elif "statusCode" in result:
        detail = f" — HTTP {result['statusCode']}"
    elif "ticketId" in result:
        detail = f" — ticket {result['ticketId']}"
    return f"- {who}: {task.summary}{detail}{_landed(result)}"


def _landed(result: dict[str, Any]) -> str:
    """Where a step's change landed, as its result says (``tasks/connectors/targets.py``):
    the live site, or the workspace as a draft, with the reason."""
    target = result.get("target")
    if not isinstance(target, dict) or not target.get("said"):
        return ""
    reason = f": {target['reason']}" if target.get("reason") else ""
    return f" — {'on' if target.get('where') == 'site' else 'in'} {target['said']}{reason}"


def _findings(done: list[run.Task]) -> list[str]:
    """What the completed reviews found, most severe first: the user should not have to open
    the run card to learn that the new page has a problem."""
    reviews = [t.result for t in done if t.result is not None and "score" in t.result]
    if not reviews:
        return []
    found = [f for r in reviews for f in r.get("findings", []) if isinstance(f, dict)]
    if not found:
        return ["", "The review found nothing to fix."]
    found.sort(key=lambda f: _SEVERITY.get(str(f.get("severity")), len(_SEVERITY)))
    lines = ["", "The review found:"]
    lines += [
        f"{i}. {f.get('message', f.get('code', ''))}"
        for i, f in enumerate(found[:FINDINGS_SHOWN], start=1)
    ]
    if len(found) > FINDINGS_SHOWN:
        lines.append(f"… and {len(found) - FINDINGS_SHOWN} more in the run card.")
    return lines


def discrepancies(tasks: list[run.Task]) -> list[dict[str, str]]:
    """What the review of each completed step found: ``{taskId, taskType, step, problem}``."""
    found: list[dict[str, str]] = []
    for t in tasks:
        review = (t.result or {}).get(VALIDATION) if t.status is run.TaskStatus.COMPLETED else None
        if not isinstance(review, dict):
            continue
        for problem in review.get("discrepancies") or []:
            found.append(
                {
                    "taskId": t.id,
                    "taskType": t.task_type,
                    "step": t.summary,
                    "problem": str(problem),
                }
            )
    return found


def _differences(found: list[dict[str, str]]) -> list[str]:
    if not found:
        return []
    lines = ["", "My check of the results found what differs from the plan:"]
    return lines + [f"- {d['step']}: {d['problem']}" for d in found]


def _undo_offer(undoable: int) -> list[str]:
    if not undoable:
        return []
    steps = "step" if undoable == 1 else f"{undoable} steps"
    return [
        f"If you would rather not keep the {steps} that did complete, press Undo on the run "
        "card and I will undo them, newest first."
    ]


def compose(
    r: run.Run, tasks: list[run.Task], names: dict[str, str], *, undoable: int = 0
) -> tuple[str, dict[str, Any]]:
    """The final message and its structured facts; ``undoable``: how many completed steps
    the system can undo (a failed run offers it)."""
    done = [t for t in tasks if t.status is run.TaskStatus.COMPLETED]
    failed = [t for t in tasks if t.status in (run.TaskStatus.FAILED, run.TaskStatus.AMBIGUOUS)]
    cancelled = [t for t in tasks if t.status is run.TaskStatus.CANCELLED]
    found = discrepancies(done)
    facts = {
        "completed": len(done),
        "failed": len(failed),
        "cancelled": len(cancelled),
        "discrepancies": len(found),
    }
    lines: list[str] = []
    if r.status is run.RunStatus.COMPLETED:
        if found:  # never report a discrepancy as success
            lines.append(f"Finished, but not as planned: {r.title}. Here is what the team did:")
        else:
            lines.append(f"Done: {r.title}. Here is what the team did:")
        lines += [_describe(t, names) for t in done]
        lines += _differences(found)
        lines += _findings(done)
    elif r.status is run.RunStatus.FAILED:
        first = failed[0]
        error = (first.result or {}).get("error", {})
        reason = error.get("message") or first.error or "it failed"
        if first.status is run.TaskStatus.AMBIGUOUS:
            lines.append(
                f"I can't tell whether this step happened: {first.summary}. The worker stopped "
                "right after calling the other system. I will not repeat it on my own: please "
                "check the result there and tell me how to continue."
            )
        else:
            lines.append(
                f"I tried to {first.summary[0].lower()}{first.summary[1:]}, "
                f"but it did not work: {reason}."
            )
            lines.append(RECOVERY.get(str(error.get("code")), DEFAULT_RECOVERY))
        if done:
            lines.append("These steps did complete:")
            lines += [_describe(t, names) for t in done]
            lines += _differences(found)
        if cancelled:
            lines.append(
                "Not started, because an earlier step failed: "
                + "; ".join(t.summary for t in cancelled)
                + "."
            )
        lines += _undo_offer(undoable)
    else:
        lines.append(f"The run “{r.title}” was cancelled.")
        if done:
            lines.append("These steps had completed:")
            lines += [_describe(t, names) for t in done]
            lines += _differences(found)
    return "\n".join(lines), facts


_DONE: dict[run.RunStatus, Literal["completed", "failed", "cancelled"]] = {
    run.RunStatus.COMPLETED: "completed",
    run.RunStatus.CANCELLED: "cancelled",
}
"""How an ended run's summary ends the conversation's work (``done``); else ``failed``."""


def answer(
    services: Services, conn: Connection, r: run.Run, tasks: list[run.Task], batch: Batch
) -> None:
    """Add Hans's validation, final message and ``done`` for ended run ``r`` to ``batch``;
    what the review found is kept in the run's metadata (``validation``). A graph's run
    that completed gets no final message: its nodes said what the graph had to say."""
    chief = services.supervisor
    names = services.agents.names_of(conn, r.tenant_id, (t.created_by for t in tasks))
    batch.thinking(
        f"{chief.display_name} is validating all outputs",
        agent_id=chief.id,
        phase=message.Phase.VALIDATION,
    )
    reviewed = [t for t in tasks if isinstance((t.result or {}).get(VALIDATION), dict)]
    found = discrepancies(tasks)
    if reviewed:
        batch.thinking(
            f"{chief.display_name} read back {len(reviewed)} result"
            f"{'' if len(reviewed) == 1 else 's'}: "
            + (
                f"{len(found)} {'differs' if len(found) == 1 else 'differ'} from the plan"
                if found
                else "all match the plan"
            ),
            agent_id=chief.id,
            phase=message.Phase.VALIDATION,
        )
    validation = {"checked": len(reviewed), "discrepancies": found}
    runs.set_metadata(conn, r.id, {**r.metadata, "validation": validation})
    # a graph's run (a graph's, a rule's chain, a rule's graph.run) is the one run that
    # names its graph: graphs/start.new_run, which starts them all, writes metadata.graph
    if "graph" in r.metadata and r.status is run.RunStatus.COMPLETED:
        # a graph's own nodes say what it has to say; a failure is still explained
        batch.event(event.DoneData(status=_DONE[r.status]), agent_id=chief.id)
        return
    can_undo = len(undo.undoable(services.registry, tasks))
    text, facts = compose(r, tasks, names, undoable=can_undo)
    batch.thinking(
        f"{chief.display_name} is preparing the final summary",
        agent_id=chief.id,
        phase=message.Phase.VALIDATION,
    )
    batch.message(
        message.Kind.ASSISTANT,
        message.Author.ASSISTANT,
        text,
        agent_id=chief.id,
        metadata={"runId": r.id, "runStatus": r.status.value, **facts},
    )
    batch.event(event.DoneData(status=_DONE.get(r.status, "failed")), agent_id=chief.id)


async def run_summary_job(services: Services, claimed: Job) -> None:
    """Validate the run's results and write Hans's final message, then ``done``."""
    run_id = SummaryJob.model_validate(claimed.payload).run_id
    tenant_id = claimed.tenant_id
    r = await services.db.read(lambda conn: runs.get(conn, tenant_id, run_id))
    batch = Batch(r.conversation_id, None, run_id=run_id)

    def write(conn: Connection) -> None:
        current = runs.get(conn, tenant_id, run_id)
        answer(services, conn, current, runs.tasks_of(conn, run_id), batch)
        queue.finish(conn, claimed, services.clock())

    crash_point(services.settings, "summary.before_write")
    batch.then(write)
    await Recorder(services, tenant_id, r.conversation_id, claimed).write(batch)
