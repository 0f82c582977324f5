"""The experience timeline (seed 000 §9.2): a read model of the event log.

Each entry says what happened, from the event's data: a task's status change reads as its
outcome ("Page created in WordPress at …", "create_page failed: …"), named by the task type
its ``task_created`` event gave; a run by its title; a plan by its steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hansa.domain import event
from hansa.engine import runs
from hansa.engine.triggers import explain
from hansa.tasks.registry import TaskRegistry

_SKIPPED = ("text_delta", "context_usage", "session", "agent_state")


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the timeline: what happened, who did it, and when."""

    time: datetime
    seq: int
    actor: str
    kind: str
    run_id: str | None
    turn_id: str | None
    summary: str


def build(log: list[event.Event], names: dict[str, str], registry: TaskRegistry) -> list[Entry]:
    """One entry per event a person would care about, in order (a completed task as its
    type in ``registry`` describes it)."""
    seen = _Seen(names, registry)
    entries: list[Entry] = []
    for ev in log:
        if ev.type in _SKIPPED:
            continue
        seen.learn(ev)
        actor, kind, summary = _run_entry(ev, seen) or _describe(
            ev.payload, ev.agent_id, seen.names
        )
        entries.append(Entry(ev.created_at, ev.seq, actor, kind, ev.run_id, ev.turn_id, summary))
    return entries


@dataclass
class _Seen:
    """What earlier events told: agents' names, tasks' types and summaries, runs' titles."""

    names: dict[str, str]
    registry: TaskRegistry
    tasks: dict[str, tuple[str, str]] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)

    def learn(self, ev: event.Event) -> None:
        match ev.payload:
            case event.TaskCreatedData(task_type=task_type, summary=summary) if ev.task_id:
                self.tasks[ev.task_id] = (task_type, summary)
            case event.RunCreatedData(title=title) if ev.run_id:
                self.runs[ev.run_id] = title
            case _:
                pass

    def run(self, run_id: str | None) -> str:
        title = self.runs.get(run_id or "")
        return f"The run “{title}”" if title else "The run"


_RUN_SAYS = {
    "running": "started",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "was cancelled",
    "paused": "is paused",
    "awaiting_approval": "waits for your approval",
    "planning": "is being planned",
}


def _run_entry(ev: event.Event, seen: _Seen) -> tuple[str, str, str] | None:
    """Runs, tasks and plans, told from their data; None for any other event."""
    agent = ev.agent_id or "system"
    who = seen.names.get(agent, agent)
    match ev.payload:
        case event.RunCreatedData(title=title, graph_id=graph_id):
            what = f" from the graph {graph_id}" if graph_id else ""
            return agent, "run_created", f"{who} created the run “{title}”{what}"
        case event.RunStatusData(status=status):
            said = _RUN_SAYS.get(status.value, status.value.replace("_", " "))
            return agent, "run_status", f"{seen.run(ev.run_id)} {said}"
        case event.TaskCreatedData(task_type=task_type, summary=summary):
            return agent, "task_created", f"Task {task_type} ({who}): {summary}"
        case event.TaskUpdatedData(summary=summary, changed=changed):
            return agent, "task_updated", f"Step edited ({', '.join(changed)}): {summary}"
        case event.TaskStatusData(status=status, previous=previous, result=result, retry_at=at):
            task_type, summary = seen.tasks.get(ev.task_id or "", ("a task", ""))
            before = previous.value if previous is not None else None
            told = runs.task_outcome(
                seen.registry, task_type, status.value, result, summary, previous=before
            )
            if at is not None and status.value == "open":
                told = f"{task_type} will be tried again shortly"
            return agent, f"task_{status.value}", told
        case event.PlanData(plan=plan):
            return agent, "planning", _planned(who, plan)
        case event.OperationData(name=name):
            return agent, "operation", name
        case _:
            return None


def _planned(who: str, plan: dict[str, Any]) -> str:
    stages = [s for s in plan.get("stages") or [] if isinstance(s, dict)]
    steps = sum(len(s.get("steps") or []) for s in stages)
    groups = ", ".join(str(s.get("group")) for s in stages)
    together = [str(s.get("group")) for s in stages if len(s.get("steps") or []) > 1]
    said = f"{who} proposed a plan: {plan.get('title') or 'a run'}"
    if steps:
        said += f" ({steps} step{'' if steps == 1 else 's'}"
        said += f" in group{'s' if len(stages) > 1 else ''} {groups}" if groups else ""
        said += f"; {', '.join(together)} in parallel)" if together else ")"
    return said


def _describe(
    p: event.Payload, agent_id: str | None, names: dict[str, str]
) -> tuple[str, str, str]:
    agent = agent_id or "system"
    match p:
        case event.MessageData(author="user", content=content):
            return "user", "message", f"User asked: {_short(content)}"
        case event.MessageData(content=content):
            return agent, "message", f"{names.get(agent, agent)} answered: {_short(content)}"
        case event.RoutingData(agent_id=target, reason=reason):
            who = names.get(target, target)
            return "supervisor", "routing", f"Hans routed the request to {who} ({reason})"
        case event.StatusData(text=text):
            return "supervisor", "status", text
        case event.ThinkingData(summary=summary, phase=phase):
            return agent, f"thinking:{phase}" if phase else "thinking", summary
        case event.ToolCallData(name=tool):
            return agent, "tool_call", f"{names.get(agent, agent)} called the tool {tool}"
        case event.ToolResultData(name=tool, ok=True, result={"status": "awaiting_confirmation"}):
            return agent, "tool_result", f"{tool} waits for your confirmation"
        case event.ToolResultData(name=tool, ok=True):
            return agent, "tool_result", f"{tool} answered"
        case event.ToolResultData(name=tool, error=error):
            why = f" ({error.code})" if error is not None else ""
            return agent, "tool_result", f"{tool} gave no result{why}"
        case event.DraftSupersededData(reason=reason):
            return agent, "draft_superseded", f"A draft answer was withdrawn: {reason}"
        case event.SummaryUpdatedData(version=version, summarized_messages=count):
            what = f"{count} earlier message{'s' if count != 1 else ''}"
            return agent, "summary", f"The conversation summary (v{version}) now covers {what}"
        case event.RuleEvaluatedData():
            return "supervisor", "rule_evaluated", explain.rule_evaluated(p)
        case event.ClaimData(assistant_key=key):
            return key, p.type, explain.claimed(names, p)
        case event.DeferData(assistant_key=key):
            return key, p.type, explain.deferred(names, p)
        case event.ObserveData():
            return "supervisor", p.type, explain.observed(names, p)
        case event.RespondData(assistant_key=key):
            return key, p.type, explain.responded(names, p)
        case event.ErrorData(message=message):
            return "system", "error", message
        case event.DoneData(status=status):
            return "system", "done", f"Turn {status}"
        case _:
            return agent, p.type, p.type.replace("_", " ")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
