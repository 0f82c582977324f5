"""Schedules and completion webhooks."""

from __future__ import annotations

from datetime import datetime

from hansa.domain.base import Wire
from hansa.domain.schedule import Schedule
from hansa.domain.webhook import Delivery, Webhook


class ScheduleOut(Schedule):
    """A schedule: its cron, zone and action, its next firing (UTC; null while paused), how
    often it fired and why its last firing did nothing (null: it did what it says)."""


class WebhookOut(Webhook):
    """A completion webhook (its secret is never shown again)."""


class WebhookCreated(Webhook):
    """A new webhook, with its secret: shown this once, stored sealed."""

    secret: str
    """The key of the ``X-Hansa-Signature`` HMAC (SHA-256 of the raw body)."""


class DeliveryOut(Delivery):
    """One delivery attempt: ``status`` ``succeeded`` (2xx), ``retrying`` (another attempt is
    queued for ``nextAttemptAt``) or ``failed``; ``responseCode`` null when no answer came."""


class Fired(Wire):
    """``POST /api/schedules/{id}/fire``: a firing was queued, due now."""

    schedule_id: str
    queued_at: datetime


__all__ = ["DeliveryOut", "Fired", "ScheduleOut", "WebhookCreated", "WebhookOut"]
