"""Model call records: tokens, latency, cost and errors of every call."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import llm_call, usage
from hansa.store import direct, tables
from hansa.store.db import growing

_calls = tables.llm_calls
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _calls.insert()


@functools.cache
def _list_query(by_conversation: bool, by_run: bool) -> sa.Select[tuple[object, ...]]:
    query = sa.select(_calls).where(_calls.c.tenant_id == _B("p_tenant"))
    if by_conversation:
        query = query.where(_calls.c.conversation_id == _B("p_conversation"))
    if by_run:
        query = query.where(_calls.c.run_id == _B("p_run"))
    return query.order_by(_calls.c.created_at).limit(_B("p_limit"))


def record(conn: Connection, call: llm_call.LlmCall) -> None:
    """Insert one call record."""
    direct.execute(conn, _INSERT, call.model_dump())


@growing
def list_for(
    conn: Connection,
    tenant_id: str,
    *,
    conversation_id: str | None = None,
    run_id: str | None = None,
    limit: int = 500,
) -> list[llm_call.LlmCall]:
    """Call records of a tenant, optionally of one conversation or run, oldest first."""
    params: dict[str, object] = {"p_tenant": tenant_id, "p_limit": limit}
    if conversation_id is not None:
        params["p_conversation"] = conversation_id
    if run_id is not None:
        params["p_run"] = run_id
    query = _list_query(conversation_id is not None, run_id is not None)
    rows = direct.rows(conn, query, params)
    return [llm_call.LlmCall.model_validate(r) for r in rows]


# --- Usage: the calls summed per agent, run and model, in SQL (GET /api/usage) ---------

RUNS_SHOWN = 20
"""Runs in a usage summary: those with most tokens."""
AGENTS_SHOWN = 100
MODELS_SHOWN = 50

_runs = tables.assistant_runs
_Filters = tuple[bool, bool, bool]
"""Whether a summary is of one conversation, of one run, since a time."""


def _sums() -> list[sa.ColumnElement[Any]]:
    def total(column: sa.ColumnElement[Any], name: str) -> sa.ColumnElement[Any]:
        return sa.func.coalesce(sa.func.sum(column), 0).label(name)

    return [
        sa.func.count().label("calls"),
        total(_calls.c.prompt_tokens, "prompt_tokens"),
        total(_calls.c.completion_tokens, "completion_tokens"),
        total(_calls.c.total_tokens, "total_tokens"),
        total(_calls.c.cost_usd, "cost_usd"),
        total(sa.case((_calls.c.status == "cancelled", 1), else_=0), "cancelled_calls"),
        total(sa.case((_calls.c.status == "failed", 1), else_=0), "failed_calls"),
        total(sa.case((_calls.c.estimated, _calls.c.total_tokens), else_=0), "estimated_tokens"),
    ]


def _filtered(query: sa.Select[Any], filters: _Filters) -> sa.Select[Any]:
    by_conversation, by_run, since = filters
    query = query.where(_calls.c.tenant_id == _B("p_tenant"))
    if by_conversation:
        query = query.where(_calls.c.conversation_id == _B("p_conversation"))
    if by_run:
        query = query.where(_calls.c.run_id == _B("p_run"))
    if since:
        query = query.where(_calls.c.created_at >= _B("p_since"))
    return query


@functools.cache
def _usage_queries(filters: _Filters) -> tuple[sa.Select[Any], ...]:
    totals = _filtered(sa.select(*_sums()), filters)
    tokens: sa.UnaryExpression[Any] = sa.desc("total_tokens")
    by_agent = (
        _filtered(sa.select(_calls.c.agent_id, *_sums()), filters)
        .group_by(_calls.c.agent_id)
        .order_by(tokens, _calls.c.agent_id)
        .limit(AGENTS_SHOWN)
    )
    run_of_call = sa.and_(_runs.c.id == _calls.c.run_id, _runs.c.tenant_id == _calls.c.tenant_id)
    by_run = (
        _filtered(
            sa.select(_calls.c.run_id, _runs.c.title, *_sums()).select_from(
                _calls.outerjoin(_runs, run_of_call)
            ),
            filters,
        )
        .where(_calls.c.run_id.is_not(None))
        .group_by(_calls.c.run_id, _runs.c.title)
        .order_by(tokens, _calls.c.run_id)
        .limit(RUNS_SHOWN)
    )
    by_model = (
        _filtered(sa.select(_calls.c.provider, _calls.c.model, *_sums()), filters)
        .group_by(_calls.c.provider, _calls.c.model)
        .order_by(tokens, _calls.c.provider, _calls.c.model)
        .limit(MODELS_SHOWN)
    )
    return totals, by_agent, by_run, by_model


@growing
def usage_of(
    conn: Connection,
    tenant_id: str,
    *,
    conversation_id: str | None = None,
    run_id: str | None = None,
    since: datetime | None = None,
) -> usage.Usage:
    """A tenant's model calls summed (optionally of one conversation or run, or since a
    time): totals, per agent, per run (the ``RUNS_SHOWN`` with most tokens), per model."""
    params: dict[str, object] = {"p_tenant": tenant_id}
    if conversation_id is not None:
        params["p_conversation"] = conversation_id
    if run_id is not None:
        params["p_run"] = run_id
    if since is not None:
        params["p_since"] = since
    filters = (conversation_id is not None, run_id is not None, since is not None)
    totals, by_agent, by_run, by_model = (
        direct.rows(conn, q, params) for q in _usage_queries(filters)
    )
    return usage.Usage(
        totals=usage.UsageTotals.model_validate(totals[0]),
        by_agent=[usage.AgentUsage.model_validate(r) for r in by_agent],
        by_run=[usage.RunUsage.model_validate(r) for r in by_run],
        by_model=[usage.ModelUsage.model_validate(r) for r in by_model],
    )


@functools.cache
def _turn_totals_query() -> sa.Select[Any]:
    return sa.select(*_sums()).where(
        _calls.c.tenant_id == _B("p_tenant"),
        # only checked: ``ix_llm_calls_turn`` finds the turn's few calls; the conversation's
        # index would read all the conversation's (PostgreSQL took it without statistics)
        direct.only_checks(_calls.c.conversation_id) == _B("p_conversation"),
        _calls.c.turn_id == _B("p_turn"),
    )


def turn_totals(
    conn: Connection, tenant_id: str, conversation_id: str, turn_id: str
) -> usage.UsageTotals:
    """The model calls of one turn summed (the OpenAI-compatible chat's ``usage``)."""
    params = {"p_tenant": tenant_id, "p_conversation": conversation_id, "p_turn": turn_id}
    return usage.UsageTotals.model_validate(direct.rows(conn, _turn_totals_query(), params)[0])
