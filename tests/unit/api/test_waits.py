"""``limits.Waits`` and ``waits_long``: which requests hold a key's waits, and the cap."""

from __future__ import annotations

import pytest

from hansa import errors
from hansa.api import limits


@pytest.mark.parametrize(
    ("method", "path", "waits"),
    [
        ("POST", "/mcp", True),
        ("POST", "/api/assistant/chat", True),
        ("POST", "/api/assistant/execute", True),
        ("POST", "/v1/chat/completions", True),
        ("POST", "/ag-ui/chief", True),
        ("POST", "/ap/runs/wait", True),
        ("POST", "/ap/threads/t/runs/stream", True),
        ("GET", "/ap/threads/t/runs/r/join", True),
        ("GET", "/ap/threads/t/runs/r/stream", True),
        ("GET", "/api/conversations", False),
        ("GET", "/v1/models", False),
        ("POST", "/ap/threads/t/runs", False),
        ("GET", "/mcp", False),
    ],
)
def test_what_waits_for_work(method: str, path: str, waits: bool) -> None:
    assert limits.waits_long(method, path) is waits


def test_a_key_holds_at_most_its_waits_and_gets_them_back() -> None:
    waits = limits.Waits(per_principal=2)
    first, second = waits.hold("k"), waits.hold("k")
    other = waits.hold("other")
    with pytest.raises(errors.RateLimited) as refused:
        waits.hold("k")
    assert refused.value.retry_after == limits.WAIT_RETRY_SECONDS
    first.release()
    first.release()  # a second release gives nothing back twice
    assert waits.count("k") == 1
    waits.hold("k")
    second.release()
    other.release()
    assert waits.count("other") == 0
