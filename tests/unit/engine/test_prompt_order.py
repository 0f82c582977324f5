"""The prompt's order (issue 34): what every agent of a conversation shares comes first,
the agent's own part last, so a turn to another agent reuses the evaluated prefix."""

from __future__ import annotations

from datetime import UTC, datetime

from hansa.domain.project import ProjectContext
from hansa.engine import context_packs
from hansa.engine.context_budget import PromptParts, SummaryText, fit
from hansa.engine.prompts import persona
from hansa.engine.roster import default_roster
from hansa.models.base import ChatMessage

ROSTER = default_roster()
CHIEF = next(a for a in ROSTER if a.id == "chief")
NOW = datetime(2026, 11, 27, 9, 30, tzinfo=UTC)
PROJECT = ProjectContext(project_id="p1", project_name="Aquaverter", project_domain="aq.ca")
HISTORY = (
    ChatMessage("user", "How do I get more SEO traffic to a bakery?"),
    ChatMessage("assistant", "Write one page per bread you bake."),
    ChatMessage("user", "Which brand colours suit a bakery?"),
    ChatMessage("assistant", "Warm browns and cream."),
)


def _prompt(agent_id: str, message: str) -> tuple[list[ChatMessage], dict[str, int]]:
    agent = next(a for a in ROSTER if a.id == agent_id)
    packs = (
        context_packs.global_pack(NOW, ROSTER),
        context_packs.project_pack(PROJECT, []),
        context_packs.user_pack({"id": "u1", "displayName": "Kim", "tier": "gold"}),
    )
    fitted = fit(
        PromptParts(
            window=8_000,
            reply=200,
            system=f"You are one of a team led by {CHIEF.display_name}. Answer briefly.",
            agent=persona(agent, lead=CHIEF),
            tools=0,
            message=message,
            packs=packs,
            summary=SummaryText(1, "Facts: the bakery opens in May.", "They talked about bread."),
            kept=(ChatMessage("user", "PASTED: the bakery's price list ..."),),
            history=HISTORY,
        )
    )
    assert fitted.dropped == []
    return fitted.prompt, fitted.sections


def _shared(a: list[ChatMessage], b: list[ChatMessage]) -> int:
    """How many leading messages the two prompts have in common, word for word."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_two_agents_prompts_share_everything_before_the_agents_own_part() -> None:
    seo, _ = _prompt("growthLead", "Which hosting plan does a bakery need?")
    web, _ = _prompt("technicalLead", "Which hosting plan does a bakery need?")

    shared = _shared(seo, web)
    assert shared == len(seo) - 2, "all but the agent's system message and the user's message"
    assert seo[shared].role == web[shared].role == "system"
    assert seo[shared].content.startswith("You are Growth Lead Dana, the Growth Lead")
    assert web[shared].content.startswith("You are Technical Lead Theo, the Technical Lead")
    head = seo[0].content
    for part in ("Today is", "Project: Aquaverter", "Kim", "the bakery opens in May"):
        assert part in head, f"{part!r} is in the shared beginning"
    assert all(f"You are {a.display_name}" not in head for a in ROSTER), "no persona in it"


def test_the_next_turns_prompt_begins_with_the_previous_turns_shared_part() -> None:
    before, _ = _prompt("growthLead", "Which brand colours suit a bakery?")
    after, _ = _prompt("creativeLead", "Which hosting plan does a bakery need?")

    assert after[: len(before) - 2] == before[:-2], "only the agent's part and what follows differ"


def test_the_cross_agent_prompt_keeps_every_section_the_single_agent_one_has() -> None:
    single, single_sections = _prompt("chief", "What should we do next?")
    for agent_id in ("growthLead", "creativeLead", "technicalLead"):
        cross, sections = _prompt(agent_id, "What should we do next?")
        assert sections.keys() == single_sections.keys()
        assert [m.role for m in cross] == [m.role for m in single]
        assert cross[0] == single[0], "the packs, rules and summary, word for word"
        assert cross[1:-2] == single[1:-2], "the kept message and the history"
        agent = next(a for a in ROSTER if a.id == agent_id)
        assert cross[-2].content == persona(agent, lead=CHIEF)
        assert cross[-1] == single[-1] == ChatMessage("user", "What should we do next?")
