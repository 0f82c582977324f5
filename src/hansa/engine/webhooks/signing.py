"""The signatures of an outbound message: Standard Webhooks' and Hansa's own.

- Standard Webhooks (https://www.standardwebhooks.com, what the ``standardwebhooks`` and
  ``svix`` libraries verify): ``webhook-id`` (the message's id, the same for every attempt),
  ``webhook-timestamp`` (Unix seconds of the attempt) and ``webhook-signature``
  (``v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">``). The key is the secret's
  base64 after its ``whsec_`` prefix, as those libraries read it; a secret that is not
  ``whsec_`` + base64 (one a client chose, or one generated before Standard Webhooks) is
  used as its UTF-8 bytes, which only a receiver that knows so can verify.
- Hansa's ``X-Hansa-Signature: sha256=<hex HMAC-SHA256 of the raw body>`` with the secret's
  UTF-8 bytes as key, as before (no timestamp: it does not stop a replay).

:func:`headers` gives all four; every signed message Hansa sends goes through it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from datetime import datetime
from typing import Any

HEADER = "X-Hansa-Signature"
"""The header carrying Hansa's own signature."""
PREFIX = "whsec_"
"""What a Standard Webhooks secret starts with."""
SECRET_BYTES = 32
"""The entropy of a generated secret."""


def new_secret() -> str:
    """A generated secret: ``whsec_`` and the base64 of 32 random bytes."""
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def raw_body(body: dict[str, Any]) -> bytes:
    """The exact bytes sent (compact JSON, UTF-8): the signatures cover these."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def headers(secret: str, message_id: str, raw: bytes, at: datetime) -> dict[str, str]:
    """The signature headers of ``raw``, the message ``message_id`` sent at ``at``."""
    stamp = str(int(at.timestamp()))
    signed = f"{message_id}.{stamp}.".encode() + raw
    mac = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return {
        "webhook-id": message_id,
        "webhook-timestamp": stamp,
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
        HEADER: sign(secret, raw),
    }


def _key(secret: str) -> bytes:
    if secret.startswith(PREFIX):
        try:
            return base64.b64decode(secret.removeprefix(PREFIX), validate=True)
        except binascii.Error:
            pass
    return secret.encode()


def sign(secret: str, raw: bytes) -> str:
    """``X-Hansa-Signature``'s value for ``raw`` under ``secret``."""
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


def verify(secret: str, raw: bytes, header: str) -> bool:
    """Whether ``header`` is Hansa's signature of ``raw`` (compared in constant time)."""
    return hmac.compare_digest(sign(secret, raw), header.strip())
