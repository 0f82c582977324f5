"""Usage in the store (GET /api/usage): a tenant's model calls summed per agent, per run and
per model in SQL, filtered by conversation, run and time, on SQLite and PostgreSQL; another
tenant's calls never counted, another tenant's run title never shown."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from factories import NOW, make_conversation, make_run
from hansa.domain import llm_call
from hansa.domain.base import new_id
from hansa.store import conversations, llm_calls, runs, tenants
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

OTHER = "globex"


def _call(**overrides: Any) -> llm_call.LlmCall:
    prompt, completion = overrides.pop("tokens", (10, 5))
    fields: dict[str, Any] = {
        "id": new_id(),
        "tenant_id": T,
        "conversation_id": None,
        "turn_id": None,
        "run_id": None,
        "node_id": None,
        "agent_id": "chief",
        "provider": "scripted",
        "model": "scripted",
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "latency_ms": 1.0,
        "success": True,
        "error": None,
        "cost_usd": (prompt + completion) / 1000,
        "created_at": NOW,
        **overrides,
    }
    if not fields["success"]:
        fields.setdefault("status", llm_call.CallStatus.FAILED)
    return llm_call.LlmCall(**fields)


def _record(db: Database, calls: Iterable[llm_call.LlmCall]) -> None:
    def write(conn: sa.Connection) -> None:
        for c in calls:
            llm_calls.record(conn, c)

    db.write_now(write)


def _usage(db: Database, tenant: str = T, **filters: Any) -> dict[str, Any]:
    found = db.write_now(lambda conn: llm_calls.usage_of(conn, tenant, **filters))
    return found.model_dump(mode="json", by_alias=True)


def _run(db: Database, cid: str, title: str, tenant: str = T) -> str:
    r = make_run(conversation_id=cid, title=title, tenant_id=tenant)
    db.write_now(lambda conn: runs.create(conn, r, []))
    return r.id


def _expected(
    calls: list[llm_call.LlmCall], key: Callable[[llm_call.LlmCall], Any]
) -> dict[Any, Any]:
    out: dict[Any, list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0.0])
    for c in calls:
        sums = out[key(c)]
        for i, v in enumerate(
            (1, c.prompt_tokens, c.completion_tokens, c.total_tokens, c.cost_usd)
        ):
            sums[i] += v
    return dict(out)


def test_the_sums_per_agent_run_and_model_are_those_of_the_tenants_calls(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    audit = _run(db, cid, "SEO audit")
    launch = _run(db, cid, "Launch")
    mine = [
        _call(conversation_id=cid, tokens=(100, 20)),
        _call(conversation_id=cid, tokens=(50, 7), agent_id="seoSpecialist"),
        _call(conversation_id=cid, run_id=audit, agent_id="seoSpecialist", tokens=(300, 40)),
        _call(conversation_id=cid, run_id=audit, agent_id="chief", model="big", tokens=(9, 1)),
        _call(conversation_id=cid, run_id=launch, agent_id=None, provider="openai", model="m"),
        _call(conversation_id=cid, run_id=launch, success=False, tokens=(0, 0)),
    ]
    other_cid = make_conversation(tenant_id=OTHER)

    def other_tenant(conn: sa.Connection) -> None:
        tenants.ensure(conn, OTHER, NOW)
        conversations.create(conn, other_cid)

    db.write_now(other_tenant)
    theirs = [
        _call(tenant_id=OTHER, conversation_id=other_cid.id, tokens=(7000, 7000)),
        _call(tenant_id=OTHER, run_id=audit, agent_id="chief", tokens=(5000, 1)),
    ]
    _record(db, mine + theirs)

    found = _usage(db)
    calls, prompt, completion, total, cost = _expected(mine, lambda c: T)[T]
    assert found["totals"] == {
        "calls": calls,
        "promptTokens": prompt,
        "completionTokens": completion,
        "totalTokens": total,
        "costUsd": pytest.approx(cost),
        "cancelledCalls": 0,
        "failedCalls": 1,
        "estimatedTokens": 0,
    }
    agents = _expected(mine, lambda c: c.agent_id)
    assert found["byAgent"] == [
        {
            "agentId": a,
            "calls": s[0],
            "promptTokens": s[1],
            "completionTokens": s[2],
            "totalTokens": s[3],
            "costUsd": pytest.approx(s[4]),
            "cancelledCalls": 0,
            "failedCalls": int(a == "chief"),
            "estimatedTokens": 0,
        }
        for a, s in sorted(agents.items(), key=lambda kv: -kv[1][3])
    ]
    assert [a["agentId"] for a in found["byAgent"]] == ["seoSpecialist", "chief", None]
    assert found["byRun"] == [
        {
            "runId": audit,
            "title": "SEO audit",
            "calls": 2,
            "totalTokens": 350,
            "costUsd": pytest.approx(0.35),
        },
        {
            "runId": launch,
            "title": "Launch",
            "calls": 2,
            "totalTokens": 15,
            "costUsd": pytest.approx(0.015),
        },
    ]
    models = [(m["provider"], m["model"], m["calls"], m["totalTokens"]) for m in found["byModel"]]
    assert models == [
        ("scripted", "scripted", 4, 517),
        ("openai", "m", 1, 15),
        ("scripted", "big", 1, 10),
    ]
    assert [m["costUsd"] for m in found["byModel"]] == pytest.approx([0.517, 0.015, 0.01])

    theirs_found = _usage(db, OTHER)
    assert theirs_found["totals"]["calls"] == 2
    assert theirs_found["totals"]["totalTokens"] == 19001
    assert theirs_found["byRun"] == [
        {
            "runId": audit,
            "title": None,
            "calls": 1,
            "totalTokens": 5001,
            "costUsd": pytest.approx(5.001),
        }
    ], "a call naming another tenant's run never shows that run's title"


def test_a_summary_of_one_conversation_one_run_or_since_a_time(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    first, second = new_conversation(), new_conversation()
    audit = _run(db, first, "SEO audit")
    later = NOW + timedelta(hours=1)
    _record(
        db,
        [
            _call(conversation_id=first, tokens=(1, 1)),
            _call(conversation_id=first, run_id=audit, tokens=(10, 10), created_at=later),
            _call(conversation_id=second, tokens=(100, 100), created_at=later),
        ],
    )
    assert _usage(db, conversation_id=first)["totals"]["totalTokens"] == 22
    assert _usage(db, conversation_id=second)["totals"]["totalTokens"] == 200
    of_run = _usage(db, run_id=audit)
    assert of_run["totals"]["totalTokens"] == 20 and len(of_run["byRun"]) == 1
    assert _usage(db, since=later)["totals"]["totalTokens"] == 220
    assert _usage(db, since=later, conversation_id=first)["totals"]["calls"] == 1
    assert _usage(db, since=later + timedelta(seconds=1))["totals"] == {
        "calls": 0,
        "promptTokens": 0,
        "completionTokens": 0,
        "totalTokens": 0,
        "costUsd": 0,
        "cancelledCalls": 0,
        "failedCalls": 0,
        "estimatedTokens": 0,
    }


def test_cut_and_failed_calls_are_counted_and_their_estimated_tokens_said(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    _record(
        db,
        [
            _call(conversation_id=cid, tokens=(100, 20)),
            _call(
                conversation_id=cid,
                tokens=(60, 9),
                success=False,
                status=llm_call.CallStatus.CANCELLED,
                estimated=True,
            ),
            _call(conversation_id=cid, tokens=(0, 0), success=False),
        ],
    )
    totals = _usage(db, conversation_id=cid)["totals"]
    assert totals["calls"] == 3
    assert totals["totalTokens"] == 189, "a cut call's tokens so far count"
    assert totals["costUsd"] == pytest.approx(0.189)
    assert (totals["cancelledCalls"], totals["failedCalls"]) == (1, 1)
    assert totals["estimatedTokens"] == 69
    listed = db.write_now(lambda conn: llm_calls.list_for(conn, T, conversation_id=cid))
    assert [(c.status, c.estimated) for c in listed] == [
        (llm_call.CallStatus.OK, False),
        (llm_call.CallStatus.CANCELLED, True),
        (llm_call.CallStatus.FAILED, False),
    ]


def test_only_the_runs_with_most_tokens_are_listed(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    ids = [_run(db, cid, f"run {i}") for i in range(llm_calls.RUNS_SHOWN + 5)]
    _record(db, [_call(run_id=r, tokens=(i + 1, 0)) for i, r in enumerate(ids)])
    found = _usage(db)
    assert [r["runId"] for r in found["byRun"]] == ids[::-1][: llm_calls.RUNS_SHOWN]
    assert found["totals"]["calls"] == len(ids), "the totals count every run"


def test_a_tenant_without_calls_has_zeros_and_empty_lists(db: Database) -> None:
    assert _usage(db, "nobody") == {
        "totals": {
            "calls": 0,
            "promptTokens": 0,
            "completionTokens": 0,
            "totalTokens": 0,
            "costUsd": 0,
            "cancelledCalls": 0,
            "failedCalls": 0,
            "estimatedTokens": 0,
        },
        "byAgent": [],
        "byRun": [],
        "byModel": [],
    }
