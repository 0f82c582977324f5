"""Should the embedded model be offered tools in a turn? Measured, not assumed (issue 32).

The embedded model (SmolLM2, 135M parameters, a 2,048-token window) has no native tool
calling: a call that offers tools is answered with one grammar-constrained JSON object
(``models/_local_tools.py``). ``LocalModel.agent_tools`` is False, so a turn's agent loop
offers it none. This script measures what offering them would cost and give, in process,
with the real model and the real toolboxes:

1. **room**: the tokens of each agent's tool definitions (as the context budget counts them)
   against the 2,048-token window;
2. **grammar**: whether llama.cpp turns each agent's whole toolbox (the answer schema of
   ``tool_choice="auto"``) into a grammar, and how long that takes;
3. **choice**: for labelled requests (each needs one tool, or none), whether the model's
   answer names the right tool, and whether its arguments pass the laws
   (``Toolbox.judge``), with the tools that compile;
4. **time**: the first words of a plain question streamed without tools, against the whole
   answer of the same question with tools offered (a call with tools is answered whole).

    python bench/local_tools.py [--record]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from dataclasses import dataclass

from _server import record
from hansa import errors
from hansa.domain.project import ProjectContext
from hansa.engine.roster import default_roster
from hansa.engine.toolbox import Refused, Toolbox
from hansa.models import _local_tools
from hansa.models.base import ChatMessage, ModelSettings, RequestParams, TextDelta, ToolCall
from hansa.models.local import LocalModel, _grammar
from hansa.tasks.registry import default_registry

WINDOW = 2048
PROJECT = ProjectContext(project_id="p1", project_name="Aquaverter")
SYSTEM = "You are Hans, the assistant of a small web agency. Answer briefly and concretely."
LABELLED: tuple[tuple[str, str | None], ...] = (
    ("Create a document called Launch checklist.", "entity.create"),
    ("Make a new goal named Double newsletter signups.", "entity.create"),
    ("Add a task called Fix the contact form.", "entity.create"),
    ("Search the workspace for anything about pricing.", "entity.search"),
    ("Find the documents that mention the brand guide.", "entity.search"),
    ("List all the goals in this project.", "entity.list"),
    ("List every task we have.", "entity.list"),
    ("Delete the entity doc_17.", "entity.delete"),
    ("Run an SEO audit of the page /pricing.", "run_audit"),
    ("Open an internal ticket: the staging server is down.", "create_ticket"),
    ("What is a meta description?", None),
    ("How long should a blog post be?", None),
    ("Thanks, that helps!", None),
    ("What does SEO stand for?", None),
)
"""Requests with the tool a careful assistant would call (None: it answers in words)."""
PLAIN = (
    "What is a meta description?",
    "How long should a blog post be?",
    "What does SEO stand for?",
    "How do I pick brand colours?",
    "What is a landing page?",
)
SETTINGS = ModelSettings(temperature=0.0, max_tokens=160)


@dataclass(frozen=True)
class Choice:
    request: str
    expected: str | None
    got: str | None
    valid: bool
    """The call's arguments passed the laws (or the answer was words, as expected)."""


def _room() -> list[tuple[str, int, int]]:
    registry = default_registry()
    rows = []
    for agent in default_roster():
        box = Toolbox(registry, agent, PROJECT)
        rows.append((agent.id, len(box.definitions()), box.tokens()))
    return rows


def _grammars() -> list[tuple[str, str, float, list[str]]]:
    registry = default_registry()
    rows = []
    for agent in default_roster():
        box = Toolbox(registry, agent, PROJECT)
        params = RequestParams(tools=box.definitions())
        started = time.perf_counter()
        try:
            _grammar(_local_tools.answer_schema(params))
            outcome = "ok"
        except errors.ConfigError as exc:
            outcome = "refused: " + str(exc).rsplit(": ", 1)[-1]
        elapsed = (time.perf_counter() - started) * 1000
        kept = {t.name for t in _compiling(box)}
        failing = sorted(d.name for d in box.definitions() if d.name not in kept)
        rows.append((agent.id, outcome, elapsed, failing))
    return rows


def _compiling(box: Toolbox) -> tuple[object, ...]:
    kept = []
    for tool in box.definitions():
        try:
            _grammar(_local_tools.answer_schema(RequestParams(tools=(tool,))))
            kept.append(tool)
        except errors.ConfigError:
            pass
    return tuple(kept)


