"""The Agent Protocol's (LangGraph Platform's) shapes of Hansa's things, for ``/ap``.

An *assistant* is an agent of the tenant (``graph_id`` is its id too); a *thread* is a
conversation; a *run* is a turn, with what came of it (``engine/turns/outcome.py``): a turn
that approved a plan runs until the plan's run has ended and Hans has summed it up. A
thread's ``values`` are its newest messages as LangChain messages (``human`` and ``ai``);
what the conversation waits for (a question, a plan to approve, a step to confirm) is its
*interrupt*, answered by a run with ``command: {"resume": …}``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from hansa import errors
from hansa.api.models.agent_protocol import (
    AssistantOut,
    Checkpoint,
    Interrupt,
    InterruptValue,
    LcMessage,
    RunError,
    RunMetadata,
    RunOut,
    StateTask,
    ThreadOut,
    ThreadStateOut,
    Values,
)
from hansa.domain import message, run, secrets, turn
from hansa.domain.agent import AgentDefinition
from hansa.engine.turns.outcome import Outcome, Standing, Waiting

THREAD_METADATA = "threadMetadata"
"""The conversation metadata key holding the metadata a client gave its thread."""
MAX_VALUES = 200
"""The most messages a thread's ``values`` carry (the newest)."""
RESUME_HINT = (
    "Resume with a run whose command is {'resume': …}: true or 'yes, proceed' approves the "
    "plan, false or 'cancel' drops it, any other text answers Hans. A step held for "
    "confirmation is confirmed with POST /api/tasks/{taskId}/confirm."
)
RESERVED_VALUES = frozenset({"messages", "__interrupt__", "__error__"})
"""Values a thread's context cannot set."""
STREAM_MODES = frozenset({"values", "updates", "messages", "messages-tuple", "custom", ""})
"""The stream modes a run streams (``""``: the SDK's ``join_stream``, i.e. ``values``)."""
Strategy = Literal["reject", "interrupt", "rollback", "enqueue"]
ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
RunStatus = Literal["pending", "running", "error", "success", "timeout", "interrupted"]


class NotSupported(errors.UserError):
    """A part of the protocol Hansa does not do (501); the message says what to do."""

    code = "not_supported"
    status = 501


def not_a_bool(value: Any) -> Any:
    """A ``BeforeValidator`` for integers: pydantic would take ``false`` as 0."""
    if isinstance(value, bool):
        raise ValueError("must be an integer, not true or false")
    return value


Count = Annotated[int, BeforeValidator(not_a_bool)]
"""An integer; ``false`` is not 0 here."""


class Open(BaseModel):
    """Fields of the protocol Hansa has no use for (``config``, ``checkpoint``…) are
    accepted and ignored."""

    model_config = ConfigDict(extra="allow")


class ThreadCreate(Open):
    thread_id: UUID | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"


class ThreadPatch(Open):
    metadata: dict[str, Any] = Field(default_factory=dict)


class Search(Open):
    metadata: dict[str, Any] | None = None
    limit: Count = Field(default=10, ge=1, le=100)
    offset: Count = Field(default=0, ge=0, le=10_000)


class ThreadSearch(Search):
    status: ThreadStatus | None = None


class AssistantSearch(Search):
    graph_id: str | None = Field(default=None, max_length=100)
    name: str | None = Field(default=None, max_length=100)


class ApRunCreate(Open):
    """A run of the Agent Protocol: its input (or resume) and the assistant it is for."""

    assistant_id: str = Field(min_length=1, max_length=100)
    input: dict[str, Any] | None = None
    command: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    multitask_strategy: Strategy = "enqueue"
    stream_mode: str | list[str] = "values"
    if_not_exists: Literal["create", "reject"] = "reject"

    @field_validator("stream_mode")
    @classmethod
    def _streamed(cls, modes: str | list[str]) -> str | list[str]:
        refused = unstreamed(modes)
        if refused:
            raise ValueError(refused)
        return modes


