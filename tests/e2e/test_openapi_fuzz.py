"""schemathesis against the live server: every check, a few examples per operation.

The real server (``hansa serve``, the scripted model) is fuzzed through its own
``/openapi.json`` with an admin key: each operation gets its examples, the coverage phase's
boundary cases and a few random requests, valid and invalid, and every answer is checked
against the description (status documented, body and headers as described, SSE events as
``Event``), no 5xx, valid input accepted, invalid input refused, a missing key refused; the
stateful phase then chains the operations whose answers give ids to others (links it infers).
``schemathesis.toml`` beside this file holds what JSON Schema cannot state (see there).
The seed is fixed, so a run is repeatable; ``st replay <id>`` reproduces a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
from apikeys import create_key

from harness import running_server

CONFIG = Path(__file__).with_name("schemathesis.toml")
FAST = {
    "HANSA_RATE_LIMIT_PER_MINUTE": "0",  # thousands of requests from one key
    "HANSA_CHAT_TIMEOUT_SECONDS": "0.3",  # POST /api/assistant/chat answers 202 after it
    "HANSA_EXECUTE_TIMEOUT_SECONDS": "0.3",
}
BUDGET_SECONDS = 110


def test_schemathesis_finds_nothing_wrong(tmp_path: Path) -> None:
    with running_server(tmp_path, env=FAST) as server:
        key = create_key(server, "fuzz")
        # a key exists, so local mode is over: every request is the key's, none the operator's
        assert httpx.get(f"{server.url}/api/me").status_code == 401
        started = time.monotonic()
        result = subprocess.run(
            [
                str(Path(sys.executable).with_name("st")),
                "--config-file",
                str(CONFIG),
                "run",
                f"{server.url}/openapi.json",
                "--checks",
                "all",
                "--header",
                f"Authorization: Bearer {key}",
                "--phases",
                "examples,coverage,fuzzing,stateful",
                "--max-examples",
                "3",
                "--seed",
                "1",
                "--workers",
                "1",  # Hypothesis's lambda descriptions are not thread-safe
                "--request-timeout",
                "2",  # a live event stream is read for this long
                "--no-shrink",
                "--output-truncate",
                "false",
            ],
            capture_output=True,
            text=True,
            timeout=BUDGET_SECONDS,
            env={**os.environ, "NO_COLOR": "1"},
            cwd=tmp_path,
        )
        took = time.monotonic() - started
    assert result.returncode == 0, result.stdout[-30_000:] + result.stderr[-5_000:]
    selected = re.search(r"Selected: (\d+)/(\d+)", result.stdout)
    tested = re.search(r"Tested: (\d+)", result.stdout)
    assert selected and tested, result.stdout[-2_000:]
    assert selected[1] == selected[2] == tested[1], "every operation is tested"
    print(f"schemathesis: {took:.0f} s\n{result.stdout[-600:]}")
