from typing import Any

import pytest

from hansa import errors
from hansa.api import limits
from hansa.domain.principal import Kind, Principal, Role


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_gets_its_burst_then_one_request_per_share_of_the_minute() -> None:
    clock = Clock()
    rate = limits.RequestRate(per_minute=6, clock=clock)
    assert [rate.take("a") for _ in range(6)] == [0.0] * 6
    assert rate.take("a") == pytest.approx(10.0), "6 a minute: the next one in 10 s"
    assert rate.take("b") == 0.0, "another key has its own bucket"
    clock.now += 5
    assert rate.take("a") == pytest.approx(5.0)
    clock.now += 5
    assert rate.take("a") == 0.0
    assert rate.take("a") > 0
    clock.now += 3600
    assert [rate.take("a") for _ in range(6)] == [0.0] * 6, "a quiet hour refills only the burst"
    assert rate.take("a") > 0


def test_the_buckets_kept_are_bounded_forgetting_the_least_recently_seen_key() -> None:
    clock = Clock()
    rate = limits.RequestRate(per_minute=2, clock=clock, max_keys=3)
    assert [rate.take("limited") for _ in range(2)] == [0.0, 0.0]
    for key in ("b", "c"):
        rate.take(key)
    assert rate.take("limited") > 0, "seen again: now the most recently seen"
    for i in range(1000):  # a flood of new keys (addresses) never holds more than the bound
        rate.take(f"new-{i}")
        assert len(rate) <= 3
    assert rate.take("new-999") == 0.0 and rate.take("new-999") > 0, "recent keys are kept"
    assert rate.take("limited") == 0.0, "forgotten after 1,000 newer keys: a full bucket again"


def test_zero_turns_the_request_limit_off() -> None:
    rate = limits.RequestRate(per_minute=0)
    assert all(rate.take("a") == 0.0 for _ in range(1000))


def test_streams_are_counted_per_conversation_and_per_tenant() -> None:
    subs = limits.Subscribers(per_conversation=2, per_tenant=3)
    a1, a2 = subs.hold("t", "a"), subs.hold("t", "a")
    with pytest.raises(errors.RateLimited) as refused:
        subs.hold("t", "a")
    assert refused.value.status == 429 and refused.value.retry_after >= 1
    b1 = subs.hold("t", "b")
    with pytest.raises(errors.RateLimited, match="tenant"):
        subs.hold("t", "c")
    subs.hold("other", "a").release()  # another tenant counts apart
    a1.release()
    a1.release()  # a second release changes nothing
    assert subs.count("t", "a") == 1 and subs.count("t") == 2
    subs.hold("t", "c")
    for slot in (a2, b1):
        slot.release()
    assert subs.count("t", "a") == 0 and subs.count("t") == 1


def _scope(path: str, client: str = "10.0.0.7", **state: Any) -> dict[str, Any]:
    return {"type": "http", "path": path, "client": (client, 5000), "state": state}


async def _status(middleware: limits.RateLimit, scope: dict[str, Any]) -> int:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await middleware(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    if start["status"] == 429:
        assert dict(start["headers"])[b"retry-after"] == b"60"
    return int(start["status"])


async def _ok(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.anyio
async def test_requests_count_per_principal_else_per_address_and_local_mode_is_exempt() -> None:
    middleware = limits.RateLimit(_ok, rate=limits.RequestRate(per_minute=1))
    user = Principal(tenant_id="acme", kind=Kind.USER, id="key1", role=Role.ADMIN)
    other = Principal(tenant_id="acme", kind=Kind.USER, id="key2", role=Role.ADMIN)
    local = Principal(tenant_id="default", kind=Kind.LOCAL, id="local", role=Role.ADMIN)
    assert await _status(middleware, _scope("/api/runs", principal=user)) == 200
    assert await _status(middleware, _scope("/api/runs", "10.0.0.8", principal=user)) == 429
    assert await _status(middleware, _scope("/api/runs", principal=other)) == 200
    assert await _status(middleware, _scope("/api/session")) == 200
    assert await _status(middleware, _scope("/api/session")) == 429, "by address"
    assert await _status(middleware, _scope("/api/session", "10.0.0.8")) == 200
    assert await _status(middleware, _scope("/api/runs", principal_id="p9")) == 200
    assert await _status(middleware, _scope("/api/runs", principal_id="p9")) == 429
    for _ in range(3):
        assert await _status(middleware, _scope("/api/runs", principal=local)) == 200
        assert await _status(middleware, _scope("/healthz", principal=user)) == 200
