"""The command line against the real server: `hansa chat` streams a turn, `hansa agents` lists."""

from __future__ import annotations

import json
import subprocess
import sys

from harness import Server, new_conversation, wordpress_project

ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"


def _hansa(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hansa", *args], capture_output=True, text=True, timeout=60
    )


def test_chat_streams_routing_thinking_text_and_done(server: Server) -> None:
    result = _hansa("chat", "Please improve our SEO traffic", "--url", server.url)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Hans is handing this off to Growth Lead Dana" in out
    assert "Hans is choosing Growth Lead based on SEO intent" in out
    assert "Growth Lead Dana:" in out and "done (completed)" in out
    assert out.index("handing this off") < out.index("Growth Lead Dana:") < out.index("done")


def test_chat_continues_a_conversation_and_reports_errors(server: Server) -> None:
    first = _hansa("chat", "hello", "--url", server.url, "--agent", "researchAgent")
    cid = next(line.split()[-1] for line in first.stdout.splitlines() if "conversation" in line)
    again = _hansa("chat", "and more?", "--url", server.url, "--conversation", cid)
    assert again.returncode == 0 and "Research Agent Rui:" in again.stdout
    missing = _hansa("chat", "hi", "--url", server.url, "--conversation", "nope")
    assert missing.returncode == 1 and "not_found" in missing.stdout


def test_agents_lists_the_roster(server: Server) -> None:
    result = _hansa("agents", "--url", server.url)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 14 and lines[0].startswith("chief") and "Hans" in lines[0]


def test_chat_follows_an_approved_run_to_hans_summary_and_runs_lists_it(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
    request = "Please create a new webpage called Services"
    asked = _hansa("chat", request, "--url", server.url, "--conversation", cid)
    planned = _hansa("chat", ANSWERS, "--url", server.url, "--conversation", cid)
    run_id = next(
        line.split("run ")[1].split(",")[0]
        for line in planned.stdout.splitlines()
        if "plan: run" in line
    )
    ran = _hansa("chat", "yes, proceed", "--url", server.url, "--conversation", cid)
    listed = _hansa("runs", "list", "--conversation", cid, "--json", "--url", server.url)
    shown = _hansa("runs", "show", run_id, "--url", server.url)

    assert asked.returncode == planned.returncode == ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert f"run {run_id} started" in out and f"run {run_id} done (completed)" in out
    assert "[4/4]" in out, "the run's progress, to its last task"
    assert "Done: Create the Services page" in out, "Hans's summary ends the follow"
    assert [(r["id"], r["status"]) for r in json.loads(listed.stdout)] == [(run_id, "completed")]
    card = json.loads(_hansa("runs", "show", run_id, "--json", "--url", server.url).stdout)
    task_ids = [t["id"] for g in card["groups"] for t in g["tasks"]]
    assert task_ids and all(tid in shown.stdout for tid in task_ids)
    missing = _hansa("runs", "show", "nope", "--url", server.url)
    assert missing.returncode == 1 and "not_found" in missing.stdout
