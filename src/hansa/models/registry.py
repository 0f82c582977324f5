"""Select a model with a "provider:model" string; optional SDKs are imported lazily."""

from __future__ import annotations

import difflib
from pathlib import Path

from hansa import errors
from hansa.models.base import Model

PROVIDERS = ("local", "scripted", "openai")


def infer_model(
    spec: str,
    *,
    openai_base_url: str | None = None,
    openai_api_key: str | None = None,
    local_model_path: str | None = None,
) -> Model:
    """The model named by ``spec``: ``local``, ``scripted[:file.json]`` or ``openai:<model>``."""
    provider, _, name = spec.partition(":")
    if provider == "scripted":
        from hansa.models.scripted import ScriptedModel

        return ScriptedModel.from_file(Path(name)) if name else ScriptedModel()
    if provider == "local":
        from hansa.models.local import LocalModel

        return LocalModel(model_path=local_model_path or name or None)
    if provider == "openai":
        if not name:
            raise errors.ConfigError("say which OpenAI-compatible model to use: openai:<model>")
        from hansa.models.openai import OpenAIModel

        return OpenAIModel(name, base_url=openai_base_url, api_key=openai_api_key)
    near = difflib.get_close_matches(provider, PROVIDERS, n=1)
    hint = f" Did you mean {near[0]!r}?" if near else ""
    raise errors.ConfigError(
        f"unknown model provider {provider!r} in {spec!r}; known: {', '.join(PROVIDERS)}.{hint}"
    )
