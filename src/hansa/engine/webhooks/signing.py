"""The signature of a delivery: ``X-Hansa-Signature: sha256=<hex HMAC-SHA256 of the raw body>``."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

HEADER = "X-Hansa-Signature"
"""The header carrying the signature."""
SECRET_BYTES = 32
"""The entropy of a generated secret."""


def new_secret() -> str:
    """A generated secret (``whsec_`` and 43 URL-safe characters)."""
    return "whsec_" + secrets.token_urlsafe(SECRET_BYTES)


def raw_body(body: dict[str, Any]) -> bytes:
    """The exact bytes sent (compact JSON, UTF-8): the signature covers these."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def sign(secret: str, raw: bytes) -> str:
    """The header's value for ``raw`` under ``secret``."""
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


def verify(secret: str, raw: bytes, header: str) -> bool:
    """Whether ``header`` is the signature of ``raw`` (compared in constant time)."""
    return hmac.compare_digest(sign(secret, raw), header.strip())
