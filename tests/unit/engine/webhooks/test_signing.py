"""The delivery signature: HMAC-SHA256 of the raw body, as a receiver recomputes it."""

from __future__ import annotations

import hashlib
import hmac
import json

from hansa.engine.webhooks import signing


def test_the_signature_is_the_hmac_of_the_raw_body() -> None:
    body = {"id": "d1", "type": "run.completed", "createdAt": "2026-01-01T00:00:00+00:00",
            "data": {"runId": "r1", "title": "Ünïcode"}}  # fmt: skip
    raw = signing.raw_body(body)
    assert json.loads(raw) == body
    header = signing.sign("s3cret", raw)
    expected = hmac.new(b"s3cret", raw, hashlib.sha256).hexdigest()
    assert header == f"sha256={expected}"
    assert signing.verify("s3cret", raw, header)
    assert not signing.verify("other", raw, header)
    assert not signing.verify("s3cret", raw + b" ", header)


def test_generated_secrets_differ() -> None:
    first, second = signing.new_secret(), signing.new_secret()
    assert first != second and first.startswith("whsec_") and len(first) > 40
