"""What Hans says back about an answer before he goes on: what he understood, in the user's
words, and what he could not place.

A labelled answer needs no echo. An answer placed by its order, named by an option, taken
whole, or read by the model is said back ("I understood: Page title “Water Filtration
Services”; Language “English”; …; Layout B: Services by category."), so the user sees
every value as they wrote it and can correct it. Parts of the message that no question
fits are quoted ("I could not place “and make it blue”"), and questions whose values could
not be told apart are named, with the words, so the user can label them.
"""

from __future__ import annotations

from hansa.domain.plan import Fork, Plan
from hansa.engine.planning import answers
from hansa.engine.planning.playbooks import Playbook

QUOTED_CHARS = 120
"""How much of one of the user's parts Hans quotes back."""
_ECHO = {answers.How.IN_ORDER, answers.How.NAMED, answers.How.WHOLE}


def notes(playbook: Playbook, plan: Plan, reading: answers.Reading) -> list[str]:
    """Hans's lines about ``reading``: the model's choices, what he understood, what he
    could not place."""
    lines: list[str] = []
    echoed: list[str] = []
    # with words left over, every value is said back: the user sees what was understood
    echo = _ECHO | {answers.How.LABELLED} if reading.unplaced or reading.unsure else _ECHO
    for r in plan.requirements:  # in the plan's order, as Hans asked
        answer = reading.answers.get(r.name)
        if answer is None:
            continue
        spec = playbook.spec(r.name)
        fork = (
            next((f for f in playbook.forks if f.id == answer.value), None) if spec.fork else None
        )
        if answer.how is answers.How.MODEL:
            lines.append(_model(spec.label, spec.fork, answer, fork))
        elif spec.fork and fork is None:
            lines.append(_model(spec.label, spec.fork, answer, None))
        elif answer.how in echo:
            shown = f"{fork.id}: {fork.title}" if fork else f"“{_quoted(answer.value)}”"
            echoed.append(f"{spec.label} {shown}")
    if echoed:
        lines.insert(0, "I understood: " + "; ".join(echoed) + ".")
    if reading.unsure:
        labels = [playbook.spec(n).label for n in reading.unsure if _known(playbook, n)]
        words = ", ".join(f"“{_quoted(p)}”" for p in reading.unplaced)
        if labels:
            example = playbook.spec(reading.unsure[0]).aliases[:1] or [labels[0].lower()]
            lines.append(
                f"{', '.join(labels)}: I could not tell which of {words} answers which. "
                f"Tell me with its name, e.g. “{example[0]}: …”."
            )
    elif reading.unplaced:
        words = ", ".join(f"“{_quoted(p)}”" for p in reading.unplaced)
        lines.append(f"I could not place {words}: tell me which detail it is, e.g. “audience: …”.")
    return lines


def _model(label: str, fork_spec: bool, answer: answers.Answer, fork: Fork | None) -> str:
    """The model's reading, said back with the words it came from."""
    if fork is not None:
        return f"{label}: I took “{_quoted(answer.words)}” as {answer.value}: {fork.title}."
    if fork_spec:
        return (
            f"{label}: none of the options fits that, so I will go with your own: "
            f"“{_quoted(answer.value)}”."
        )
    return f"{label}: I noted “{_quoted(answer.value)}”."


def _known(playbook: Playbook, name: str) -> bool:
    return any(r.name == name for r in playbook.requirements)


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"
