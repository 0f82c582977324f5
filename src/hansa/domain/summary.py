"""A conversation's rolling summary (seed 002 §5): what the prompt keeps of older messages.

Once a conversation's history passes its budget, a summary job folds its older messages
into a new version of the summary; prompts then hold the summary and the messages after
``covered_through_seq``. Versions are kept, never rewritten: version N+1 covers what
version N covered and more.

A summary has two parts: ``text``, the summarizer model's prose (or, when the model
failed, an extract of the messages), and ``facts``, kept by code whatever the model
wrote: the ids mentioned, the user's decisions and the questions still open.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from hansa.domain.base import Wire


class SummaryFacts(Wire):
    """What a summary keeps word for word, extracted by code from the messages it covers."""

    ids: list[str] = Field(default_factory=list)
    """Ids the messages mention (entities, runs, tasks, pages…), first mention first."""
    decisions: list[str] = Field(default_factory=list)
    """What the user decided or approved, in their words, oldest first."""
    open_questions: list[str] = Field(default_factory=list)
    """Questions asked and not yet answered when the summary was made, oldest first."""


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