async def _choices(model: LocalModel) -> tuple[list[Choice], list[str], float]:
    registry = default_registry()
    hans = next(a for a in default_roster() if a.id == "chief")
    box = Toolbox(registry, hans, PROJECT)
    tools = _compiling(box)
    dropped = sorted({d.name for d in box.definitions()} - {t.name for t in tools})
    params = RequestParams(tools=tools)
    rows, seconds = [], []
    for request, expected in LABELLED:
        messages = [ChatMessage("system", SYSTEM), ChatMessage("user", request)]
        started = time.perf_counter()
        try:
            response = await model.request(messages, SETTINGS, params)
        except errors.ProviderError:
            rows.append(Choice(request, expected, "(no JSON)", False))
            continue
        seconds.append(time.perf_counter() - started)
        call: ToolCall | None = response.tool_calls[0] if response.tool_calls else None
        if call is None:
            rows.append(Choice(request, expected, None, expected is None))
            continue
        name = box.name_of(call.name)
        rows.append(Choice(request, expected, name, not isinstance(box.judge(call), Refused)))
    return rows, dropped, statistics.median(seconds) * 1000 if seconds else 0.0


async def _times(model: LocalModel) -> tuple[float, float, int]:
    registry = default_registry()
    hans = next(a for a in default_roster() if a.id == "chief")
    tools = _compiling(Toolbox(registry, hans, PROJECT))
    streamed, whole, broken = [], [], 0
    for question in PLAIN:
        messages = [ChatMessage("system", SYSTEM), ChatMessage("user", question)]
        started = time.perf_counter()
        async for item in model.stream_items(messages, SETTINGS, RequestParams()):
            if isinstance(item, TextDelta):
                streamed.append(time.perf_counter() - started)
                break
        started = time.perf_counter()
        try:
            await model.request(messages, SETTINGS, RequestParams(tools=tools))
        except errors.ProviderError:  # a reply in words cut off by max_tokens: no JSON
            broken += 1
        whole.append(time.perf_counter() - started)
    return statistics.median(streamed) * 1000, statistics.median(whole) * 1000, broken


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    lines = [
        f"Machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the start; "
        "`python bench/local_tools.py`.",
        "",
        "| agent | tools | tokens of their definitions | share of a 2,048-token window |",
        "| --- | --- | --- | --- |",
    ]
    for agent_id, count, tokens in _room():
        lines.append(f"| {agent_id} | {count} | {tokens} | {tokens / WINDOW:.0%} |")
    lines += [
        "",
        "| agent | grammar of the whole toolbox | ms | tools whose grammar fails alone |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| {a} | {outcome} | {ms:.0f} | {', '.join(failing) or 'none'} |"
        for a, outcome, ms, failing in _grammars()
    ]
    model = LocalModel()
    await model.warm([ChatMessage("system", SYSTEM), ChatMessage("user", "Hello")])
    rows, dropped, median_ms = await _choices(model)
    right = sum(r.got == r.expected for r in rows)
    valid = sum(r.got == r.expected and r.valid for r in rows)
    lines += [
        "",
        "Hans's toolbox without the tools whose grammar fails alone: "
        f"{', '.join(dropped) or 'none'}.",
        "",
        "| request | expected | the model's answer | arguments pass the laws |",
        "| --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r.request} | {r.expected or 'words'} | {r.got or 'words'} | "
            f"{'yes' if r.valid else 'no'} |"
        )
    streamed_ms, whole_ms, broken = await _times(model)
    await model.aclose()
    lines += [
        "",
        f"- **Choice:** {right} of {len(rows)} answers name the expected tool (or words), "
        f"{valid} of {len(rows)} with arguments the laws accept; a tool answer takes "
        f"{median_ms:.0f} ms (median).",
        f"- **Time:** first words streamed without tools, median {streamed_ms:.0f} ms; the whole "
        f"answer with tools offered (nothing shows before it ends), median {whole_ms:.0f} ms; "
        f"{broken} of {len(PLAIN)} such answers were cut off at {SETTINGS.max_tokens} tokens "
        "inside their text, so not JSON at all (the turn would fail).",
    ]
    text = "\n".join(lines)
    print(text)
    if args.record:
        record("local_tools", "## Tools for the embedded model (issue 32)\n\n" + text)


if __name__ == "__main__":
    asyncio.run(main())
