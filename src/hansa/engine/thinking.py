"""Thinking entries and status chips, written by code from templates (seed 000 §9.3, §17).

Each function turns an action the engine took into a short, safe sentence.
Nothing here ever sees a prompt or a model's output.
"""

from __future__ import annotations

from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.domain.routing import RoutingDecision


def routing_entry(supervisor: AgentDefinition, agent: AgentDefinition, d: RoutingDecision) -> str:
    """Why the turn goes to ``agent``."""
    if d.rule_id is None:
        if agent.id == supervisor.id:
            return f"{supervisor.display_name} is taking this request directly"
        return f"{supervisor.display_name} is keeping {agent.display_name} on this conversation"
    return f"{supervisor.display_name} is choosing {agent.role} based on {d.reason}"


def plan_answer_entry(supervisor: AgentDefinition) -> str:
    """Why a message sent while the supervisor plans is not routed by keywords."""
    return f"{supervisor.display_name} is taking this as an answer about the plan"


def handoff_status(supervisor: AgentDefinition, agent: AgentDefinition) -> str:
    """The status chip shown when the answering agent changes (seed 000 §5.3)."""
    return f"{supervisor.display_name} is handing this off to {agent.display_name}"


def context_entry(supervisor: AgentDefinition, ctx: ProjectContext) -> str:
    """What the project context check found; never a guess."""
    if ctx.is_cross_project and not ctx.project_name:
        return f"{supervisor.display_name} notes that no project is in focus"
    facts = [f for f in (ctx.cms_platform, ctx.project_domain) if f]
    name = ctx.project_name or "the project"
    if facts:
        return f"{supervisor.display_name} is checking the context of {name} ({', '.join(facts)})"
    return f"{supervisor.display_name} is checking the context of {name}"


def drafting_entry(agent: AgentDefinition) -> str:
    """The agent starts writing its answer."""
    return f"{agent.display_name} is drafting a reply"


def tool_loop_message(agent: AgentDefinition, rounds: int) -> str:
    """What the user reads when an agent kept calling tools past the limit."""
    return (
        f"Sorry, {agent.display_name} stopped after {rounds} rounds of tool calls without "
        "reaching an answer. The tool calls already made are shown above; please narrow the "
        "request and send it again."
    )


def awaiting_confirmation_note(steps: list[str]) -> str:
    """Added to an agent's answer for each step it asked for that cannot be undone: the step
    did not run, it waits for the user's confirmation (the law of no return)."""
    listed = "; ".join(steps)
    one = len(steps) == 1
    return (
        f"Waiting for your confirmation: {listed}. {'It' if one else 'They'} cannot be undone, "
        f"so {'it has' if one else 'they have'} not run yet; confirm in the run card to go ahead."
    )


def landed_note(steps: list[str]) -> str:
    """Added to an answer whose tool calls changed something in Hansa's workspace instead
    of the project's live site: where, and why (``tasks/connectors/targets.py``)."""
    return "Where this landed: " + "; ".join(steps) + "."


_GATE_PROBLEMS = {
    "empty_answer": "it is empty",
    "unbacked_claim": "it says something was done that no tool call did",
    "broken_link": "it links to a page that does not exist",
    "invented_claim": "it states figures, links, dates or promises that nothing it was given holds",
    "evaluator": "the evaluator model rejected it",
}
"""The quality gate's findings (``engine/quality_gate.py``) in words; never the model's."""


def _problems(codes: list[str]) -> str:
    return "; ".join(_GATE_PROBLEMS.get(code, code.replace("_", " ")) for code in codes)


def gate_passed_entry(
    supervisor: AgentDefinition, agent: AgentDefinition, *, evaluated: bool, retried: bool
) -> str:
    """The quality gate let the answer through."""
    what = "the new answer" if retried else f"{agent.display_name}'s answer"
    evaluator = "; the evaluator model approved it" if evaluated else ""
    return (
        f"{supervisor.display_name} checked {what} before sending it: no claim without a tool "
        f"call behind it, no broken link, nothing invented{evaluator}"
    )


def gate_retry_entry(supervisor: AgentDefinition, agent: AgentDefinition, codes: list[str]) -> str:
    """The quality gate held a draft back and asks the agent again."""
    return (
        f"{supervisor.display_name} held back {agent.display_name}'s draft ({_problems(codes)}) "
        "and asked for a new answer"
    )


def gate_failed_entry(supervisor: AgentDefinition, codes: list[str]) -> str:
    """The answer failed the gate again: it goes out with a note, no more retries."""
    return (
        f"{supervisor.display_name} checked the new answer: {_problems(codes)}; it is sent "
        "with a note"
    )


def gate_note(codes: list[str]) -> str:
    """Added to an answer that failed the quality gate twice."""
    return f"Note: an automatic check could not confirm this answer ({_problems(codes)})."