def unstreamed(modes: str | list[str]) -> str | None:
    """Why a run cannot stream ``modes`` (None: it can)."""
    unknown = sorted(({modes} if isinstance(modes, str) else set(modes)) - STREAM_MODES)
    if not unknown:
        return None
    return (
        f"stream mode {', '.join(unknown)} is not supported (LangGraph's events and debug "
        "modes have no Hansa counterpart): use values, updates, messages, messages-tuple, "
        "or custom (every Hansa event)"
    )


def assistant(agent: AgentDefinition, now: datetime) -> AssistantOut:
    return AssistantOut(
        assistant_id=agent.id,
        graph_id=agent.id,
        name=agent.display_name,
        description=agent.role_summary,
        config={},
        context={},
        metadata={"role": agent.role, "category": agent.category.value},
        version=1,
        created_at=now,
        updated_at=now,
    )


def lc_message(m: message.Message) -> LcMessage:
    """A stored message as a LangChain message (a ``human`` one has no ``name`` nor
    ``tool_calls``: they are left unset, and the routes leave out what is unset)."""
    if m.kind is message.Kind.USER:
        return LcMessage(type="human", content=m.content, id=m.id)
    return LcMessage(type="ai", content=m.content, id=m.id, name=m.agent_id, tool_calls=[])


def values(standing: Standing) -> Values:
    """The thread's newest messages and its context (``__interrupt__`` and ``__error__``
    unset)."""
    return Values(messages=[lc_message(m) for m in standing.messages], **_context(standing))


def _context(standing: Standing) -> dict[str, Any]:
    """The conversation's context keys, secrets masked (``messages`` and ``__…`` are the
    protocol's: ``update_state`` refuses them)."""
    shown = secrets.mask(standing.conversation.context)
    return {k: v for k, v in shown.items() if k not in RESERVED_VALUES}


def final_values(standing: Standing, failed: str | None, *, thread_id: str | None = None) -> Values:
    """The thread's values once a run is done: with ``__interrupt__`` when the thread waits
    for the user, ``__error__`` when the turn failed (each set only then). ``thread_id`` is
    what the client calls the thread (by default its conversation's id), as in
    :func:`thread`."""
    extra: dict[str, Any] = {}
    if standing.waiting is not None:
        extra["__interrupt__"] = interrupts(thread_id or standing.conversation.id, standing.waiting)
    if failed is not None:
        extra["__error__"] = RunError(error="turn_failed", message=failed)
    messages = [lc_message(m) for m in standing.messages]
    return Values(messages=messages, **_context(standing), **extra)


def wire(answer: BaseModel) -> dict[str, Any]:
    """An answer's JSON as the routes write it (by alias, unset fields left out), for a
    stream's ``data`` line."""
    return answer.model_dump(mode="json", by_alias=True, exclude_unset=True)


def interrupts(thread_id: str, waiting: Waiting | None) -> list[Interrupt]:
    if waiting is None:
        return []
    value = InterruptValue(
        kind=waiting.kind,
        question=waiting.question,
        runId=waiting.run_id,
        taskIds=list(waiting.task_ids),
        resume=RESUME_HINT,
    )
    return [Interrupt(value=value, id=interrupt_id(thread_id, waiting))]


def interrupt_id(thread_id: str, waiting: Waiting) -> str:
    """What the thread waits for, named: ``approval:<run id>``, ``question:<thread id>``…
    (``/ap`` and ``/ag-ui`` name it alike; a resume answers it by this id)."""
    return f"{waiting.kind}:{waiting.run_id or thread_id}"


def thread_status(standing: Standing) -> ThreadStatus:
    if standing.busy:
        return "busy"
    return "interrupted" if standing.waiting is not None else "idle"


def thread(standing: Standing, *, thread_id: str | None = None) -> ThreadOut:
    """The conversation as a thread; ``thread_id`` is what the client calls it (the id it
    chose, or the conversation's own: by default the latter)."""
    convo = standing.conversation
    shown = thread_id or convo.id
    waits = interrupts(shown, standing.waiting)
    return ThreadOut(
        thread_id=shown,
        created_at=convo.created_at,
        updated_at=convo.updated_at,
        metadata=convo.metadata.get(THREAD_METADATA) or {},
        status=thread_status(standing),
        values=values(standing),
        interrupts={waits[0].id: waits} if waits else {},
    )


