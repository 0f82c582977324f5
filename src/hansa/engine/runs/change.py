"""What travels together when one transaction changes one run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection

from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services


@dataclass(frozen=True)
class RunChange:
    """One transaction's hold on one run: where it writes, and what it announces where.

    ``batch`` is tagged with the run, so every event added through it names the run.
    """

    services: Services
    conn: Connection
    tenant_id: str
    run_id: str
    batch: Batch
    now: datetime

    @classmethod
    def of(
        cls, services: Services, conn: Connection, tenant_id: str, run_id: str, batch: Batch
    ) -> RunChange:
        """The change of ``run_id`` in ``conn``'s transaction, announced in ``batch``."""
        return cls(services, conn, tenant_id, run_id, batch.for_run(run_id), services.clock())
