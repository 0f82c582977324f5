"""The experience timeline (seed 000 §9.2): a read model of the event log."""

from __future__ import annotations

from typing import Any

from hansa.domain import event
from hansa.domain.agent import AgentDefinition

_SKIPPED = ("text_delta", "context_usage", "session", "agent_state")


def build(log: list[event.Event], roster: list[AgentDefinition]) -> list[dict[str, Any]]:
    """One entry per event a person would care about, in order."""
    names = {a.id: a.display_name for a in roster}
    entries: list[dict[str, Any]] = []
    for ev in log:
        if ev.type in _SKIPPED:
            continue
        actor, kind, summary = _describe(ev.payload, ev.agent_id, names)
        entries.append(
            {
                "time": ev.created_at.isoformat(),
                "seq": ev.seq,
                "actor": actor,
                "kind": kind,
                "runId": ev.run_id,
                "turnId": ev.turn_id,
                "summary": summary,
            }
        )
    return entries


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
        case event.ErrorData(message=message):
            return "system", "error", message
        case event.DoneData(status=status):
            return "system", "done", f"Turn {status}"
        case _:
            return agent, p.type, p.type.replace("_", " ")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
