"""Run the ``hansa`` command with tracemalloc on, dumping a snapshot at each SIGUSR1.

bench/soak_memory.py ``--tracemalloc`` starts the server (and worker) through this file
instead of ``python -m hansa``, so that nothing in Hansa reads a tracing switch: tracing
costs production nothing because production never runs this file.

    python bench/_traced.py <snapshot dir> serve --port ... (the hansa command's arguments)

The first SIGUSR1 starts tracing (after the benchmark's warm-up: tracing the start-up, which
builds many schemas, made it ten times slower); each SIGUSR1 then collects garbage and writes
``<dir>/<n>.snapshot`` (written aside, then renamed: a reader never sees half a file).
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

FRAMES = int(os.environ.get("SOAK_TRACE_FRAMES", "4"))
"""Frames kept per allocation: enough to see who called a shared helper."""


def main() -> None:
    folder = Path(sys.argv.pop(1))
    taken = 0

    def dump(_signum: int, _frame: FrameType | None) -> None:
        nonlocal taken
        if not tracemalloc.is_tracing():
            tracemalloc.start(FRAMES)
        taken += 1
        gc.collect()
        snapshot = tracemalloc.take_snapshot().filter_traces(
            (tracemalloc.Filter(False, tracemalloc.__file__),)
        )
        aside = folder / f"{taken}.partial"
        snapshot.dump(str(aside))
        aside.rename(folder / f"{taken}.snapshot")

    signal.signal(signal.SIGUSR1, dump)
    from hansa.cli import main as hansa

    sys.argv[0] = "hansa"
    hansa()


if __name__ == "__main__":
    main()
