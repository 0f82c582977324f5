"""The agent state in the prompt, before and after its budget (issue 32 item 3).

In process, no database: an agent state at the delta limit (16,000 bytes as JSON: a goal,
open questions, decisions, facts and free notes) and a history of ``--history`` messages,
fitted to the embedded model's window (2,048 tokens) and the scripted/OpenAI default
(8,192) with the agent's default ``max_tokens`` (256):

- **before**: the state added after fitting, unbudgeted (the JSON block ``scratchpad.carry``
  wrote): its tokens and what the prompt then holds against the window;
- **after**: ``context_budget.fit`` with the state as a section: its tokens, its budget,
  what was cut, the history kept; and the time to fit a prompt with that state and to
  reconcile it at a turn's end (``settle`` + ``shrink``), p50 over ``--runs``.

    python bench/agent_state_budget.py [--history 30] [--runs 200] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from _server import record
from hansa.domain import agent_state, agent_state_fields
from hansa.engine import agent_notes, context_budget
from hansa.engine.context_packs import MESSAGE_TOKENS, estimate_tokens
from hansa.models.base import ChatMessage

WINDOWS = (2_048, 8_192)
REPLY = 256


def _full_state() -> dict[str, Any]:
    """A state just under the delta limit (``agent_state.MAX_BYTES``)."""
    state: dict[str, Any] = {
        "goal": "Move the Aquaverter shop to a faster host before the spring campaign",
        "openQuestions": [f"Open question {i}: which plan covers the {i} sites?" for i in range(8)],
        "decisions": [f"Decision {i}: keep the checkout on the current provider" for i in range(8)],
        "budgetNotes": {"ceiling": "5k", "approver": "Mia"},
        "facts": [],
    }
    facts: list[str] = []
    while True:
        facts.append(f"Fact {len(facts)}: the product page {len(facts)} loads in 3.{len(facts)} s")
        state["facts"] = facts
        if len(agent_state.encode(state)) > agent_state.MAX_BYTES:
            facts.pop()
            return state


def _history(n: int) -> tuple[ChatMessage, ...]:
    return tuple(
        ChatMessage("user" if i % 2 == 0 else "assistant", f"Message {i}: " + "words " * 30)
        for i in range(n)
    )


def _parts(
    window: int, history: tuple[ChatMessage, ...], state: agent_notes.Notes | None
) -> context_budget.PromptParts:
    return context_budget.PromptParts(
        window=window,
        reply=REPLY,
        system="You are one of a team of AI assistants led by Hans.",
        tools=0,
        message="What is left to do before the move?",
        agent="You are Wes, the web engineer.",
        history=history,
        state=state,
    )


def _p50_us(fn: Callable[[], None], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--history", type=int, default=30)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    state = _full_state()
    notes = agent_notes.Notes("webEngineer", 12, state)
    history = _history(args.history)
    old_block = estimate_tokens(json.dumps(state, ensure_ascii=False, sort_keys=True))
    old_block += MESSAGE_TOKENS + 60  # the block's words around the JSON
    rows = [
        "| window | before: state tokens (share) | before: prompt vs window | after: state "
        "tokens / budget | after: cut | after: history kept | fit p50 | turn-end p50 |",
        "| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for window in WINDOWS:
        without = context_budget.fit(_parts(window, history, None))
        before_total = sum(v for k, v in without.sections.items() if k != "reply") + old_block
        fitted = context_budget.fit(_parts(window, history, notes))
        cut = next((d.what for d in fitted.dropped if d.section == "state"), "nothing")
        kept = len(fitted.prompt) - 4
        budget = fitted.budgets["state"]

        def fit_once(w: int = window) -> None:
            context_budget.fit(_parts(w, history, notes))

        def turn_end(b: int = budget) -> None:
            settled, _ = agent_state_fields.settle(state)
            agent_notes.shrink(agent_notes.Notes("webEngineer", 13, settled), b)

        rows.append(
            f"| {window:,} | {old_block:,} ({old_block / window:.0%}) | "
            f"{before_total + REPLY:,} / {window:,} | {fitted.sections['state']:,} / {budget:,} | "
            f"{cut.split(': ', 1)[1]} | {kept} of {len(history)} | "
            f"{_p50_us(fit_once, args.runs):,.0f} µs | {_p50_us(turn_end, args.runs):,.0f} µs |"
        )
    load = os.getloadavg()[0]
    report = "\n".join(
        [
            "## Agent state in the prompt (issue 32 item 3)",
            "",
            f"A state at the delta limit ({len(agent_state.encode(state)):,} bytes: a goal, "
            f"8 open questions, 8 decisions, {len(state['facts'])} facts, a note) and "
            f"{len(history)} history messages, `max_tokens` {REPLY}. Before: the state added "
            "after fitting, unbudgeted; after: a section of at most 15 % of the window, cut "
            "free notes and oldest facts first. Under load (1-minute load average "
            f"{load:.1f}).",
            "",
            *rows,
            "",
            "Reproduce: `.venv/bin/python bench/agent_state_budget.py --record`.",
        ]
    )
    print(report)
    if args.record:
        record("agent_state_budget", report)


if __name__ == "__main__":
    main()
