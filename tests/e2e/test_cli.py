"""The command line against the real server: `hansa chat` streams a turn, `hansa agents` lists."""

from __future__ import annotations

import subprocess
import sys

from harness import Server


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
