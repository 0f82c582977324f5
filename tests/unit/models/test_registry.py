from __future__ import annotations

import json
from pathlib import Path

import pytest

from hansa import errors
from hansa.models.anthropic import AnthropicModel
from hansa.models.local import LocalModel, gguf_path
from hansa.models.openai import OpenAIModel
from hansa.models.registry import infer_model
from hansa.models.scripted import ScriptedModel


def test_scripted_without_script() -> None:
    model = infer_model("scripted")

    assert isinstance(model, ScriptedModel)
    assert (model.provider, model.model_name) == ("scripted", "scripted")


def test_scripted_with_script_file(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"text": "hi"}]))

    model = infer_model(f"scripted:{script}")

    assert isinstance(model, ScriptedModel)
    assert model.remaining == 1


def test_local_uses_the_packaged_gguf() -> None:
    model = infer_model("local")

    assert isinstance(model, LocalModel)
    assert model.provider == "local"
    assert model.model_name == gguf_path().stem


def test_local_model_path_setting_wins_over_spec(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="setting.gguf"):
        infer_model("local:spec.gguf", local_model_path=str(tmp_path / "setting.gguf"))


def test_local_with_missing_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="no GGUF model file"):
        infer_model(f"local:{tmp_path / 'missing.gguf'}")


@pytest.mark.anyio
async def test_openai_with_model_name() -> None:
    model = infer_model(
        "openai:gpt-4o-mini", openai_base_url="http://127.0.0.1:9/v1", openai_api_key="k"
    )

    assert isinstance(model, OpenAIModel)
    assert (model.provider, model.model_name) == ("openai", "gpt-4o-mini")
    await model.aclose()


def test_openai_without_model_name_is_a_config_error() -> None:
    with pytest.raises(errors.ConfigError, match="openai:<model>"):
        infer_model("openai")


def test_unknown_provider_suggests_the_near_miss() -> None:
    with pytest.raises(errors.ConfigError, match="Did you mean 'openai'") as info:
        infer_model("opanai:gpt-4o")

    assert "unknown model provider 'opanai'" in str(info.value)
    assert "known: local, scripted, openai, anthropic" in str(info.value)


def test_unknown_provider_without_near_miss_has_no_hint() -> None:
    with pytest.raises(errors.ConfigError) as info:
        infer_model("zzz")

    assert "Did you mean" not in str(info.value)


def test_openai_without_key_or_base_url_is_a_config_error_when_built() -> None:
    with pytest.raises(errors.ConfigError, match="HANSA_OPENAI_API_KEY or OPENAI_API_KEY"):
        infer_model("openai:gpt-4o-mini", openai_api_key=None)


@pytest.mark.anyio
async def test_anthropic_with_model_name_and_key() -> None:
    model = infer_model(
        "anthropic:claude-haiku-4-5",
        anthropic_api_key="k",
        anthropic_base_url="http://127.0.0.1:9",
    )

    assert isinstance(model, AnthropicModel)
    assert (model.provider, model.model_name) == ("anthropic", "claude-haiku-4-5")
    await model.aclose()


def test_anthropic_without_key_is_a_config_error_when_built() -> None:
    with pytest.raises(errors.ConfigError, match="HANSA_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY"):
        infer_model("anthropic:claude-haiku-4-5", anthropic_base_url="http://127.0.0.1:9")


def test_anthropic_without_model_name_is_a_config_error() -> None:
    with pytest.raises(errors.ConfigError, match="anthropic:<model>"):
        infer_model("anthropic", anthropic_api_key="k")


def test_near_miss_of_anthropic() -> None:
    with pytest.raises(errors.ConfigError, match="Did you mean 'anthropic'"):
        infer_model("antropic:claude-haiku-4-5")
