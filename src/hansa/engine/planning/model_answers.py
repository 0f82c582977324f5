"""Answers in plain words, read by the model when the rules (``answers``) do not settle them.

One structured-output call (purpose ``answers``, the same JSON-schema path as the planner)
gets the open questions with their options and the user's message, and answers per
question: an option's id when the message describes that option, ``custom`` with the
answer in a few words when it answers in its own terms, or ``none``. Anything else in
the answer is ignored; an answer that is not that JSON is no answer (the rules stand).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hansa import errors
from hansa.domain.plan import Plan, Requirement
from hansa.engine.llm import CallScope, RecordedCall
from hansa.engine.planning.playbooks import Playbook
from hansa.engine.planning.request import PlanningRequest
from hansa.models.base import ChatMessage, ModelSettings, RequestParams

PURPOSE = "answers"
"""The model call's purpose (what a scripted model's step names)."""
CUSTOM, NONE = "custom", "none"
"""The two choices besides an option's id."""
CUSTOM_CHARS = 200
"""A custom answer is kept to this many characters."""
MESSAGE_CHARS = 4_000
"""How much of the user's message the model reads."""


@dataclass(frozen=True)
class Choice:
    """What the model read for one question: an option's id, or the user's own answer."""

    name: str
    option: str | None = None
    custom: str | None = None


def schema(playbook: Playbook, open_questions: list[Requirement]) -> dict[str, Any]:
    """The JSON schema of the answer: per open question ``{choice, text}``."""
    properties: dict[str, Any] = {}
    for r in open_questions:
        options = [f.id for f in playbook.forks] if playbook.spec(r.name).fork else []
        properties[r.name] = {
            "type": "object",
            "properties": {
                "choice": {"type": "string", "enum": [*options, CUSTOM, NONE]},
                "text": {"type": "string", "maxLength": CUSTOM_CHARS},
            },
            "required": ["choice", "text"],
            "additionalProperties": False,
        }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def instructions(playbook: Playbook, plan: Plan, open_questions: list[Requirement]) -> str:
    """The system message: the goal, the open questions and their options, how to answer."""
    questions = []
    for r in open_questions:
        entry: dict[str, Any] = {"name": r.name, "question": r.question}
        if playbook.spec(r.name).fork:
            entry["options"] = [
                {"id": f.id, "title": f.title, "description": f.description} for f in playbook.forks
            ]
        questions.append(entry)
    return (
        "The user is answering questions about a plan"
        + (f" ({plan.intent})" if plan.intent else "")
        + ". For each question, say what the user's message answers. choice: the id of the "
        f'option the message describes; "{CUSTOM}" when it answers in its own terms (text: '
        f'that answer in a few of the user\'s words); "{NONE}" when it does not answer the '
        "question (text empty). Never guess an answer the message does not give. "
        f"Answer JSON only.\nQuestions: {json.dumps(questions)}"
    )


def parse(playbook: Playbook, open_questions: list[Requirement], raw: str) -> list[Choice] | None:
    """The usable choices in the model's answer, in question order; None if it is not JSON
    of the schema's shape (entries that do not fit are skipped)."""
    try:
        answer = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(answer, dict):
        return None
    ids = {f.id for f in playbook.forks}
    found: list[Choice] = []
    for r in open_questions:
        entry = answer.get(r.name)
        if not isinstance(entry, dict) or not isinstance(entry.get("choice"), str):
            continue
        choice = entry["choice"].strip()
        text = entry.get("text")
        if playbook.spec(r.name).fork and choice in ids:
            found.append(Choice(r.name, option=choice))
        elif choice == CUSTOM and isinstance(text, str) and text.strip():
            found.append(Choice(r.name, custom=" ".join(text.split())[:CUSTOM_CHARS]))
    return found


async def read(
    req: PlanningRequest, playbook: Playbook, plan: Plan, open_questions: list[Requirement]
) -> list[Choice]:
    """Ask the model what the user's message answers; no choices if its answer is unusable
    (the call is recorded with the turn either way)."""
    scope = CallScope(
        tenant_id=req.tenant_id,
        conversation_id=req.conversation_id,
        turn_id=req.turn_id,
        node_id="planner",
        agent_id=req.supervisor.id,
    )
    model = req.services.model_for(req.supervisor, req.project)
    call = RecordedCall(model, scope, req.services.clock, req.services.metrics.called)
    prompt = [
        ChatMessage("system", instructions(playbook, plan, open_questions)),
        ChatMessage("user", req.text[:MESSAGE_CHARS]),
    ]
    params = RequestParams(output_schema=schema(playbook, open_questions), purpose=PURPOSE)
    parts: list[str] = []
    try:
        async for delta in call.stream(
            prompt, ModelSettings(temperature=0, max_tokens=400), params
        ):
            parts.append(delta)
    except errors.HansaError:
        return []
    finally:
        if (record := call.settled()) is not None:
            req.calls.append(record)
    return parse(playbook, open_questions, "".join(parts)) or []
