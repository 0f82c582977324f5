"""Small utilities: ``wait`` for tests and benchmarks."""

from __future__ import annotations

import asyncio

from pydantic import Field

from hansa.tasks.base import Params, Result, TaskContext, TaskType
from hansa.tasks.registry import Register


class Wait(Params):
    seconds: float = Field(ge=0, le=300)


async def _wait(p: Wait, ctx: TaskContext) -> Result:
    if p.seconds:
        await asyncio.sleep(p.seconds)
    return {"waited": p.seconds}


def register(add: Register) -> None:
    """Register wait."""
    add(
        TaskType(
            "wait",
            "Wait a number of seconds (a no-op for tests and benchmarks).",
            Wait,
            _wait,
            "wait",
        )
    )
