"""Call a webhook, refusing private and loopback targets (see connectors/outbound.py).

A POST, PUT, PATCH or DELETE cannot be taken back, so it waits for the user's confirmation.
So does a GET whose target the operator has not vetted (``HANSA_OUTBOUND_ALLOW``) or whose
URL or headers carry an earlier step's result (``{{ref.field}}``): what a GET sends (in its
address) leaves for good too, and a plan drafted from page content could otherwise read
results out through one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import Field

from hansa.domain.secrets import mask_url
from hansa.tasks.base import Judging, Params, Result, TaskContext, TaskType
from hansa.tasks.connectors import outbound
from hansa.tasks.registry import Register


class WebhookCall(Params):
    url: str = Field(min_length=1, max_length=2048)
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None


async def _call(p: WebhookCall, ctx: TaskContext) -> Result:
    policy: outbound.OutboundPolicy = ctx.connector("outbound")
    await ctx.report("create", "webhook", mask_url(p.url), "start")
    result = await outbound.call(
        policy,
        url=p.url,
        method=p.method,
        headers=p.headers,
        body=p.body,
        idempotency_key=ctx.idempotency_key,
    )
    return {"statusCode": result["statusCode"], "body": result["body"]}


def harmless(method: str, url: str | None, judging: Judging) -> bool:
    """A GET that sends nothing beyond what the operator vetted, and no earlier result (a
    call to ``url`` by ``method``, its parameters as ``judging`` saw them written)."""
    if method != "GET" or url is None:
        return False
    written = judging.written
    carried = [written.get("url"), *dict(written.get("headers") or {}).values()]
    if any(isinstance(v, str) and "{{" in v for v in carried):
        return False
    return outbound.stays_inside(outbound.OutboundPolicy(allow=judging.trusted), url)


def _harmless(p: WebhookCall, judging: Judging) -> bool:
    return harmless(p.method, p.url, judging)


def answered(name: str) -> Callable[[Mapping[str, Any]], str | None]:
    """The timeline's sentence for an HTTP call of task type ``name``: its status code."""

    def told(r: Mapping[str, Any]) -> str | None:
        return f"{name} answered HTTP {r['statusCode']}" if "statusCode" in r else None

    return told


def register(add: Register) -> None:
    """Register webhook.call: only a GET kept inside vetted targets is reversible."""
    add(
        TaskType(
            "webhook.call",
            "Call an outside HTTP endpoint.",
            WebhookCall,
            _call,
            "webhooks",
            is_reversible_by_system=False,
            reversible_when=_harmless,
            describe=answered("webhook.call"),
        )
    )
