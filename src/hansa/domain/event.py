"""The event log's entries: one envelope, a payload union tagged by ``type``.

The same types travel on SSE, WebSocket and storage. On the wire an event is
``{seq, type, conversationId, turnId, runId, taskId, agentId, createdAt, data}``
where ``data`` is the payload without its tag.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from hansa.domain import secrets
from hansa.domain.base import Wire
from hansa.domain.claims import ClaimTerms, Justification
from hansa.domain.message import Author, Kind, Phase
from hansa.domain.rules import Firing
from hansa.domain.run import RunStatus, TaskStatus

if TYPE_CHECKING:
    from hansa.domain.session import AgentSession

EVENTS_CHANNEL = "hansa_events"
"""The PostgreSQL NOTIFY channel announcing committed events ("sender:conversation:seq")."""
JOBS_CHANNEL = "hansa_jobs"
"""The PostgreSQL NOTIFY channel announcing enqueued jobs ("sender:kind")."""


class SessionData(Wire):
    """A turn or a client session began."""

    type: Literal["session"] = "session"
    action: str = "turn_started"
    message_id: str | None = None


class RoutingData(Wire):
    """The supervisor's routing decision for a turn."""

    type: Literal["routing"] = "routing"
    previous_agent_id: str
    agent_id: str
    rule_id: str | None
    matched: str | None
    reason: str


class StatusData(Wire):
    """A status chip, e.g. "Hans is handing this off to Growth Lead Dana"."""

    type: Literal["status"] = "status"
    message_id: str
    text: str


class ThinkingData(Wire):
    """A short, safe thinking entry written by the engine."""

    type: Literal["thinking"] = "thinking"
    message_id: str
    summary: str
    phase: Phase
    group: str | None = None


class TextDeltaData(Wire):
    """A piece of an assistant message as it is generated."""

    type: Literal["text_delta"] = "text_delta"
    message_id: str
    delta: str


class DraftSupersededData(Wire):
    """The text streamed as ``message_id`` was a draft the quality gate held back: it is not
    the answer. The answer streams again under a new message id (engine/quality_gate.py)."""

    type: Literal["draft_superseded"] = "draft_superseded"
    message_id: str
    """The draft's id (its ``text_delta`` events'); no message is stored under it."""
    reasons: list[str]
    """The gate's findings: ``empty_answer``, ``unbacked_claim``, ``broken_link``,
    ``evaluator``."""
    reason: str
    """Why, in words written by code."""


class MessageData(Wire):
    """A complete message (user or assistant)."""

    type: Literal["message"] = "message"
    message_id: str
    kind: Kind
    author: Author
    content: str


class PlanData(Wire):
    """A plan awaiting approval."""

    type: Literal["plan"] = "plan"
    plan: dict[str, Any]
    run_id: str | None = None


class RunCreatedData(Wire):
    """A run was created."""

    type: Literal["run_created"] = "run_created"
    title: str
    status: RunStatus
    graph_id: str | None = None
    """The graph it runs (``POST /api/graphs/{id}/runs``); None for a plan's run."""


class RunStatusData(Wire):
    """A run changed status."""

    type: Literal["run_status"] = "run_status"
    status: RunStatus
    previous: RunStatus | None = None


class TaskCreatedData(Wire):
    """A task was created."""

    type: Literal["task_created"] = "task_created"
    task_type: str
    step_group: str | None
    summary: str


class TaskUpdatedData(Wire):
    """A step was edited before approval; ``changed`` names the fields, as on the wire."""

    type: Literal["task_updated"] = "task_updated"
    changed: list[str]
    summary: str
    parameters_hash: str
    confirmation_voided: bool = False
    """An earlier consent to this irreversible step no longer holds (its parameters changed)."""


class TaskStatusData(Wire):
    """A task changed status."""

    type: Literal["task_status"] = "task_status"
    status: TaskStatus
    previous: TaskStatus | None = None
    retry_at: datetime | None = None
    """Back to ``open`` for another attempt: not before this time."""
    result: dict[str, Any] | None = None


class ToolCallData(Wire):
    """An agent's model asked for a tool (the agent loop, ``engine/turns/agent_loop.py``)."""

    type: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    """The model's id of the call; its ``tool_result`` names it."""
    name: str
    """The tool: a task type's name (``entity.read``)."""
    arguments: dict[str, Any]
    """The arguments as the model gave them, secrets masked."""


