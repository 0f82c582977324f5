"""A lead's review step reads the reviewed step's result and, with a model, writes notes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from hansa.tasks.base import Result, TaskContext, TaskFailed
from hansa.tasks.builtin.review import Review, _review

Generate = Callable[[str, str], Awaitable[str]]
PARAMS = Review(step="dns", subject="Update the DNS record", concern="the DNS change")


def _ctx(outputs: dict[str, Result] | None = None, generate: Generate | None = None) -> TaskContext:
    return TaskContext(
        tenant_id="t",
        project_id="p",
        task_id="k",
        idempotency_key="i",
        outputs=outputs or {},
        generate=generate,
    )


@pytest.mark.anyio
async def test_the_review_reads_the_step_result_and_asks_the_model() -> None:
    asked: list[tuple[str, str]] = []

    async def generate(instructions: str, material: str) -> str:
        asked.append((instructions, material))
        return "  Looks right; check the TTL.  "

    ctx = _ctx(outputs={"dns": {"ticketId": "T1", "apiKey": "sk-secret"}}, generate=generate)

    result = await _review(PARAMS, ctx)

    assert result == {
        "step": "dns",
        "subject": "Update the DNS record",
        "concern": "the DNS change",
        "notes": "Looks right; check the TTL.",
    }
    (instructions, material) = asked[0]
    assert "lead" in instructions and "T1" in material and "the DNS change" in material
    assert "sk-secret" not in material, "secrets are masked before the model reads them"


@pytest.mark.anyio
async def test_without_a_model_the_review_is_recorded_and_without_a_result_it_fails() -> None:
    recorded = await _review(PARAMS, _ctx(outputs={"dns": {"ticketId": "T1"}}))
    assert recorded["notes"] == "" and recorded["step"] == "dns"

    with pytest.raises(TaskFailed, match="no result of step 'dns'"):
        await _review(PARAMS, _ctx())
