"""Secrets sealed at rest with Fernet when ``HANSA_SECRET_KEY`` is set.

What counts as a secret is ``domain/secrets.py``'s rule. A sealed value is stored as
``sealed:v1:<Fernet token>`` in place of the clear one; it is opened only where it is
used (a connector, a step about to run). ``HANSA_SECRET_KEY`` may list several keys,
comma-separated: the first seals, every one opens (rotate by putting the new key first,
then patching or restarting: start-up seals what is still clear).

Without a key nothing is sealed: values stay as written and start-up logs a warning
when a project stores a secret.
"""

from __future__ import annotations

import functools
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from hansa import errors
from hansa.domain import secrets

PREFIX = "sealed:v1:"
"""How a sealed value starts."""


class SecretUnreadable(errors.UserError):
    """A sealed secret that none of the keys in ``HANSA_SECRET_KEY`` opens."""

    code = "secret_unreadable"
    status = 409


class SecretBox:
    """Seals and opens the secrets of a config or a step's parameters.

    Args:
        keys: Fernet keys (urlsafe base64 of 32 bytes); the first seals. None or empty:
            sealing is off.
    """

    def __init__(self, keys: tuple[str, ...] = ()) -> None:
        self._fernet = MultiFernet([Fernet(k.encode()) for k in keys]) if keys else None

    @property
    def sealing(self) -> bool:
        """Whether secrets are sealed when stored."""
        return self._fernet is not None

    def seal(self, value: Any) -> Any:
        """``value`` with every clear secret sealed (sealed ones stay as they are)."""
        if self._fernet is None:
            return value
        return secrets.map_secrets(value, self._seal_one)

    def open(self, value: Any) -> Any:
        """``value`` with every sealed secret in clear.

        Raises:
            SecretUnreadable: A value was sealed with a key that is not given (or no key is).
        """
        return secrets.map_secrets(value, self._open_one)

    def _seal_one(self, text: str) -> str:
        if text.startswith(PREFIX) or text == secrets.MASK:
            return text
        assert self._fernet is not None
        return PREFIX + self._fernet.encrypt(text.encode()).decode()

    def _open_one(self, text: str) -> str:
        if not text.startswith(PREFIX):
            return text
        if self._fernet is None:
            raise SecretUnreadable(
                "a stored secret is sealed but HANSA_SECRET_KEY is not set: set it to the key "
                "it was sealed with"
            )
        try:
            return self._fernet.decrypt(text.removeprefix(PREFIX).encode()).decode()
        except InvalidToken as exc:
            raise SecretUnreadable(
                "a stored secret was sealed with a key HANSA_SECRET_KEY does not list: add that "
                "key (after the current one) or send the secret again"
            ) from exc


def is_sealed(value: Any) -> bool:
    """Whether ``value`` holds any sealed secret."""
    return any(t.startswith(PREFIX) for t in _secret_strings(value))


def holds_clear(value: Any) -> bool:
    """Whether ``value`` holds any secret in clear."""
    return any(not t.startswith(PREFIX) and t != secrets.MASK for t in _secret_strings(value))


def _secret_strings(value: Any) -> list[str]:
    found: list[str] = []

    def note(text: str) -> str:
        found.append(text)
        return text

    secrets.map_secrets(value, note)
    return found


@functools.lru_cache(maxsize=4)
def box(keys: str | None) -> SecretBox:
    """The box for ``HANSA_SECRET_KEY``'s value (comma-separated keys); one per value."""
    return SecretBox(tuple(k.strip() for k in (keys or "").split(",") if k.strip()))