class ToolError(Wire):
    """Why a tool call gave no result; ``message`` is safe to show the user."""

    code: str
    """``scope_denied``, ``missing_parameters``, ``invalid_input``, ``unknown_tool``,
    ``cancelled``, or the task's own failure code (``not_found``, ``timeout``…)."""
    message: str


class ToolResultData(Wire):
    """A tool call's answer: its result, or its error (every ``tool_call`` gets one)."""

    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    name: str
    ok: bool
    result: Any = None
    """The tool's result (secrets masked) when ``ok``."""
    error: ToolError | None = None
    """Why it gave no result, when not ``ok``."""


OperationStatus = Literal["start", "success", "error"]
"""Where an operation is: ``start`` is written before the change, then one of the others."""


class OperationData(Wire):
    """An operation on a workspace entity, as a person reads it (seed 002 §6.4)."""

    type: Literal["operation"] = "operation"
    name: str
    """The sentence to show: ``create document “Brand book”: start``."""
    action: str | None = None
    """``list``, ``search``, ``read``, ``create``, ``update``, ``delete`` (None in events
    logged before these fields)."""
    entity_type: str | None = None
    """``document``, ``goal``, ``page``, ``edge``…"""
    entity_name: str | None = None
    """The entity's name (a display name, not an id)."""
    status: OperationStatus | None = None
    entity_id: str | None = None
    """The entity's id, once known (a created entity has none at ``start``)."""


class EntityPatchData(Wire):
    """A workspace entity changed."""

    type: Literal["entity_patch"] = "entity_patch"
    entity: str
    entity_id: str
    patch: dict[str, Any]


class ContextDrop(Wire):
    """Content that did not fit the prompt's budget and was left out of it."""

    section: str
    """The section it belonged to: ``global``, ``project``, ``entity``, ``summary``,
    ``history``."""
    what: str
    """What was left out, in words (``3 oldest messages``, ``document tree: 40 titles``)."""
    tokens: int
    """Its estimated size."""


class ContextUsageData(Wire):
    """How much of the model's context a turn used, section by section."""

    type: Literal["context_usage"] = "context_usage"
    prompt_tokens: int
    """The model's own count for the reply's last call (providers that count; else an
    estimate)."""
    completion_tokens: int
    context_window: int | None = None
    """The model's window in tokens (None only in events logged before it was known)."""
    estimate: str | None = None
    """How ``sections`` were counted: ``chars/4`` (characters divided by four, rounded up,
    plus four per message)."""
    sections: dict[str, int] = Field(default_factory=dict)
    """Estimated tokens of the first prompt by section: ``system``, ``tools``, ``global``,
    ``project``, ``entity``, ``state`` (the agent's), ``summary``, ``history``, ``message``
    (the user's), and ``reply`` (kept free for the answer)."""
    budgets: dict[str, int] = Field(default_factory=dict)
    """The most each fitted section (packs, state, summary, history) could take."""
    dropped: list[ContextDrop] = Field(default_factory=list)
    """What did not fit and was left out, lowest priority first."""
    summary_version: int | None = None
    """The rolling summary the prompt held, if any."""


class SummaryUpdatedData(Wire):
    """A new version of the conversation's rolling summary was written."""

    type: Literal["summary_updated"] = "summary_updated"
    version: int
    covered_through_seq: int
    """Prompts now hold the summary and the messages after this seq."""
    summarized_messages: int
    """Messages this version folded in (the earlier versions covered the rest)."""
    kept_ids: int
    """Ids the summary keeps word for word."""
    model_failed: bool = False
    """The summarizer model failed: the text is an extract made by code."""


class AgentStateData(Wire):
    """An agent's scratchpad changed (``domain/agent_state.py``): its whole new state."""

    type: Literal["agent_state"] = "agent_state"
    agent_id: str
    version: int
    state: dict[str, Any]


class HandoffData(Wire):
    """The conversation went to a human agent."""

    type: Literal["handoff"] = "handoff"
    reason: str
    handoff_id: str | None = None
    priority: str = "normal"
    status: str = "pending"


class HandoffStatusData(Wire):
    """A handoff moved: accepted, resolved, returned."""

    type: Literal["handoff_status"] = "handoff_status"
    handoff_id: str
    status: str
    previous: str
    assignee: str | None = None


class RuleEvaluatedData(Wire):
    """The rules of a trigger were evaluated: each matched rule with its conditions and
    actions, and each rule with a ``timedOut`` test (it did not match); the other rules that
    did not match are only counted."""

    type: Literal["rule_evaluated"] = "rule_evaluated"
    trigger: str
    firings: list[Firing]
    skipped: int = 0
    """Rules evaluated that did not match (and had no test that timed out)."""


