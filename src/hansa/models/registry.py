"""Select a model with a "provider:model" string; optional SDKs are imported lazily.

Where each provider is and which key it takes (``ProviderOptions``) is kept apart
from the model the spec names: the same options serve every spec.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TypedDict, Unpack

from hansa import errors
from hansa.models.base import Model

PROVIDERS = ("local", "scripted", "openai", "anthropic")


class ProviderOptions(TypedDict, total=False):
    """The providers' endpoints and keys, as the settings give them (None: not set)."""

    openai_base_url: str | None
    """An OpenAI-compatible endpoint; a local server there may need no key."""
    openai_api_key: str | None
    anthropic_base_url: str | None
    anthropic_api_key: str | None
    local_model_path: str | None
    """A GGUF file for ``local``; wins over a path in the spec."""
    local_cache_reuse: bool
    """Whether ``local`` keeps evaluated tokens that moved (True if not given)."""


def infer_model(spec: str, **options: Unpack[ProviderOptions]) -> Model:
    """The model named by ``spec``.

    ``local[:file.gguf]``, ``scripted[:file.json]``, ``openai:<model>`` or
    ``anthropic:<model>``. Nothing is called yet; a missing SDK, file or key is
    found here.

    Raises:
        errors.ConfigError: An unknown provider (with the near miss), a spec without
            its model name, or a provider that needs a key it was not given.
    """
    provider, _, name = spec.strip().partition(":")
    if provider == "scripted":
        from hansa.models.scripted import ScriptedModel

        return ScriptedModel.from_file(Path(name)) if name else ScriptedModel()
    if provider == "local":
        from hansa.models.local import LocalModel

        return LocalModel(
            model_path=options.get("local_model_path") or name or None,
            cache_reuse=options.get("local_cache_reuse", True),
        )
    if provider == "openai":
        if not name:
            raise errors.ConfigError("say which OpenAI-compatible model to use: openai:<model>")
        from hansa.models.openai import OpenAIModel

        return OpenAIModel(
            name, base_url=options.get("openai_base_url"), api_key=options.get("openai_api_key")
        )
    if provider == "anthropic":
        if not name:
            raise errors.ConfigError("say which Claude model to use: anthropic:<model>")
        from hansa.models.anthropic import AnthropicModel

        return AnthropicModel(
            name,
            api_key=options.get("anthropic_api_key"),
            base_url=options.get("anthropic_base_url"),
        )
    near = difflib.get_close_matches(provider, PROVIDERS, n=1)
    hint = f" Did you mean {near[0]!r}?" if near else ""
    raise errors.ConfigError(
        f"unknown model provider {provider!r} in {spec!r}; known: {', '.join(PROVIDERS)}.{hint}"
    )
