"""Every figure the performance targets name, in one run (``make bench``).

Each benchmark runs in its own process, one after the other, with sizes that keep the
whole under 10 minutes on two cores; each compares with its anchor in the same run (the
script's own alternating rounds). Each script ends with lines of ``key=value`` pairs; this
prints one table of each figure, its anchor, its target and whether it is met.
``--record`` writes the table to docs/benchmarks.md. ``--only turns,runs`` runs a part.

    python bench/all.py [--only turns,runs,server,pg,recovery,scale] [--record]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _server import record

HERE = Path(__file__).resolve().parent

Figures = dict[str, float]


@dataclass(frozen=True)
class Target:
    """One row of the table: a figure computed from a benchmark's figures."""

    name: str
    value: Callable[[Figures], float]
    shown: Callable[[Figures], str]
    """The figure and its anchor, as printed."""
    goal: str
    met: Callable[[float], bool]


@dataclass(frozen=True)
class Benchmark:
    key: str
    script: str
    args: tuple[str, ...]
    targets: tuple[Target, ...]


def _ratio(a: str, b: str) -> Callable[[Figures], float]:
    return lambda f: f[a] / f[b] if f.get(b) else 0.0


BENCHMARKS = (
    Benchmark(
        "turns",
        "turn_latency.py",
        ("--conversations", "50", "--turns", "10"),
        (
            Target(
                "turns/s, burst (scripted model, SQLite, HTTP + SSE)",
                lambda f: f["turns_per_s"],
                lambda f: (
                    f"{f['turns_per_s']:.1f} turns/s (the floor: {f['floor_turns_per_s']:.0f})"
                ),
                ">= 400 turns/s",
                lambda v: v >= 400,
            ),
            Target(
                "server CPU per turn in the burst",
                lambda f: f["server_cpu_ms_per_turn"],
                lambda f: (
                    f"{f['server_cpu_ms_per_turn']:.2f} ms "
                    f"(the floor: {f['floor_cpu_ms_per_turn']:.2f} ms)"
                ),
                "<= 4 ms",
                lambda v: 0 < v <= 4,
            ),
        ),
    ),
    Benchmark(
        "runs",
        "run_throughput.py",
        ("--runs", "200", "--sequential", "30", "--rounds", "3"),
        (
            Target(
                "runs in-process / LangGraph in-process (SQLite)",
                _ratio("runs_per_s", "langgraph_runs_per_s"),
                lambda f: f"{f['runs_per_s']:.1f} vs {f['langgraph_runs_per_s']:.1f} runs/s",
                ">= 2.35x (today's, not to fall)",
                lambda v: v >= 2.35,
            ),
            Target(
                "runs over HTTP / LangGraph in-process",
                _ratio("http_runs_per_s", "langgraph_runs_per_s"),
                lambda f: f"{f['http_runs_per_s']:.1f} vs {f['langgraph_runs_per_s']:.1f} runs/s",
                ">= 1.5x",
                lambda v: v >= 1.5,
            ),
        ),
    ),
    Benchmark(
        "server",
        "run_throughput_server.py",
        ("--runs", "200", "--sequential", "20", "--rounds", "3"),
        (
            Target(
                "runs server to server / `langgraph dev`",
                lambda f: f["ratio"],
                lambda f: f"{f['runs_per_s']:.1f} vs {f['langgraph_runs_per_s']:.1f} runs/s",
                ">= 2x",
                lambda v: v >= 2,
            ),
            Target(
                "per-run p50, Hansa / `langgraph dev`",
                _ratio("p50_ms", "langgraph_p50_ms"),
                lambda f: f"{f['p50_ms']:.1f} vs {f['langgraph_p50_ms']:.1f} ms",
                "<= 0.05 (1/20)",
                lambda v: 0 < v <= 0.05,
            ),
        ),
    ),
    Benchmark(
        "pg",
        "run_throughput_pg.py",
        ("--runs", "200", "--sequential", "20"),
        (
            Target(
                "PostgreSQL: API + worker / LangGraph + AsyncPostgresSaver",
                _ratio("runs_per_s", "langgraph_runs_per_s"),
                lambda f: f"{f['runs_per_s']:.1f} vs {f['langgraph_runs_per_s']:.1f} runs/s",
                ">= 1.0x",
                lambda v: v >= 1.0,
            ),
            Target(
                "PostgreSQL: per-run p50, Hansa / LangGraph",
                lambda f: f["p50_ratio"],
                lambda f: f"{f['p50_ratio']:.2f}x LangGraph's",
                "<= 2x",
                lambda v: 0 < v <= 2,
            ),
            Target(
                "PostgreSQL: commits per 5-task run",
                lambda f: f["commits_per_run"],
                lambda f: f"{f['commits_per_run']:.1f}",
                "<= 12",
                lambda v: v <= 12,
            ),
            Target(
                "PostgreSQL: rows fetched per 5-task run",
                lambda f: f["rows_fetched_per_run"],
                lambda f: f"{f['rows_fetched_per_run']:.0f}",
                "<= 150",
                lambda v: v <= 150,
            ),
        ),
    ),
    Benchmark(
        "recovery",
        "recovery.py",
        ("--trials", "1"),  # one kill at each point: 3 in all, ~1 minute
        (
            Target(
                "PostgreSQL: last of 16 runs after 1 of 2 workers is killed (median of 3)",
                lambda f: f["recovery_median_s"],
                lambda f: (
                    f"{f['recovery_median_s']:.2f} s (max {f['recovery_max_s']:.2f} s; "
                    "the lease: 10 s)"
                ),
                "<= 3 s",
                lambda v: 0 < v <= 3,
            ),
        ),
    ),
    Benchmark(
        "scale",
        "scale.py",
        ("--runs", "100"),
        (
            Target(
                "PostgreSQL: 2 workers / 1 worker",
                _ratio("runs_per_s_2", "runs_per_s_1"),
                lambda f: f"{f['runs_per_s_2']:.1f} vs {f['runs_per_s_1']:.1f} runs/s",
                ">= 1.3x",
                lambda v: v >= 1.3,
            ),
        ),
    ),
)


