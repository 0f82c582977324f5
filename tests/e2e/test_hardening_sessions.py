"""Agent sessions per tenant are capped, over the real server (security review 2026-11-27,
M4): one member created 50 of 50 sessions with ``maxSteps: 10000`` and no cadence, and they
made 4,475 model steps in 10 s."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from harness import running_server


def test_sessions_past_the_cap_are_refused_and_steps_are_paced(tmp_path: Path) -> None:
    env = {"HANSA_SESSION_STEPS_PER_MINUTE_PER_TENANT": "20"}  # the cap: its default, 10
    with running_server(tmp_path, env=env) as server, server.client() as client:
        body = {"agentId": "creativeLead", "goal": "SEO", "maxSteps": 10_000}
        answers = []
        for n in range(50):
            if n == 10:
                before = server.row_counts()["assistant_conversations"]
            answers.append(client.post("/api/agent-sessions", json=body))
        after = server.row_counts()["assistant_conversations"]
        created = [a.json() for a in answers if a.status_code == 201]
        refused = [a for a in answers if a.status_code != 201]
        time.sleep(10)
        sessions: list[dict[str, Any]] = [
            client.get(f"/api/agent-sessions/{s['id']}").json() for s in created
        ]
        steps = sum(len(client.get(f"/api/agent-sessions/{s['id']}/steps").json()) for s in created)
        for s in created:
            client.post(f"/api/agent-sessions/{s['id']}/stop")
        again = client.post("/api/agent-sessions", json=body)  # stopped ones free their slots
    assert len(created) == 10 and len(refused) == 40
    assert {a.status_code for a in refused} == {429}
    error = refused[0].json()["error"]
    assert error["code"] == "rate_limited"
    assert "at most 10 running or paused agent sessions" in error["message"]
    assert int(refused[0].headers["Retry-After"]) >= 1
    assert after == before, "a refused session stores nothing (not even its conversation)"
    assert all(s["status"] == "running" for s in sessions)
    assert steps <= 20, f"{steps} steps in 10 s: the tenant's 20 a minute hold"
    assert again.status_code == 201, again.text