def thread_state(
    standing: Standing, supervisor_id: str, *, thread_id: str | None = None
) -> ThreadStateOut:
    """A thread's state: there is one checkpoint, the conversation as it is now
    (``thread_id`` as in :func:`thread`)."""
    convo = standing.conversation
    shown = thread_id or convo.id
    waits = interrupts(shown, standing.waiting)
    tasks = [
        StateTask(
            id=w.id,
            name=supervisor_id,
            path=[],
            error=None,
            interrupts=[w],
            state=None,
            checkpoint=None,
        )
        for w in waits
    ]
    return ThreadStateOut(
        values=values(standing),
        next=[supervisor_id] if waits else [],
        tasks=tasks,
        interrupts=waits,
        metadata=convo.metadata.get(THREAD_METADATA) or {},
        created_at=convo.updated_at,
        checkpoint=Checkpoint(
            thread_id=shown,
            checkpoint_ns="",
            checkpoint_id=str(convo.last_seq),
            checkpoint_map=None,
        ),
        parent_checkpoint=None,
    )


def run_status(o: Outcome) -> RunStatus:
    """The protocol's status of a run: the turn's, then that of the run it approved."""
    match o.turn.status:
        case turn.TurnStatus.QUEUED:
            return "pending"
        case turn.TurnStatus.RUNNING:
            return "running"
        case turn.TurnStatus.FAILED:
            return "error"
        case turn.TurnStatus.CANCELLED:
            return "interrupted"
    if o.started is None:
        return "interrupted" if o.asked else "success"
    if o.confirming or o.started.status is run.RunStatus.CANCELLED:
        return "interrupted"
    if o.started.status in (run.RunStatus.RUNNING, run.RunStatus.PAUSED):
        return "running"
    return "error" if o.started.status is run.RunStatus.FAILED else "success"


def run_out(o: Outcome, supervisor_id: str, *, thread_id: str | None = None) -> RunOut:
    """A turn as a run (``thread_id`` as in :func:`thread`)."""
    t = o.turn
    changed = t.finished_at or t.created_at
    if o.started is not None:
        changed = max(changed, o.started.updated_at)
    return RunOut(
        run_id=t.id,
        thread_id=thread_id or t.conversation_id,
        assistant_id=t.agent_id or supervisor_id,
        created_at=t.created_at,
        updated_at=changed,
        status=run_status(o),
        metadata=RunMetadata(turnId=t.id, runId=None if o.started is None else o.started.id),
        multitask_strategy="enqueue",
        kwargs={},
    )


def text_of(body: ApRunCreate) -> str:
    """What the run posts: the input's last user message, or the resume's answer."""
    if body.command is not None:
        if body.input is not None:
            raise errors.InvalidInput("give input or command, not both", details={"field": "input"})
        if "resume" not in body.command:
            raise errors.InvalidInput(
                "command must carry resume (goto and update are not supported)",
                details={"field": "command"},
            )
        return resume_text(body.command["resume"], "command.resume")
    found = _last_user_text((body.input or {}).get("messages"))
    if found is None:
        raise errors.InvalidInput(
            "input.messages must hold a user message", details={"field": "input.messages"}
        )
    return found


def resume_text(resume: Any, field: str) -> str:
    """What a resume posts: ``true`` approves, ``false`` drops the plan, text answers."""
    if resume is True:
        return "yes, proceed"
    if resume is False:
        return "cancel"
    if isinstance(resume, str) and resume.strip():
        return resume
    raise errors.InvalidInput(f"{field} must be true, false or an answer", details={"field": field})


def _last_user_text(items: Any) -> str | None:
    if not isinstance(items, list):
        return None
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        if item.get("role", item.get("type")) not in ("user", "human"):
            continue
        content = item.get("content")
        if isinstance(content, list):
            parts = [p.get("text") for p in content if isinstance(p, dict)]
            content = "\n".join(p for p in parts if isinstance(p, str))
        return content if isinstance(content, str) else None
    return None
