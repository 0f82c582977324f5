"""The summarizer's question and its structured answer (seed 002 §5.4).

One structured-output call (purpose ``summary``, ``RequestParams.output_schema`` as
``planning/model_answers.py`` asks) gets the summary so far, the messages to fold in with
their ids, the pasted documents code keeps, and the agents' states. Its answer is held by a
JSON schema: ``{summary, keptMessageIds, droppedMessageIds, stateUpdates}``, the message ids
an enum of the folded messages' ids, each state update ``{agentId, op, key, value}``: an
agent of the enum, and a text the key takes (``set``) or that joins its list (``append``);
never a removal (the seed's rule). Every object is closed, every property required: strict
structured output (OpenAI, Anthropic) accepts no free-form object. Whatever comes back is
checked again here: ids not folded, an agent not offered, an update of another shape are
left out, and the bounds hold (``MAX_KEPT``, ``MAX_STATE_UPDATES``); an answer that is not
such JSON, or has no summary, is no answer (``None``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hansa.domain import agent_state, message
from hansa.domain.summary import ConversationSummary, StateUpdate
from hansa.engine import rolling_summary
from hansa.engine.text import json_object
from hansa.models.base import ChatMessage

PURPOSE = "summary"
"""The model call's purpose (what a scripted model's step names)."""
MAX_KEPT = 2
"""Folded messages the model may keep word for word besides the pasted document."""
MAX_STATE_UPDATES = 8
"""State updates one summary may apply."""
MAX_TOKENS = 1_200
"""The most the summarizer may write: the prose and the ids it lists."""
_OPS = ("set", "append")
"""What an update does with its key: take the value, or add it to the key's list."""


@dataclass(frozen=True, slots=True)
class Answer:
    """The usable part of the summarizer's answer."""

    summary: str
    kept: list[str]
    """Folded messages' ids the model keeps word for word (at most ``MAX_KEPT``)."""
    dropped: list[str]
    """Folded messages' ids the model says it folded into the prose."""
    state_updates: list[StateUpdate]


def schema(folded_ids: Sequence[str], agent_ids: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of the answer: every object closed and every property required, as
    the providers' strict structured output asks (no free-form object: a state update is
    one key and one text, set or appended); the bounds are code's (``parse``)."""
    ids = {"type": "array", "items": {"type": "string", "enum": list(folded_ids)}}
    update = {
        "type": "object",
        "properties": {
            "agentId": {"type": "string", "enum": list(agent_ids)},
            "op": {"type": "string", "enum": list(_OPS)},
            "key": {"type": "string"},
            "value": {"type": "string"},
        },
        "required": ["agentId", "op", "key", "value"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "keptMessageIds": ids,
            "droppedMessageIds": ids,
            "stateUpdates": {"type": "array", "items": update},
        },
        "required": ["summary", "keptMessageIds", "droppedMessageIds", "stateUpdates"],
        "additionalProperties": False,
    }


def prompt(
    previous: ConversationSummary | None,
    fold: rolling_summary.Fold,
    states: Sequence[agent_state.AgentState],
    scope: str,
) -> list[ChatMessage]:
    """The summarizer's prompt: how to answer, the conversation's scope (``scope_of``), the
    summary so far, the agents' states, the pasted documents kept (by id only) and the
    messages to fold in, with their ids."""
    system = (
        "You keep the running summary of a conversation between a user and a team of AI "
        "assistants, for the assistants' later prompts. Rewrite the summary so it also "
        "covers the new messages. Keep every id and name, every decision and approval, "
        "every change made and every open question; add nothing the messages do not say. "
        f"summary: at most {rolling_summary.SUMMARY_WORDS} words. keptMessageIds: at most "
        f"{MAX_KEPT} new messages the conversation still works on word for word (most often "
        "none). droppedMessageIds: the others. stateUpdates: facts, decisions or open "
        "questions the messages establish that an agent's state lacks, as {agentId, op, "
        "key, value}: op append to key facts, decisions or openQuestions, op set to key "
        "goal; never remove or merge what a state holds. Answer JSON only."
    )
    so_far = previous.text if previous else "(none yet)"
    lines = [f"Scope: {scope}", f"Summary so far:\n{so_far}", ""]
    for s in states:
        notes = json.dumps(s.state, ensure_ascii=False, sort_keys=True)
        lines.append(f"State of agent {s.agent_id} (version {s.version}): {notes}")
    if fold.kept:
        kept = ", ".join(m.id for m in fold.kept)
        lines.append(f"Pasted documents kept word for word (do not summarize them): {kept}")
    lines += ["", "New messages:"]
    lines += [f"[{m.id}] {rolling_summary.speaker(m)}: {m.content}" for m in fold.folded]
    return [ChatMessage("system", system), ChatMessage("user", "\n".join(lines))]


def scope_of(project_id: str | None, focus_id: str | None) -> str:
    """The conversation's scope and focus ids, as the summarizer reads them (seed 002 §4.1)."""
    if focus_id is not None:
        return f"entity {focus_id}" + (f" in project {project_id}" if project_id else "")
    return f"project {project_id}" if project_id else "global"


def agents_of(
    supervisor_id: str,
    folded: Sequence[message.Message],
    states: Sequence[agent_state.AgentState],
) -> list[str]:
    """The agents whose state the summary may update: the supervisor, those who answered
    in the folded messages, those who keep a state."""
    found = [supervisor_id, *(m.agent_id for m in folded if m.agent_id)]
    return list(dict.fromkeys([*found, *(s.agent_id for s in states)]))


def parse(raw: str, folded_ids: Sequence[str], agent_ids: Sequence[str]) -> Answer | None:
    """The usable answer in the model's reply; None if it is not a JSON object with a
    summary (ids and updates that do not fit are left out)."""
    reply = json_object(raw)
    if reply is None:
        return None
    text = reply.get("summary")
    if not isinstance(text, str) or not text.strip():
        return None
    return Answer(
        summary=text.strip(),
        kept=_ids(reply.get("keptMessageIds"), folded_ids)[:MAX_KEPT],
        dropped=_ids(reply.get("droppedMessageIds"), folded_ids),
        state_updates=_updates(reply.get("stateUpdates"), agent_ids)[:MAX_STATE_UPDATES],
    )


def _ids(value: Any, allowed: Sequence[str]) -> list[str]:
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(v for v in value if isinstance(v, str) and v in allowed))


def _updates(value: Any, agent_ids: Sequence[str]) -> list[StateUpdate]:
    if not isinstance(value, list):
        return []
    found = []
    for entry in value:
        if not isinstance(entry, dict) or entry.get("agentId") not in agent_ids:
            continue
        op, key, text = entry.get("op"), entry.get("key"), entry.get("value")
        if op not in _OPS or not isinstance(key, str) or not isinstance(text, str):
            continue  # a removal or anything else: never the summarizer's
        key = key.strip()
        if not key or len(key) > agent_state.MAX_KEY_CHARS:
            continue
        agent = entry["agentId"]
        if op == "set":
            found.append(StateUpdate(agent_id=agent, set={key: text}))
        else:
            found.append(StateUpdate(agent_id=agent, append={key: [text]}))
    return found
