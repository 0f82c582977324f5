"""``hansa.malloc.bound_arenas``: glibc is asked once, and only when the operator did not."""

from __future__ import annotations

import platform

import pytest

from hansa import malloc
from hansa.settings import Settings


def test_glibc_takes_the_bound_and_other_libcs_are_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert malloc.bound_arenas(2) is (platform.libc_ver()[0] == "glibc")


def test_zero_or_the_operators_own_setting_leaves_glibc_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert malloc.bound_arenas(0) is False
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert malloc.bound_arenas(2) is False


def test_the_setting_defaults_to_two_arenas_and_refuses_nonsense() -> None:
    assert Settings().malloc_arenas == 2
    assert Settings(malloc_arenas=0).malloc_arenas == 0
    with pytest.raises(ValueError, match="malloc_arenas"):
        Settings(malloc_arenas=-1)
