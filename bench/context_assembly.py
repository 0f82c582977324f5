"""Context assembly per turn, before and after the context cache (issue 32 item 4; seed 002
§11: context assembly < 200 ms).

In process, on a SQLite file: a project of ``--documents`` documents (each ``--body``
characters of content) and ``--tasks`` tasks. Each case builds what the context stage
builds for a project-scoped turn (the reads, the rules, global and project packs, fitted to
an 8,192-token window) ``--turns`` times:

- **before**: the stage as it was: every document of the project read whole (its fields,
  content included: ``workspace.list_kind``) to write a tree of titles;
- **after, uncached**: the digest read from columns (``workspace_digest.project_digest``:
  outline with sizes, counts, latest changes), with a cache that keeps nothing;
- **after, cached**: the same through ``ContextCache``, as turns between two workspace
  changes find it;
- **after, a change every turn**: each turn first invalidates the project, as if an
  entity patch committed before every turn (the worst case for the cache).

    python bench/context_assembly.py [--documents 300] [--body 4000] [--turns 60] [--record]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from _server import record
from hansa.domain.project import ProjectContext
from hansa.engine import context_budget, context_packs, project_context, prompts
from hansa.engine.context_cache import ContextCache
from hansa.engine.roster import default_roster
from hansa.store import workspace
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database
from hansa.store.migrate import _upgrade

WINDOW = 8_192
PROJECT = ProjectContext(project_id="p-bench", project_name="Aquaverter", project_domain="a.ca")
ROSTER = default_roster()
NOW = datetime(2026, 3, 2, tzinfo=UTC)


def _seed(db: Database, documents: int, body: int, tasks: int) -> None:
    def go(conn: object) -> None:
        parents: list[str | None] = [None]
        for i in range(documents):
            parent = parents[i % len(parents)] if i >= 10 else None
            made = workspace.create(
                conn,  # type: ignore[arg-type]
                T,
                PROJECT.project_id,
                "document",
                f"Document {i}",
                {"content": ("lorem ipsum " * (body // 12 + 1))[:body]},
                NOW,
                parent_id=parent,
            )
            if i < 10:
                parents.append(made.id)
        for i in range(tasks):
            workspace.create(
                conn,  # type: ignore[arg-type]
                T,
                PROJECT.project_id,
                "task",
                f"Task {i}",
                {"status": "open"},
                NOW,
            )

    db.write_now(go)  # type: ignore[arg-type]


def _fit(packs: tuple[context_packs.Pack, ...]) -> int:
    parts = context_budget.PromptParts(
        window=WINDOW,
        reply=512,
        system=prompts.base_rules(ROSTER[0]),
        agent=prompts.persona(ROSTER[1], lead=ROSTER[0]),
        tools=0,
        message="What do we know about the launch?",
        packs=packs,
    )
    return len(context_budget.fit(parts).prompt[0].content)


async def _before(db: Database) -> int:
    assert PROJECT.project_id is not None
    documents = await db.read(workspace.list_kind, T, PROJECT.project_id, "document")
    return _fit(
        (
            context_packs.global_pack(NOW, ROSTER),
            context_packs.project_pack(PROJECT, documents),
        )
    )


def _after(db: Database, cache: ContextCache, change: bool) -> Callable[[], Awaitable[int]]:
    async def turn() -> int:
        if change:
            cache.invalidate(T, PROJECT.project_id)
        digest, _ = await project_context.workspace_of(
            cache, db, T, PROJECT.project_id, overview=False
        )
        assert digest is not None
        return _fit(
            (
                prompts.rules_pack(PROJECT),
                context_packs.global_pack(NOW, ROSTER),
                context_packs.project_pack(PROJECT, digest.documents, digest),
            )
        )

    return turn


async def _time(turn: Callable[[], Awaitable[int]], turns: int) -> list[float]:
    await turn()  # warm: statements compiled, pages in the OS cache
    took = []
    for _ in range(turns):
        started = time.perf_counter()
        await turn()
        took.append((time.perf_counter() - started) * 1000)
    return took


def _row(name: str, took: list[float], base: float | None) -> str:
    p50 = statistics.median(took)
    p95 = sorted(took)[max(int(len(took) * 0.95) - 1, 0)]
    vs = f"{base / p50:.1f}x" if base else "-"
    return f"| {name} | {p50:.2f} | {p95:.2f} | {vs} |"


async def _main(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'bench.db'}")
        db.write_now(_upgrade)
        _seed(db, args.documents, args.body, args.tasks)
        try:
            before = await _time(lambda: _before(db), args.turns)
            uncached = await _time(_after(db, ContextCache(0, 30), False), args.turns)
            cache = ContextCache(512, 30)
            cached = await _time(_after(db, cache, False), args.turns)
            changing = await _time(_after(db, ContextCache(512, 30), True), args.turns)
        finally:
            db.close()
    base = statistics.median(before)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"context_assembly: one project of {args.documents} documents of {args.body} "
        f"characters and {args.tasks} tasks, SQLite file, in process; the context stage's "
        f"reads, the packs and the fit to an {WINDOW:,}-token window, {args.turns} turns per "
        f"case; {platform.machine()}, {os.cpu_count()} cores, load average {load} at the end "
        "(under load: other work ran on the machine).",
        "",
        "| case | p50 ms | p95 ms | before p50 / this p50 |",
        "| --- | --- | --- | --- |",
        _row("before: every document read whole", before, None),
        _row("after, uncached: the digest from columns", uncached, base),
        _row("after, cached (no change between turns)", cached, base),
        _row("after, a workspace change before every turn", changing, base),
        "",
        f"Seed target: context assembly < 200 ms. Cache: {cache.hits} hits, {cache.misses} "
        "miss(es) in the cached case.",
        "",
        "Reproduce: `.venv/bin/python bench/context_assembly.py --record`.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--body", type=int, default=4_000, help="characters per document")
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    report = asyncio.run(_main(args))
    print(report)
    if args.record:
        record("context_assembly", report)


if __name__ == "__main__":
    main()
