"""A conversation's user: who the conversation is with, the ``user.*`` facts.

``{id, displayName?, email?, …}``: ``id`` is the caller's own id for the person (required),
``displayName`` and ``email`` are optional, and any other key is an attribute of the
caller's (``tier``, ``plan``, ``seats``…) that rules test (``user.tier eq "vip"``), graph
templates fill (``{{user.displayName}}``) and the agents' prompts carry (the user pack).

Bounded: a key is a name a rule's field path can reach (``^[A-Za-z_][A-Za-z0-9_]{0,63}$``),
a value is a string, a number, a boolean, null or a list of those (``MAX_LIST`` at most), at
most ``max_keys`` keys and ``max_bytes`` as compact JSON (``HANSA_MAX_CONVERSATION_USER_KEYS``,
``…_BYTES``). Every refusal names the field (``user.<key>``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from hansa import errors

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
"""What an attribute may be called: a name a rule's field path reaches (``user.<key>``)."""
EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}$")
"""An address with one ``@`` and no spaces (what a person wrote, not a verified mailbox)."""
MAX_ID_CHARS = 200
MAX_TEXT_CHARS = 200
"""The longest ``displayName``; ``email`` may have 320 characters."""
MAX_LIST = 50
"""The most items a list value holds."""

_Scalar = (str, int, float, bool)


def checked(
    raw: Any, *, max_keys: int, max_bytes: int, base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``raw`` as a valid user, or InvalidInput naming the field; with ``base`` (a PATCH),
    ``raw`` is merged into it and a null value removes that key (never ``id``)."""
    if not isinstance(raw, Mapping):
        raise _bad("user", "user must be an object: {id, displayName?, email?, …}")
    user = dict(base or {})
    for key, value in raw.items():
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise _bad(
                f"user.{key}",
                f"user: {str(key)[:70]!r} is not a name rules can test "
                "(letters, digits and _, starting with a letter or _, at most 64)",
            )
        if value is None and base is not None:
            user.pop(key, None)
        else:
            user[key] = value
    if len(user) > max_keys:
        raise _bad("user", f"user has {len(user)} keys; at most {max_keys}")
    ident = user.get("id")
    if not isinstance(ident, str) or not ident.strip() or len(ident) > MAX_ID_CHARS:
        raise _bad("user.id", f"user.id must be a string of 1 to {MAX_ID_CHARS} characters")
    name = user.get("displayName")
    if name is not None and (not isinstance(name, str) or not 1 <= len(name) <= MAX_TEXT_CHARS):
        raise _bad(
            "user.displayName", f"user.displayName must be a string of 1 to {MAX_TEXT_CHARS}"
        )
    email = user.get("email")
    if email is not None and (not isinstance(email, str) or not EMAIL.fullmatch(email)):
        raise _bad("user.email", "user.email must be an address like name@example.com")
    for key, value in user.items():
        _check_value(key, value)
    size = len(json.dumps(user, separators=(",", ":"), ensure_ascii=False).encode())
    if size > max_bytes:
        raise _bad("user", f"user is {size} bytes as JSON; at most {max_bytes}")
    return user


def _check_value(key: str, value: Any) -> None:
    if value is None or isinstance(value, _Scalar):
        _finite(key, value)
        return
    if isinstance(value, list):
        if len(value) > MAX_LIST:
            raise _bad(f"user.{key}", f"user.{key} holds {len(value)} items; at most {MAX_LIST}")
        for item in value:
            if not (item is None or isinstance(item, _Scalar)):
                raise _bad(f"user.{key}", f"user.{key}: a list holds strings, numbers and booleans")
            _finite(key, item)
        return
    raise _bad(
        f"user.{key}",
        f"user.{key} must be a string, a number, a boolean, null or a list of those "
        f"(not {type(value).__name__})",
    )


def _finite(key: str, value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise _bad(f"user.{key}", f"user.{key} must be a finite number")


def _bad(field: str, message: str) -> errors.InvalidInput:
    return errors.InvalidInput(message, details={"field": field})
