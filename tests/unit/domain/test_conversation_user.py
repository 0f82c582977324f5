"""A conversation's user (domain/conversation_user.py): what is accepted, what is refused
(naming the field), and how a PATCH merges."""

from __future__ import annotations

from typing import Any

import pytest

from hansa import errors
from hansa.domain.conversation_user import checked

LIMITS = {"max_keys": 10, "max_bytes": 512}
ADA = {"id": "u-1", "displayName": "Ada", "email": "ada@vip.example", "tier": "vip"}


def test_a_user_with_attributes_is_accepted_as_given() -> None:
    user = {**ADA, "seats": 12, "ratio": 0.5, "beta": True, "tags": ["a", 1, None], "x": None}
    assert checked(user, **LIMITS) == user


def test_a_patch_merges_and_a_null_removes_a_key() -> None:
    merged = checked({"tier": "gold", "email": None, "plan": "pro"}, **LIMITS, base=ADA)
    assert merged == {"id": "u-1", "displayName": "Ada", "tier": "gold", "plan": "pro"}
    with pytest.raises(errors.InvalidInput) as refused:
        checked({"id": None}, **LIMITS, base=ADA)
    assert refused.value.details == {"field": "user.id"}


@pytest.mark.parametrize(
    ("user", "field"),
    [
        ({}, "user.id"),
        ({"id": " "}, "user.id"),
        ({"id": "x" * 201}, "user.id"),
        ({"id": "u", "displayName": 3}, "user.displayName"),
        ({"id": "u", "email": "a@b@c"}, "user.email"),
        ({"id": "u", "email": "with space@x.io"}, "user.email"),
        ({"id": "u", "1st": 1}, "user.1st"),
        ({"id": "u", "a-b": 1}, "user.a-b"),
        ({"id": "u", "deep": {"x": 1}}, "user.deep"),
        ({"id": "u", "nan": float("nan")}, "user.nan"),
        ({"id": "u", "big": float("inf")}, "user.big"),
        ({"id": "u", "list": [[1]]}, "user.list"),
        ({"id": "u", **{f"k{n}": n for n in range(10)}}, "user"),
        ({"id": "u", "note": "é" * 300}, "user"),
        (["u"], "user"),
    ],
)
def test_a_bad_user_is_refused_naming_the_field(user: Any, field: str) -> None:
    with pytest.raises(errors.InvalidInput) as refused:
        checked(user, **LIMITS)
    assert refused.value.details == {"field": field}
