"""Fit a prompt to the model's context window, section by section, and say what it left out.

The window is shared in this order (seed 002 §5.1):

1. **reply**: the agent's ``max_tokens``, kept free for the answer;
2. what is always sent: the **system** rules (the team's rules, and who the agent is),
   the **tools** offered, and the user's **message**;
3. the **packs** (global, project, entity): at most ``PACKS_SHARE`` of the window; when
   they do not fit, items go lowest priority first (the roster, linked entities, the
   document tree, payload fields; the date and the project's facts last), and once an item
   of a group goes, the group's later items go too (a tree is never left with holes);
4. the agent's **state** (its notes): at most ``agent_notes.STATE_SHARE`` of the window;
   when it does not fit, free notes and the oldest facts go first (``agent_notes.fit``);
5. the rolling **summary**: at most ``SUMMARY_SHARE`` of the window and ``SUMMARY_MAX``
   tokens; its kept facts come first, its prose is cut to fit;
6. the **kept** messages (before the summary's cut, kept word for word by it: a pasted
   document), from what is left, before any message after the summary;
7. the **history** (the messages after the summary): whatever is left, newest first; the
   oldest that do not fit are left out.

The prompt's order is not the budget's: what every agent of the conversation shares comes
first and the agent's own part last (issue 34), so that a model that keeps the tokens it
last evaluated (llama.cpp) reuses them when the next turn goes to another agent::

    system: the rules, the packs, the summary | kept | history | system: the agent |
    system: the agent's state | message

Every left-out piece is named in ``Fitted.dropped`` (and so in ``context_usage``): nothing
is dropped silently. A history that did not fit also asks for a new summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hansa.domain.event import ContextDrop
from hansa.engine import agent_notes
from hansa.engine.context_packs import MESSAGE_TOKENS, Item, Pack, estimate_tokens
from hansa.models.base import ChatMessage

PACKS_SHARE = 0.25
"""The most of the window the packs may take together."""
SUMMARY_SHARE = 0.10
"""The most of the window the rolling summary may take."""
SUMMARY_MAX = 2_000
"""The most tokens the rolling summary may take, however large the window (seed: 1–2k)."""


@dataclass(frozen=True, slots=True)
class SummaryText:
    """The rolling summary as the prompt gives it: its kept facts, then its prose."""

    version: int
    facts: str
    prose: str


@dataclass(frozen=True, slots=True)
class PromptParts:
    """Everything a prompt could hold, before fitting."""

    window: int
    reply: int
    """Tokens kept free for the answer (the agent's ``max_tokens``)."""
    system: str
    """How every agent of the team answers: always sent, first."""
    tools: int
    """Estimated tokens of the tools' definitions offered with the call."""
    message: str
    """The user's message this turn answers: always sent."""
    packs: tuple[Pack, ...] = ()
    summary: SummaryText | None = None
    kept: tuple[ChatMessage, ...] = ()
    """Older messages the summary keeps word for word (a pasted document), oldest first."""
    history: tuple[ChatMessage, ...] = ()
    """The messages after the summary, oldest first."""
    unread: int = 0
    """Older messages after the summary that were not even read (past the read limit)."""
    agent: str = ""
    """Who the agent is (its persona): always sent, last before the message."""
    state: agent_notes.Notes | None = None
    """The agent's state (its notes), sent after its persona."""


@dataclass
class Fitted:
    """The fitted prompt and its report."""

    prompt: list[ChatMessage]
    """The system message (rules, packs, summary), the history kept, the agent's system
    message (who it is), the user's message."""
    window: int
    sections: dict[str, int]
    """Estimated tokens by section, as sent (``reply``: kept free)."""
    budgets: dict[str, int]
    """The most the fitted sections could take."""
    dropped: list[ContextDrop] = field(default_factory=list)
    history_overflow: bool = False
    """Whether messages after the summary were left out: the summary is behind."""
    state_of: str | None = None
    """Whose agent state the prompt carries (a hand-over to another agent swaps it)."""


def fit(parts: PromptParts) -> Fitted:
    """Fit ``parts`` to their window; see the module's docstring for the order."""
    sections = {
        "system": sum(
            estimate_tokens(t) + MESSAGE_TOKENS for t in (parts.system, parts.agent) if t
        ),
        "tools": parts.tools,
        "message": estimate_tokens(parts.message) + MESSAGE_TOKENS,
        "reply": parts.reply,
    }
    free = max(parts.window - sum(sections.values()), 0)
    dropped: list[ContextDrop] = []

    packs_budget = min(int(parts.window * PACKS_SHARE), free)
    pack_texts, used = _fit_packs(parts.packs, packs_budget, dropped)
    for pack in parts.packs:
        sections[pack.scope] = used.get(pack.scope, 0)
    free -= sum(used.values())

    state_budget = min(int(parts.window * agent_notes.STATE_SHARE), free)
    notes = agent_notes.fit(parts.state, state_budget, dropped) if parts.state else ""
    if parts.state is not None:
        sections[agent_notes.SECTION] = agent_notes.cost(notes)
        free -= sections[agent_notes.SECTION]

    summary_budget = min(int(parts.window * SUMMARY_SHARE), SUMMARY_MAX, free)
    summary_text = ""
    if parts.summary is not None:
        summary_text = _fit_summary(parts.summary, summary_budget, dropped)
        sections["summary"] = estimate_tokens(summary_text) + 1 if summary_text else 0
        free -= sections["summary"]

    history_budget = free
    pinned = _fit_kept(parts.kept, free, dropped)
    if parts.kept:
        sections["kept"] = sum(_cost(m) for m in pinned)
        free -= sections["kept"]
    kept, overflow = _fit_history(parts.history, free, parts.unread, dropped)
    sections["history"] = sum(_cost(m) for m in kept)

    system = "\n\n".join(t for t in (parts.system, *pack_texts, summary_text) if t)
    agent = [ChatMessage("system", parts.agent)] if parts.agent else []
    agent += [ChatMessage("system", notes)] if notes else []
    prompt = [ChatMessage("system", system), *pinned, *kept, *agent]
    prompt.append(ChatMessage("user", parts.message))
    budgets = {"packs": packs_budget, "summary": summary_budget, "history": history_budget}
    if parts.state is not None:
        budgets[agent_notes.SECTION] = state_budget
    dropped.sort(key=lambda d: _DROP_ORDER.get(d.section, 0))
    state_of = parts.state.agent_id if parts.state else None
    return Fitted(prompt, parts.window, sections, budgets, dropped, overflow, state_of)


_DROP_ORDER = {
    "global": 0,
    "entity": 1,
    "project": 2,
    "state": 3,
    "summary": 4,
    "kept": 5,
    "history": 6,
}
"""The drop report's order: packs (lowest priority first), then the agent's state, the
summary, the history."""


def _cost(message: ChatMessage) -> int:
    return estimate_tokens(message.content) + MESSAGE_TOKENS


def _fit_packs(
    packs: Sequence[Pack], budget: int, dropped: list[ContextDrop]
) -> tuple[list[str], dict[str, int]]:
    order = sorted(
        (
            (item.priority, p, i)
            for p, pack in enumerate(packs)
            for i, item in enumerate(pack.items)
        ),
    )
    left = budget - sum(estimate_tokens(f"## {pack.heading}") + 1 for pack in packs)
    kept: set[tuple[int, int]] = set()
    cut: set[tuple[int, str]] = set()
    for _, p, i in order:
        item = packs[p].items[i]
        if (p, item.group) not in cut and item.tokens <= left:
            kept.add((p, i))
            left -= item.tokens
        else:
            cut.add((p, item.group))
    texts: list[str] = []
    used: dict[str, int] = {}
    for p, pack in enumerate(packs):
        items = [item for i, item in enumerate(pack.items) if (p, i) in kept]
        text = pack.render(items)
        if text:
            texts.append(text)
        used[pack.scope] = used.get(pack.scope, 0) + (estimate_tokens(text) + 1 if text else 0)
        _report_pack(pack, [i for i in range(len(pack.items)) if (p, i) not in kept], dropped)
    return texts, used


def _report_pack(pack: Pack, left_out: list[int], dropped: list[ContextDrop]) -> None:
    by_group: dict[str, list[Item]] = {}
    for i in left_out:
        by_group.setdefault(pack.items[i].group, []).append(pack.items[i])
    groups = sorted(by_group.items(), key=lambda g: -g[1][0].priority)  # lowest priority first
    for group, items in groups:
        total = sum(1 for item in pack.items if item.group == group)
        what = f"{group}: {len(items)} of {total} lines"
        dropped.append(ContextDrop(section=pack.scope, what=what, tokens=_tokens(items)))


def _tokens(items: Sequence[Item]) -> int:
    return sum(item.tokens for item in items)


def _fit_summary(summary: SummaryText, budget: int, dropped: list[ContextDrop]) -> str:
    whole = "\n".join(t for t in (summary.facts, summary.prose) if t)
    if estimate_tokens(whole) + 1 <= budget:
        return whole
    facts_cost = estimate_tokens(summary.facts) + 1
    if facts_cost > budget:  # not even the kept facts fit: cut them too, newest last
        text = summary.facts[: max(budget - 2, 0) * 4]
        what = f"summary v{summary.version}: its prose and the end of its kept facts"
        dropped.append(ContextDrop(section="summary", what=what, tokens=estimate_tokens(whole)))
        return text.rstrip()
    room = (budget - facts_cost - 2) * 4
    prose = summary.prose[: max(room, 0)].rstrip()
    cut = estimate_tokens(summary.prose) - estimate_tokens(prose)
    what = f"summary v{summary.version}: the end of its prose"
    dropped.append(ContextDrop(section="summary", what=what, tokens=cut))
    return "\n".join(t for t in (summary.facts, f"{prose}…" if prose else "") if t)


def _fit_kept(
    kept: Sequence[ChatMessage], budget: int, dropped: list[ContextDrop]
) -> list[ChatMessage]:
    """The kept messages that fit, newest first; each left out is named."""
    fitted: list[ChatMessage] = []
    left = budget
    for message in reversed(kept):
        if _cost(message) <= left:
            fitted.insert(0, message)
            left -= _cost(message)
        else:
            what = f"a message the summary keeps word for word ({len(message.content)} chars)"
            dropped.append(ContextDrop(section="kept", what=what, tokens=_cost(message)))
    return fitted


def _fit_history(
    history: Sequence[ChatMessage], budget: int, unread: int, dropped: list[ContextDrop]
) -> tuple[list[ChatMessage], bool]:
    kept: list[ChatMessage] = []
    left = budget
    for message in reversed(history):
        if _cost(message) > left:
            break
        kept.append(message)
        left -= _cost(message)
    kept.reverse()
    left_out = history[: len(history) - len(kept)]
    if unread:
        what = f"{unread} older message{'s' if unread != 1 else ''} not read (past the read limit)"
        dropped.append(ContextDrop(section="history", what=what, tokens=0))
    if left_out:
        count = len(left_out)
        what = f"{count} oldest message{'s' if count != 1 else ''} after the summary"
        tokens = sum(_cost(m) for m in left_out)
        dropped.append(ContextDrop(section="history", what=what, tokens=tokens))
    return kept, bool(left_out or unread)
