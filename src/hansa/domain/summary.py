"""A conversation's rolling summary (seed 002 §5): what the prompt keeps of older messages.

Once a conversation's history passes its budget, a summary job folds its older messages
into a new version of the summary; prompts then hold the summary and the messages after
``covered_through_seq``. Versions are kept, never rewritten: version N+1 covers what
version N covered and more.

A summary has two parts: ``text``, the summarizer model's prose (or, when the model
failed, an extract of the messages), and ``facts``, kept by code whatever the model
wrote: the ids mentioned, the user's decisions and the questions still open. A version
also names the older messages prompts keep word for word (a pasted document, seed 002
§5.3), those it folded into its prose, and the agent-state updates it applied (all in
the ``facts`` column: no migration).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from hansa.domain.base import Wire


class StateUpdate(Wire):
    """A change the summarizer proposed to an agent's state: keys to set, lists to extend
    (never a removal: seed 002 §5.4)."""

    agent_id: str
    set: dict[str, Any] = Field(default_factory=dict)
    append: dict[str, list[Any]] = Field(default_factory=dict)


class SummaryFacts(Wire):
    """What a summary keeps word for word, extracted by code from the messages it covers."""

    ids: list[str] = Field(default_factory=list)
    """Ids the messages mention (entities, runs, tasks, pages…), first mention first."""
    decisions: list[str] = Field(default_factory=list)
    """What the user decided or approved, in their words, oldest first."""
    open_questions: list[str] = Field(default_factory=list)
    """Questions asked and not yet answered when the summary was made, oldest first."""
    kept_message_ids: list[str] = Field(default_factory=list)
    """Messages before ``covered_through_seq`` that prompts still send word for word
    (a large pasted document), oldest first."""
    dropped_message_ids: list[str] = Field(default_factory=list)
    """The messages this version folded into its prose (and prompts no longer send)."""
    state_updates: list[StateUpdate] = Field(default_factory=list)
    """The agent-state updates the summarizer proposed and that were applied."""


class ConversationSummary(Wire):
    """One version of a conversation's summary."""

    conversation_id: str
    version: int
    """1 for the first summary; each new one adds 1."""
    covered_through_seq: int
    """The seq of the newest message it covers: prompts add the messages after it."""
    covered_messages: int
    """How many user and assistant messages it covers, over all versions."""
    text: str
    """The summarizer's prose (or an extract of the messages when the model failed)."""
    facts: SummaryFacts
    model_failed: bool = False
    """Whether the summarizer model failed, so ``text`` is an extract made by code."""
    created_at: datetime
