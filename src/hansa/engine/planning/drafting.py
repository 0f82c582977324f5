"""A plan the model is still writing: the steps it has written so far.

The planner's answer is JSON (``llm_planner.DRAFT_SCHEMA``) and streams as text. Read
leniently after each piece, the text names a step as soon as the step's ``summary`` string is
closed, long before the plan is; the turn says so meanwhile (a ``planning`` thinking entry
per step). What the user is shown is read from the text; the plan itself is read only from
the whole answer, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from hansa.domain import secrets

_JSON: TypeAdapter[Any] = TypeAdapter(Any)

SHOWN_CHARS = 160
"""How much of a step's summary its thinking entry shows."""


def written(text: str) -> list[tuple[int, int, str]]:
    """The steps whose summary is complete in ``text``, the start of the model's JSON
    answer: ``(stage, step, summary)`` by position, in the text's order. Text before the
    first ``{`` (a code fence) is skipped; a string still open counts as not written."""
    start = text.find("{")
    if start < 0:
        return []
    try:
        partial = _JSON.validate_json(text[start:], experimental_allow_partial=True)
    except ValueError:  # not JSON: the whole answer will not be a plan either
        return []
    found = []
    for i, stage in enumerate(_list(partial, "stages")):
        for j, step in enumerate(_list(stage, "steps")):
            summary = step.get("summary") if isinstance(step, dict) else None
            if isinstance(summary, str) and summary.strip():
                found.append((i, j, summary))
    return found


def _list(parent: Any, key: str) -> list[Any]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, list) else []


def entry(hans: str, number: int, summary: str) -> str:
    """The thinking entry for the ``number``-th step written (from 1): the summary the
    plan will show, masked and cut short."""
    shown = " ".join(secrets.mask_text(summary).split())
    if len(shown) > SHOWN_CHARS:
        shown = shown[: SHOWN_CHARS - 1] + "…"
    return f"{hans} is planning step {number}: {shown}"


@dataclass
class Progress:
    """Which steps of the model's answer were announced. A call made again (``llm.Retry``)
    starts its text anew (``restart``); a step already announced is not announced again."""

    text: str = ""
    announced: set[tuple[int, int]] = field(default_factory=set)
    attempt: int = 1

    def restart(self) -> None:
        """A new attempt's text begins."""
        self.text = ""

    def add(self, piece: str, attempt: int = 1) -> list[str]:
        """Take the next piece of attempt ``attempt``'s answer (another attempt than the last
        piece's restarts the text): the summaries of the steps it completes."""
        if attempt != self.attempt:
            self.attempt = attempt
            self.restart()
        self.text += piece
        if '"' not in piece:  # no string closed: nothing new is complete
            return []
        new = []
        for i, j, summary in written(self.text):
            if (i, j) not in self.announced:
                self.announced.add((i, j))
                new.append(summary)
        return new
