"""Tokens and cost of a tenant's model calls, summed per agent, per run and per model
(``GET /api/usage``; the rows are ``llm_calls``)."""

from __future__ import annotations

from hansa.domain.base import Wire


class UsageTotals(Wire):
    """Every call counted."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float
    cancelled_calls: int = 0
    """Calls cut before they answered (their tokens so far are counted above)."""
    failed_calls: int = 0
    estimated_tokens: int = 0
    """How many of ``total_tokens`` are estimated (characters / 4): cut calls' tokens,
    which their provider never reported."""


class AgentUsage(UsageTotals):
    """The calls made for one agent (``agent_id`` None: calls made for no agent)."""

    agent_id: str | None


class RunUsage(Wire):
    """The calls of one run; ``title`` is the run's (None when the run is gone)."""

    run_id: str
    title: str | None
    calls: int
    total_tokens: int
    cost_usd: float


class ModelUsage(Wire):
    """The calls to one model of one provider."""

    provider: str
    model: str
    calls: int
    total_tokens: int
    cost_usd: float


class Usage(Wire):
    """A tenant's usage: totals, per agent, per run (the runs with most tokens), per model."""

    totals: UsageTotals
    by_agent: list[AgentUsage]
    by_run: list[RunUsage]
    by_model: list[ModelUsage]
