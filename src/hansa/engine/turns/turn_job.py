"""A turn's job: build the turn's context from the job and run the pipeline."""

from __future__ import annotations

from hansa import errors, tracing
from hansa.domain.job import Job, TurnJob
from hansa.engine.runtime.recorder import Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.turns.pipeline import TurnContext, run_pipeline
from hansa.engine.turns.stages import TURN_STAGES, fail, finalize


async def run_turn_job(services: Services, job: Job) -> None:
    """Run the turn a job stands for."""
    work = TurnJob.model_validate(job.payload)
    ctx = TurnContext(
        services=services,
        job=job,
        tenant_id=job.tenant_id,
        work=work,
        recorder=Recorder(services, job.tenant_id, work.conversation_id, job),
    )
    if job.attempts > job.max_attempts:  # it kept crashing workers: stop and say so
        ctx.error = errors.HansaError("the turn was interrupted too many times")
        await fail(ctx)
        return
    turn = {
        "hansa.conversation_id": work.conversation_id,
        "hansa.turn_id": work.turn_id,
        "gen_ai.conversation.id": work.conversation_id,
    }
    with tracing.span("hansa.turn", turn):
        await run_pipeline(ctx, TURN_STAGES, finalize, fail)
