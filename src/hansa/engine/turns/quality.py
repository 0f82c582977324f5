"""The quality gate of a reply (seed 003): the checks of ``engine/quality_gate.py``, with the
store's answer to which linked pages exist and, when ``HANSA_QUALITY_EVALUATOR=model``, the
supervisor's model's verdict (purpose ``evaluate``, one ``llm_calls`` row)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

from hansa import errors
from hansa.engine import llm, quality_gate
from hansa.engine.llm import CallScope
from hansa.engine.turns.pipeline import TurnContext
from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.store import workspace

log = logging.getLogger(__name__)

_EVALUATE = RequestParams(output_schema=quality_gate.EVALUATOR_SCHEMA, purpose="evaluate")
_EVALUATOR_SETTINGS = ModelSettings(temperature=0.0, max_tokens=200)


@dataclass(frozen=True)
class Review:
    """What the gate found about one answer."""

    findings: list[quality_gate.Finding]
    evaluated: bool = False
    """Whether the evaluator model gave a verdict."""

    @property
    def codes(self) -> list[str]:
        """The findings' codes, in order."""
        return [f.code for f in self.findings]


async def review(
    ctx: TurnContext, answer: str, performed: list[str], read: Sequence[ChatMessage]
) -> Review:
    """Check ``answer``, given the task types of the turn's tool calls that succeeded and
    ``read``: the prompt the agent answered (the conversation, the project's context, the
    tools' results). What the agent wrote itself earlier grounds nothing of it."""
    linked = quality_gate.links(answer)
    missing = await ctx.services.db.read(_missing, ctx.tenant_id, linked) if linked else []
    grounds = [m.content for m in read if m.role != "assistant"]
    if ctx.project_context is not None:
        grounds.append(ctx.project_context.describe())
    findings = quality_gate.check(answer, performed, missing, grounds)
    if findings or ctx.services.settings.quality_evaluator == "off":
        return Review(findings)
    return await _evaluate(ctx, answer, performed)


def _missing(
    conn: Connection, tenant_id: str, linked: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    gone = []
    for kind, entity_id in linked:
        try:
            found = workspace.get(conn, tenant_id, entity_id)
        except errors.NotFound:
            gone.append((kind, entity_id))
            continue
        if found.kind != kind:
            gone.append((kind, entity_id))
    return gone


async def _evaluate(ctx: TurnContext, answer: str, performed: list[str]) -> Review:
    """The evaluator model's verdict; a model that fails holds no answer back."""
    supervisor = ctx.supervisor
    model = ctx.services.model_for(supervisor, ctx.project_context)
    scope = CallScope(
        tenant_id=ctx.tenant_id,
        conversation_id=ctx.conversation_id,
        turn_id=ctx.turn_id,
        node_id="quality_gate",
        agent_id=supervisor.id,
    )
    prompt = quality_gate.evaluator_prompt(ctx.user_text, answer, performed)
    services = ctx.services
    try:
        verdict = await llm.ask(
            model,
            scope,
            prompt,
            _EVALUATOR_SETTINGS,
            _EVALUATE,
            clock=services.clock,
            retry=llm.Retry.of(services.settings),
            calls=ctx.reply_calls,
            observe=services.metrics.called,
        )
    except errors.ProviderError as exc:
        log.warning("turn %s: the evaluator model failed: %s", ctx.turn_id, exc)
        return Review([])
    finding = quality_gate.evaluation(verdict.text)
    return Review([finding] if finding is not None else [], evaluated=True)
