"""A lead's review of an earlier step of the run (seed 000 §6.3, escalation).

The review reads the reviewed step's result (by its ref) and, when the agent has a
model, asks it for a short review; it changes nothing outside, so it needs no undo.
"""

from __future__ import annotations

import json

from pydantic import Field

from hansa.domain import secrets
from hansa.tasks.base import Params, Result, TaskContext, TaskFailed, TaskType
from hansa.tasks.registry import Register

NAME = "review"
RESULT_CHARS = 2_000
"""How much of the reviewed step's result the model reads."""

_INSTRUCTIONS = (
    "You review a change a colleague made, as the lead responsible for it. In two or three "
    "short sentences, say whether the result looks right and what to check or follow up. "
    "Plain text."
)


class Review(Params):
    step: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
    """The reviewed step's ref."""
    subject: str = Field(min_length=1, max_length=300)
    """What the step did, in the plan's words."""
    concern: str = Field(default="", max_length=200)
    """Why the lead reviews it ("the DNS change")."""


async def _review(p: Review, ctx: TaskContext) -> Result:
    reviewed = ctx.outputs.get(p.step)
    if reviewed is None:
        raise TaskFailed(
            f"there is no result of step {p.step!r} to review", code="nothing_to_review"
        )
    notes = ""
    if ctx.generate is not None:
        result = json.dumps(secrets.mask(reviewed), default=str)[:RESULT_CHARS]
        material = f"Step: {p.subject}\nConcern: {p.concern}\nResult: {result}"
        notes = (await ctx.generate(_INSTRUCTIONS, material)).strip()
    return {"step": p.step, "subject": p.subject, "concern": p.concern, "notes": notes}


def register(add: Register) -> None:
    """Register review."""
    add(
        TaskType(
            NAME,
            "Review the result of an earlier step of the run, as the lead responsible for it.",
            Review,
            _review,
            "review",
            model_written=True,
        )
    )
