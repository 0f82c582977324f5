"""Undo from the chat: "undo that", "roll back the last run", "undo the Services page run".

Hans answers such a request himself (triage marks it ``undo``). He finds the run meant
(named by its title, else the conversation's newest), asks first with the run card's own
confirmation (the steps a rollback would undo, newest first), and on "yes" rolls the run
back with the card's mechanism (``runs.rollback``), whose summary he writes. With no run
to undo, or nothing in it that can be undone, he says so. The offer waits in the
conversation's planning state (``pending = "undo"``, ``run_id`` the run to roll back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import Connection

from hansa.domain import run
from hansa.domain.plan import Plan, PlanningState
from hansa.engine import runs
from hansa.engine.planning import answers
from hansa.engine.planning.request import Asked, Cancelled, PlanningRequest, Undo
from hansa.store import run_logs
from hansa.store import runs as run_rows

PENDING = "undo"
"""``PlanningState.pending`` while Hans waits for the user to confirm an undo."""
RECENT_RUNS = 20
"""How many of the conversation's newest runs a request to undo can name."""
_YES = re.compile(
    r"\s*+(?:(?:yes|yep|yeah|ok(?:ay)?|sure|confirm(?:ed)?|go ahead|do it|please do)\b"
    r"[\s,.!]*+)?(?:please\s++)?(?:undo|roll (?:it |them )?back|revert|go ahead|do it|proceed)?"
    r"(?:\s++(?:it|them|that|the steps|the run|everything))?[\s.!]*+",
    re.I,
)
_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset(
    "a an the this that it its what you your i we my our me us just did do done have has made "
    "make last latest previous recent most run runs job change changes changed step steps "
    "everything all of for to from in on with and please can could would will hey hi hans ok "
    "okay so now undo roll rollback back revert reverse want like need let lets s d again".split()
)
"""Words of a request to undo that name no run ("please revert what you just did")."""


@dataclass(frozen=True)
class _Found:
    """The run a request meant, its tasks, and the ones a rollback would undo."""

    chosen: run.Run
    tasks: list[run.Task]
    undoable: list[run.Task]


def waiting(state: PlanningState | None) -> bool:
    """Whether the conversation waits for the user to confirm an undo."""
    return state is not None and state.pending == PENDING


async def offer(req: PlanningRequest) -> Asked:
    """Find the run the user means and ask before undoing it, as the run card does; or say
    why there is nothing to undo."""
    hans = req.supervisor.display_name
    req.think(f"{hans} is looking for the run to undo")
    found, words = await req.services.db.read(lambda conn: _find(conn, req))
    if isinstance(found, str):
        req.say(found, planning="undo", undoable=[])
        req.remember_later(None, waiting=False)
        return Asked()
    r = found.chosen
    if not found.undoable:
        req.say(_nothing(found), planning="undo", runId=r.id, undoable=[])
        req.remember_later(None, waiting=False)
        return Asked()
    named = f" (you named it: {', '.join(words)})" if words else ""
    req.think(f"{hans} is asking before undoing “{r.title}”{named}")
    steps = [f"- {t.summary}" for t in found.undoable]
    text = "\n".join(
        [
            f"Undo “{r.title}”? I will undo these steps, newest first:",
            *steps,
            "Steps that cannot be undone stay as they are.",
            "",
            "Say “yes, undo” to go on, or “no” to keep everything as it is.",
        ]
    )
    req.say(text, planning="undo", runId=r.id, undoable=[t.id for t in found.undoable])
    state = PlanningState(
        plan=Plan(intent=f"Undo “{r.title}”", title=f"Undo: {r.title}"),
        intent=f"Undo “{r.title}”",
        run_id=r.id,
        pending=PENDING,
    )
    req.remember_later(state, waiting=True)
    return Asked()


def answer(req: PlanningRequest, state: PlanningState) -> Undo | Cancelled | None:
    """The user's answer to Hans's question before an undo: yes rolls the run back, no
    keeps it; anything else is a new request (None) and the offer lapses."""
    assert state.run_id is not None
    req.remember_later(None, waiting=False)
    if is_yes(req.text):
        req.think(f"{req.supervisor.display_name} is undoing the run, as the user confirmed")
        return Undo(state.run_id)
    if answers.is_cancel(req.text):
        req.say("All right, I left everything as it is.")
        return Cancelled(None)
    return None


def is_yes(text: str) -> bool:
    """ "yes", "yes, undo it", "go ahead": consent to the undo Hans asked about."""
    if not text.strip() or len(text) > answers.SHORT_ANSWER_CHARS:
        return False
    return answers.is_approval(text) or _YES.fullmatch(text) is not None


def refused(reason: str) -> str:
    """What Hans says when the undo was refused after the user confirmed it."""
    return f"I could not undo that: {reason}. Nothing was changed."


def named_words(text: str) -> list[str]:
    """The words of a request to undo that may name a run ("Services", "page")."""
    return [w for w in _WORD.findall(text.lower()) if w not in _FILLER and len(w) > 1]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _find(conn: Connection, req: PlanningRequest) -> tuple[_Found | str, list[str]]:
    """The run ``req`` means, or what Hans says when there is none; the naming words."""
    recent = run_logs.list_runs(
        conn, req.tenant_id, conversation_id=req.conversation_id, limit=RECENT_RUNS
    )
    words = named_words(req.text)
    if not recent:
        return "There is no run in this conversation that I could undo. Nothing was changed.", []
    chosen = recent[0]
    if words:
        wanted = {_stem(w) for w in words}

        def score(r: run.Run) -> int:
            return len(wanted & {_stem(w) for w in _WORD.findall(r.title.lower())})

        best = max(recent, key=score)  # the newest of the best: ``recent`` is newest first
        if score(best) == 0:
            titles = "; ".join(f"“{r.title}”" for r in recent[:5])
            return (
                f"I found no run called “{' '.join(words)}” in this conversation, so I "
                f"undid nothing. Its latest runs: {titles}. Tell me which one to undo.",
                words,
            )
        chosen = best
    tasks = run_rows.tasks_of(conn, chosen.id)
    return _Found(chosen, tasks, runs.undoable(req.services.registry, tasks)), words


def _nothing(found: _Found) -> str:
    """Why nothing of the run can be undone."""
    r = found.chosen
    if r.status is run.RunStatus.ROLLED_BACK:
        return f"“{r.title}” is rolled back already. Nothing was changed."
    if r.status not in run.RUN_ENDED:
        return (
            f"“{r.title}” is {r.status.value.replace('_', ' ')}; I can undo its steps once it "
            "has ended. Nothing was changed."
        )
    if any(t.status is run.TaskStatus.UNDONE for t in found.tasks):
        return f"The steps of “{r.title}” that could be undone are undone already."
    return f"“{r.title}” changed nothing that I can undo, so there is nothing to roll back."
