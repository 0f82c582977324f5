"""Provider keys in Settings: Hansa's own variables first, then the standard ones."""

from __future__ import annotations

import pytest

from hansa.settings import Settings

KEYS = (
    "HANSA_OPENAI_API_KEY",
    "OPENAI_API_KEY",
    "HANSA_ANTHROPIC_API_KEY",
    "ANTHROPIC_API_KEY",
    "HANSA_ANTHROPIC_BASE_URL",
)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


def test_without_any_key_none_is_set() -> None:
    settings = Settings()

    assert (settings.openai_api_key, settings.anthropic_api_key) == (None, None)
    assert settings.anthropic_base_url is None


def test_the_standard_variables_are_read_when_hansas_are_not_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-standard")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-standard")
    monkeypatch.setenv("HANSA_ANTHROPIC_BASE_URL", "http://127.0.0.1:9")

    settings = Settings()

    assert (settings.openai_api_key, settings.anthropic_api_key) == (
        "sk-standard",
        "sk-ant-standard",
    )
    assert settings.anthropic_base_url == "http://127.0.0.1:9"


def test_hansas_variables_win_over_the_standard_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS[:4]:
        monkeypatch.setenv(name, name.lower())

    settings = Settings()

    assert settings.openai_api_key == "hansa_openai_api_key"
    assert settings.anthropic_api_key == "hansa_anthropic_api_key"


def test_keys_may_still_be_given_by_field_name() -> None:
    settings = Settings(openai_api_key="sk-flag", anthropic_api_key="sk-ant-flag")

    assert (settings.openai_api_key, settings.anthropic_api_key) == ("sk-flag", "sk-ant-flag")
