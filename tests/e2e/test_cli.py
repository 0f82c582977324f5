"""The command line against the real server: `hansa chat` streams a turn, `hansa agents` lists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from apikeys import create_key

from harness import (
    Server,
    execute_task,
    free_port,
    new_conversation,
    running_server,
    wordpress_project,
)

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


def _lines(out: str, marker: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if marker in line]


def test_server_text_with_square_brackets_is_printed_as_it_is(server: Server) -> None:
    # a page titled so crashed hansa chat (Rich read "[/x]" as a closing tag)
    with server.client() as client:
        project = wordpress_project(client)
        cid = new_conversation(client, projectId=project)
        execute_task(
            client,
            cid,
            "webEngineer",
            "create_page",
            {"title": "Pricing [/x]", "slug": "pricing-x", "contentHtml": "<p>Prices</p>"},
        )
    asked = _hansa(
        "chat", "audit the Pricing [/x] page", "--url", server.url, "--conversation", cid
    )
    planned = _hansa("chat", "Pricing [/x]", "--url", server.url, "--conversation", cid)
    ran = _hansa("chat", "yes, proceed", "--url", server.url, "--conversation", cid)
    missing = _hansa("chat", "hi", "--url", server.url, "--conversation", "[bold]nope[x]")

    assert asked.returncode == planned.returncode == ran.returncode == 0, ran.stderr
    assert "Audit the page Pricing [/x]" in planned.stdout
    assert "Task created and queued: Audit the page Pricing [/x]" in ran.stdout, ran.stdout
    assert "Traceback" not in ran.stderr
    assert missing.returncode == 1 and "conversation [bold]nope[x] not found" in missing.stdout


def test_the_run_progress_counts_from_the_approval(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
    _hansa("chat", "Please create a new webpage called Services", "--url", server.url)
    for said in ("Please create a new webpage called Services", ANSWERS):
        _hansa("chat", said, "--url", server.url, "--conversation", cid)
    ran = _hansa("chat", "yes, proceed", "--url", server.url, "--conversation", cid)

    counts = [
        tuple(int(n) for n in line.split("]")[0].strip("[").split("/"))
        for line in _lines(ran.stdout, "/4] ")
    ]
    assert counts and counts[0] == (0, 4), ran.stdout
    assert [done for done, _ in counts] == sorted(done for done, _ in counts)
    assert counts[-1] == (4, 4)


def test_a_server_that_is_down_is_one_line_with_the_fix(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    for args in (("chat", "hello"), ("agents",), ("runs", "list"), ("control", "pause", "r1")):
        result = _hansa(*args, "--url", down)
        out = result.stdout + result.stderr

        assert result.returncode == 1, (args, out)
        assert "Traceback" not in out and len(out.strip().splitlines()) == 1, out
        assert f"cannot reach the Hansa server at {down}" in out
        assert "hansa serve" in out and "--url" in out


def test_a_keyed_server_tells_the_cli_how_to_pass_a_key(tmp_path: Path) -> None:
    with running_server(tmp_path) as keyed:
        key = create_key(keyed, "acme")
        refused = _hansa("chat", "hello", "--url", keyed.url)
        wrong = _hansa("runs", "list", "--url", keyed.url, "--key", "hk_wrong")
        flagged = _hansa("chat", "hello", "--url", keyed.url, "--key", key)
        by_env = subprocess.run(
            [sys.executable, "-m", "hansa", "agents", "--url", keyed.url],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HANSA_API_KEY": key},
        )

    for result in (refused, wrong):
        assert result.returncode == 1 and "unauthenticated" in result.stdout, result.stdout
        assert "--key" in result.stdout and "HANSA_API_KEY" in result.stdout
        assert "Traceback" not in result.stderr
    assert flagged.returncode == 0 and "done (completed)" in flagged.stdout
    assert by_env.returncode == 0 and by_env.stdout.startswith("chief")


def test_a_configuration_error_is_printed_whole(tmp_path: Path) -> None:
    # the missing-extra hint "pip install 'hansa[local]'" lost its "[local]" the same way
    result = _hansa(
        "serve",
        "--model",
        "nope[local]",
        "--port",
        str(free_port()),
        "--database-url",
        f"sqlite:///{tmp_path / 'h.db'}",
    )

    assert result.returncode == 2
    assert "unknown model provider 'nope[local]'" in result.stdout
