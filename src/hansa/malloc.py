"""Bound the C allocator's arenas: memory that stays flat over months of threads.

glibc gives each thread that allocates while another holds an arena a new arena, up to 8
per core, and memory freed in one arena serves only that arena. A Hansa process runs its
database work on pools of threads (``store/db.py``: 8 + 8 on PostgreSQL), so a worker's
allocations spread over many arenas whose free space fragments: in bench/soak_memory.py a
PostgreSQL worker's RssAnon grew ~1.5 KB per turn with glibc's default and ~0.5-0.9 KB with
two arenas (issue 35; decision 0042), while Python's own heap (tracemalloc) stayed flat.

``bound_arenas`` asks glibc (``mallopt(M_ARENA_MAX, n)``) before the process starts its
threads; elsewhere (musl, macOS) it does nothing. ``MALLOC_ARENA_MAX`` in the environment,
if the operator set it, wins: glibc read it at start and we leave it alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the arena limit (malloc.h)."""


def bound_arenas(arenas: int) -> bool:
    """Limit glibc's malloc arenas to ``arenas`` (0: leave glibc's default); whether it did."""
    if arenas <= 0 or "MALLOC_ARENA_MAX" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc: no arenas to bound
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))
