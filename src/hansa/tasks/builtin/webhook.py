"""Call a webhook, refusing private and loopback targets (see connectors/outbound.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hansa.tasks.base import Params, Result, TaskContext, TaskType
from hansa.tasks.connectors import outbound
from hansa.tasks.registry import Register


class WebhookCall(Params):
    url: str = Field(min_length=1, max_length=2048)
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None


async def _call(p: WebhookCall, ctx: TaskContext) -> Result:
    policy: outbound.OutboundPolicy = ctx.connector("outbound")
    await ctx.report("create", "webhook", p.url, "start")
    result = await outbound.call(
        policy,
        url=p.url,
        method=p.method,
        headers=p.headers,
        body=p.body,
        idempotency_key=ctx.idempotency_key,
    )
    return {"statusCode": result["statusCode"], "body": result["body"]}


def register(add: Register) -> None:
    """Register webhook.call: a GET is harmless; anything else cannot be taken back."""
    add(
        TaskType(
            "webhook.call",
            "Call an outside HTTP endpoint.",
            WebhookCall,
            _call,
            "webhooks",
            is_reversible_by_system=False,
            reversible_when=lambda p: p.method == "GET",
        )
    )