class ClaimData(Wire):
    """An assistant claims the message (seed 001 turn-taking)."""

    type: Literal["assistant.intent.claim"] = "assistant.intent.claim"
    assistant_key: str
    justification: Justification
    claim: ClaimTerms
    external: bool = False


class DeferData(Wire):
    """An assistant that claimed gives way to a stronger claim."""

    type: Literal["assistant.intent.defer"] = "assistant.intent.defer"
    assistant_key: str
    justification: Justification
    deferred_to: str


class ObserveData(Wire):
    """Participants with no claim watch without answering (one event per turn)."""

    type: Literal["assistant.action.observe"] = "assistant.action.observe"
    assistant_keys: list[str]
    justification: Justification


class RespondData(Wire):
    """The one assistant that answers the message, and why."""

    type: Literal["assistant.action.respond"] = "assistant.action.respond"
    assistant_key: str
    justification: Justification
    claim: ClaimTerms
    external: bool = False


class ErrorData(Wire):
    """A turn or run failed; ``message`` is safe to show the user."""

    type: Literal["error"] = "error"
    code: str
    message: str


class DoneData(Wire):
    """The last event of every turn."""

    type: Literal["done"] = "done"
    status: Literal["completed", "failed", "cancelled"] = "completed"


class SessionStepData(Wire):
    """A step of an agent session was recorded (seed 004)."""

    type: Literal["session_step"] = "session_step"
    session_id: str
    iteration: int
    step: str
    next_step: str
    text: str | None
    done: bool
    guidance: str | None = None
    tools: list[dict[str, Any]] | None = None
    """The tools the step called: ``{name, ok, error?}`` each."""


class SessionStatusData(Wire):
    """An agent session changed status (``reason`` says why it ended or paused)."""

    type: Literal["session_status"] = "session_status"
    session_id: str
    status: str
    reason: str | None = None

    @classmethod
    def of(cls, session: AgentSession) -> SessionStatusData:
        """The event for ``session`` as it is now."""
        return cls(session_id=session.id, status=session.status.value, reason=session.reason)


Payload = Annotated[
    SessionData
    | RoutingData
    | StatusData
    | ThinkingData
    | TextDeltaData
    | DraftSupersededData
    | MessageData
    | PlanData
    | RunCreatedData
    | RunStatusData
    | TaskCreatedData
    | TaskUpdatedData
    | TaskStatusData
    | ToolCallData
    | ToolResultData
    | OperationData
    | EntityPatchData
    | ContextUsageData
    | SummaryUpdatedData
    | AgentStateData
    | HandoffData
    | HandoffStatusData
    | RuleEvaluatedData
    | ClaimData
    | DeferData
    | ObserveData
    | RespondData
    | SessionStepData
    | SessionStatusData
    | ErrorData
    | DoneData,
    Field(discriminator="type"),
]

PAYLOAD_ADAPTER: TypeAdapter[Payload] = TypeAdapter(Payload)


class Event(Wire):
    """One entry of a conversation's ordered, append-only log."""

    seq: int
    conversation_id: str
    turn_id: str | None
    run_id: str | None
    task_id: str | None
    agent_id: str | None
    created_at: datetime
    payload: Payload

    @property
    def type(self) -> str:
        """The payload's tag."""
        return self.payload.type

    def to_wire(self) -> dict[str, Any]:
        """The JSON shape of API.md; the secrets of plans, results and arguments as ``***``."""
        data = self.payload.model_dump(mode="json", by_alias=True, exclude={"type"})
        if self.payload.type in _CARRIES_VALUES:  # also those logged before they were masked
            data = secrets.mask(data)
        return {
            "seq": self.seq,
            "type": self.payload.type,
            "conversationId": self.conversation_id,
            "turnId": self.turn_id,
            "runId": self.run_id,
            "taskId": self.task_id,
            "agentId": self.agent_id,
            "createdAt": self.created_at.isoformat(),
            "data": data,
        }


_CARRIES_VALUES = frozenset(
    {"plan", "task_status", "tool_call", "tool_result", "agent_state", "entity_patch"}
)
"""Payloads that carry a plan's, a task's or a tool's values (an entity patch: a step's
parameters), where a secret may sit."""


def payload_from_stored(event_type: str, data: dict[str, Any]) -> Payload:
    """Rebuild a payload from its stored tag and camelCase data."""
    return PAYLOAD_ADAPTER.validate_python({**data, "type": event_type})
