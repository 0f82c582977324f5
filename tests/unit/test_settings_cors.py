"""``HANSA_CORS_ORIGINS``: origins as browsers send them, from a comma-separated list or a
JSON one; anything that is not an origin refused with the setting named."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hansa.settings import Settings


def test_none_by_default() -> None:
    assert Settings().cors_origins == ()


@pytest.mark.parametrize(
    ("given", "origins"),
    [
        ("http://localhost:3000", ("http://localhost:3000",)),
        (
            "HTTP://LocalHost:3000/ , https://app.example.com:443",
            ("http://localhost:3000", "https://app.example.com"),
        ),
        ('["http://a.example:8080", "http://a.example:8080"]', ("http://a.example:8080",)),
        ("http://[::1]:80,", ("http://[::1]",)),
    ],
)
def test_origins_are_kept_as_browsers_send_them(
    monkeypatch: pytest.MonkeyPatch, given: str, origins: tuple[str, ...]
) -> None:
    monkeypatch.setenv("HANSA_CORS_ORIGINS", given)
    assert Settings().cors_origins == origins


@pytest.mark.parametrize(
    "given",
    [
        "*",
        "null",
        "http://app.example/path",
        "localhost:3000",
        "ftp://a.example",
        "http://a.example:99999",
        "http://user@a.example",
        "http://a.example?x=1",
    ],
)
def test_what_is_not_an_origin_is_refused(given: str) -> None:
    with pytest.raises(ValidationError, match="HANSA_CORS_ORIGINS"):
        Settings(cors_origins=given)
