"""The context packs' cache (seed 002 §9.1, §11: "prewarmed doc_structure cache", "context
pack caching (short TTL)"): a project's digest and a tenant's overview, read once and kept
until a workspace change of theirs commits.

Why: a turn's context stage read every document of its project (their fields, bodies
included) to write a tree of titles; a project of many long documents made every turn pay
for content it never sends. Now the digest is read from columns only, once, and kept.

Invalidation: every workspace write goes through ``runs.store_workspace.StoreWorkspace``
(the executors' ``entity.*`` changes that report ``entity_patch``), and project writes
through their routes: each calls :meth:`ContextCache.invalidate` once its transaction
committed, which drops the project's entry and its tenant's overview. A read that began
before an invalidation is used by its own turn but not kept (the generation check), so a
change is never hidden by a read that raced it. Another process's writes are not seen:
entries expire after ``ttl`` seconds (``HANSA_CONTEXT_CACHE_SECONDS``), the staleness a
scaled-out deployment accepts (decision 0039).

Bounded: at most ``max_entries`` entries (``HANSA_CONTEXT_CACHE_ENTRIES``), the least
recently used dropped first.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

TENANT = "*"
"""The project part of a tenant-wide entry's key (its overview of every project)."""

Key = tuple[str, str, str]
"""(tenant, project or ``TENANT``, what): one cached read."""


@dataclass(frozen=True, slots=True)
class _Entry:
    value: object
    expires: float


class ContextCache:
    """Cached reads for the context packs, bounded, expiring and dropped on change."""

    def __init__(
        self,
        max_entries: int,
        ttl: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 0 or ttl < 0:
            raise ValueError("a context cache needs max_entries >= 0 and ttl >= 0")
        self.max_entries = max_entries
        self.ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._generation = 0
        self.hits = 0
        """Reads answered from the cache (for benchmarks and tests)."""
        self.misses = 0
        """Reads that went to the database."""

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: Key, read: Callable[[], Awaitable[T]]) -> T:
        """The cached value of ``key``, else ``read()``'s, kept unless a change of its
        tenant was committed while it was read."""
        entry = self._entries.get(key)
        now = self._clock()
        if entry is not None and entry.expires > now:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.value  # type: ignore[return-value]
        self.misses += 1
        started = self._generation
        value = await read()
        if self._generation == started and self.max_entries and self.ttl:
            self._entries[key] = _Entry(value, self._clock() + self.ttl)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return value

    def invalidate(self, tenant_id: str, project_id: str | None = None) -> None:
        """A workspace or project change of ``tenant_id`` committed: drop the project's
        entries (every project's, without one) and the tenant's overview."""
        self._generation += 1
        for key in [k for k in self._entries if k[0] == tenant_id]:
            if project_id is None or key[1] in (project_id, TENANT):
                del self._entries[key]
