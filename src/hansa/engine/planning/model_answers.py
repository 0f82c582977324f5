"""Answers in plain words the rules (``answers``) leave open, read by the model.

One structured-output call (purpose ``answers``) gets the open questions with their options
and the user's message. Its answer is held by a JSON schema that cannot carry a made-up
value: per question an option's id, ``custom`` or ``none`` (``choice``), and the user's
words it read that from (``text``), which must be one of the message's own parts
(``answers.spans``, an enum). The embedded model generates under that schema's grammar
(``models/local.py``), so its answer is JSON of that shape; the providers' structured
output holds theirs to it. Whatever comes back is checked again here: an answer whose
words are not in the message, an option without the words it was read from, a choice the
question does not offer, are dropped, never stored as the user's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hansa import errors
from hansa.engine import llm
from hansa.engine.llm import CallScope
from hansa.engine.planning import answers
from hansa.engine.planning.request import PlanningRequest
from hansa.engine.text import json_object
from hansa.models.base import ChatMessage, ModelSettings, RequestParams

PURPOSE = "answers"
"""The model call's purpose (what a scripted model's step names)."""
CUSTOM, NONE = "custom", "none"
"""The two choices besides an option's id."""
MESSAGE_CHARS = 4_000
"""How much of the user's message the model reads."""
MAX_TOKENS = 400
"""The least room the answer gets; the embedded model raises it to what its grammar can
produce, so its answer is never cut off."""


def schema(questions: Sequence[answers.Question], spans: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of the answer: per question ``{choice, text}``, ``text`` one of the
    message's own parts (or empty)."""
    properties: dict[str, Any] = {}
    for q in questions:
        choices = [o.id for o in q.options] + ([CUSTOM] if q.own_words else []) + [NONE]
        properties[q.name] = {
            "type": "object",
            "properties": {
                "choice": {"type": "string", "enum": choices},
                "text": {"type": "string", "enum": ["", *spans]},
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


def instructions(intent: str, questions: Sequence[answers.Question]) -> str:
    """The system message: the goal, the open questions and their options, how to answer."""
    listed = []
    for q in questions:
        entry: dict[str, Any] = {"name": q.name, "question": q.label}
        if q.options:
            entry["options"] = [{"id": o.id, "title": o.title} for o in q.options]
        listed.append(entry)
    return (
        "The user is answering questions about a plan"
        + (f" ({intent})" if intent else "")
        + ". For each question, say what the user's message answers. choice: the id of the "
        f'option the message describes; "{CUSTOM}" when it answers in its own terms; '
        f'"{NONE}" when it does not answer the question. text: the part of the message that '
        "answers it, copied exactly (empty for none). Never guess an answer the message does "
        f"not give. Answer JSON only.\nQuestions: {json.dumps(listed)}"
    )


def parse(
    questions: Sequence[answers.Question], message: str, raw: str
) -> dict[str, answers.Answer] | None:
    """The usable answers in the model's reply; None if it is not a JSON object (entries
    that do not fit, or whose words the message does not hold, are dropped)."""
    reply = json_object(raw)
    if reply is None:
        return None
    found: dict[str, answers.Answer] = {}
    for q in questions:
        entry = reply.get(q.name)
        if not isinstance(entry, dict):
            continue
        choice, text = entry.get("choice"), entry.get("text")
        if not isinstance(choice, str) or not isinstance(text, str):
            continue
        words = " ".join(text.split())
        if not answers.written(words, message):
            continue  # not the user's words: never stored as theirs
        option = next((o for o in q.options if o.id == choice.strip()), None)
        if option is not None:
            found[q.name] = answers.Answer(option.id, words, answers.How.MODEL)
        elif choice.strip() == CUSTOM and q.own_words:
            found[q.name] = answers.Answer(words, words, answers.How.MODEL)
    return found


async def read(
    req: PlanningRequest, intent: str, questions: Sequence[answers.Question]
) -> dict[str, answers.Answer]:
    """Ask the model what the user's message answers of ``questions``; nothing if its
    answer is unusable (the call is recorded with the turn either way)."""
    message = req.text[:MESSAGE_CHARS]
    spans = answers.spans(message)
    if not questions or not spans:
        return {}
    scope = CallScope(
        tenant_id=req.tenant_id,
        conversation_id=req.conversation_id,
        turn_id=req.turn_id,
        node_id="planner",
        agent_id=req.supervisor.id,
    )
    model = req.services.model_for(req.supervisor, req.project)
    prompt = [
        ChatMessage("system", instructions(intent, questions)),
        ChatMessage("user", message),
    ]
    params = RequestParams(output_schema=schema(questions, spans), purpose=PURPOSE)
    services = req.services
    try:
        answer = await llm.ask(
            model,
            scope,
            prompt,
            ModelSettings(temperature=0, max_tokens=MAX_TOKENS),
            params,
            clock=services.clock,
            retry=llm.Retry.of(services.settings),
            calls=req.calls,
            observe=services.metrics.called,
        )
    except errors.HansaError:
        return {}
    return parse(questions, message, answer.text) or {}