def figures(line: str) -> Figures:
    """``a=1.5 b=2`` -> ``{"a": 1.5, "b": 2.0}`` (pairs that are not numbers are left out)."""
    found: Figures = {}
    for pair in line.split():
        key, _, text = pair.partition("=")
        try:
            found[key] = float(text)
        except ValueError:
            continue
    return found


def run(benchmark: Benchmark) -> tuple[Figures, float, str]:
    """The benchmark's figures (its last line), its seconds, and its output."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(HERE / benchmark.script), *benchmark.args],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    found: Figures = {}
    for line in done.stdout.splitlines():  # the lines of ``key=value`` pairs only
        pairs = line.split()
        if pairs and all("=" in pair for pair in pairs):
            found.update(figures(line))
    return (found if done.returncode == 0 else {}), seconds, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated: " + ",".join(b.key for b in BENCHMARKS))
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    chosen = set(args.only.split(",")) if args.only else {b.key for b in BENCHMARKS}
    rows = []
    started = time.monotonic()
    for benchmark in (b for b in BENCHMARKS if b.key in chosen):
        found, seconds, output = run(benchmark)
        print(f"{benchmark.script}: {seconds:.0f} s", flush=True)
        if not found:
            print(output[-3000:], file=sys.stderr)
        for target in benchmark.targets:
            try:
                value = target.value(found)
                shown = target.shown(found)
                verdict = "yes" if target.met(value) else "no"
                rows.append(
                    f"| {target.name} | {value:.2f} | {shown} | {target.goal} | {verdict} |"
                )
            except KeyError:
                rows.append(f"| {target.name} | - | the benchmark failed | {target.goal} | no |")
    total = time.monotonic() - started
    report = "\n".join(
        [
            f"make bench: {platform.machine()}, {os.cpu_count()} cores, "
            f"{time.strftime('%Y-%m-%d')}, {total / 60:.1f} minutes in all",
            "",
            "| figure | value | measured (anchor in the same run) | target | met? |",
            "| --- | --- | --- | --- | --- |",
            *rows,
        ]
    )
    print(report)
    if args.record:
        record("all", report + "\n\nReproduce: `make bench` (runs bench/all.py).")


if __name__ == "__main__":
    main()
