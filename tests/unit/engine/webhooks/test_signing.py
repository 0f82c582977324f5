"""The delivery signatures: Standard Webhooks' (as its spec computes it) and Hansa's own
HMAC-SHA256 of the raw body, as a receiver recomputes them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime

from hansa.engine.webhooks import signing

BODY = {"id": "d1", "type": "run.completed", "createdAt": "2026-01-01T00:00:00+00:00",
        "data": {"runId": "r1", "title": "Ünïcode"}}  # fmt: skip
AT = datetime(2026, 11, 27, 12, 0, 5, 700_000, tzinfo=UTC)


def test_the_signature_is_the_hmac_of_the_raw_body() -> None:
    raw = signing.raw_body(BODY)
    assert json.loads(raw) == BODY
    header = signing.sign("s3cret", raw)
    expected = hmac.new(b"s3cret", raw, hashlib.sha256).hexdigest()
    assert header == f"sha256={expected}"
    assert signing.verify("s3cret", raw, header)
    assert not signing.verify("other", raw, header)
    assert not signing.verify("s3cret", raw + b" ", header)


def test_standard_webhooks_headers_sign_id_timestamp_and_body_with_the_decoded_key() -> None:
    key = bytes(range(32))
    secret = "whsec_" + base64.b64encode(key).decode()
    raw = signing.raw_body(BODY)
    sent = signing.headers(secret, "msg_1", raw, AT)
    stamp = str(int(AT.timestamp()))
    mac = hmac.new(key, f"msg_1.{stamp}.".encode() + raw, hashlib.sha256).digest()
    assert sent == {
        "webhook-id": "msg_1",
        "webhook-timestamp": stamp,
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
        "X-Hansa-Signature": signing.sign(secret, raw),
    }
    assert (
        signing.headers(secret, "msg_2", raw, AT)["webhook-signature"] != sent["webhook-signature"]
    )


def test_a_secret_that_is_not_whsec_base64_is_its_own_bytes() -> None:
    raw = signing.raw_body(BODY)
    for secret in ("a-secret-chosen-by-a-client", "whsec_not*base64!"):
        stamp = str(int(AT.timestamp()))
        mac = hmac.new(secret.encode(), f"m.{stamp}.".encode() + raw, hashlib.sha256).digest()
        got = signing.headers(secret, "m", raw, AT)["webhook-signature"]
        assert got == "v1," + base64.b64encode(mac).decode()


def test_generated_secrets_differ_and_are_whsec_base64_of_32_bytes() -> None:
    first, second = signing.new_secret(), signing.new_secret()
    assert first != second
    for secret in (first, second):
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
