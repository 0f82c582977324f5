"""Hansa's own ids are shown, credentials masked (issue 32): an agent session's ``sessionId``
in a step's message metadata is an id, a web session's id and an API key are secrets."""

from __future__ import annotations

from hansa.domain import secrets
from hansa.domain.secrets import MASK

SESSION = "0193b7c2-5f1e-7a40-9c1d-2b8e4f6a9d10"


def test_an_agent_sessions_id_is_shown_and_an_api_key_still_masked() -> None:
    metadata = {"sessionId": SESSION, "iteration": 3, "apiKey": "sk-live-123"}
    assert secrets.mask(metadata) == {"sessionId": SESSION, "iteration": 3, "apiKey": MASK}
    assert secrets.mask({"session_id": SESSION}) == {"session_id": SESSION}


def test_a_web_sessions_id_is_still_a_secret() -> None:
    for name in ("phpSessionId", "ASP.NET_SessionId", "X-Session-Id"):
        assert secrets.is_secret_name(name) or secrets.is_secret_header(name), name
    assert secrets.mask({"phpSessionId": "abc"}) == {"phpSessionId": MASK}
    assert secrets.mask({"headers": {"X-Session-Id": "abc"}}) == {"headers": {"X-Session-Id": MASK}}
    shown = secrets.mask_url("https://shop.example/cart?sessionid=abc&item=7")
    assert shown == f"https://shop.example/cart?sessionid={MASK}&item=7"
