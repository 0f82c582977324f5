"""Models chosen per call: built on first use from their "provider:model" spec, then kept.

The engine asks for the model of the most specific spec that is set::

    model = pool.choose(action_model, agent_model, project_model, settings.model)

and the pool builds each spec's model once (through ``infer_model``), so agents that
name the same spec share one client, and closes every model it holds at shutdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Unpack

from hansa import errors
from hansa.models.base import Model
from hansa.models.registry import ProviderOptions, infer_model


class ModelPool:
    """The models of one process, by spec; it owns and closes every model it holds."""

    def __init__(
        self, models: Mapping[str, Model] | None = None, **options: Unpack[ProviderOptions]
    ) -> None:
        """Hold ``models`` under their specs; build any other spec on first use.

        Args:
            models: Models built elsewhere (a test's ``FunctionModel``), by spec; the
                pool closes them too.
            **options: The providers' endpoints and keys, for ``infer_model``.
        """
        self._options = options
        self._models: dict[str, Model] = {_key(s): m for s, m in (models or {}).items()}

    def get(self, spec: str) -> Model:
        """The model of ``spec``, built now if the pool has none yet.

        Raises:
            errors.ConfigError: ``spec`` names no model that can be built (unknown
                provider, missing SDK, file or key).
        """
        key = _key(spec)
        model = self._models.get(key)
        if model is None:
            model = infer_model(key, **self._options)
            self._models[key] = model
        return model

    def choose(self, *specs: str | None) -> Model:
        """The model of the first spec that is set (not None or blank), in the order given.

        Raises:
            errors.ConfigError: No spec is set, or the chosen one cannot be built.
        """
        for spec in specs:
            if spec is not None and spec.strip():
                return self.get(spec)
        raise errors.ConfigError("no model is named: give at least one 'provider:model' spec")

    def __contains__(self, spec: object) -> bool:
        return isinstance(spec, str) and _key(spec) in self._models

    async def aclose(self) -> None:
        """Close every model the pool holds, each once; the pool is empty afterwards."""
        models = list({id(m): m for m in self._models.values()}.values())
        self._models.clear()
        failures: list[Exception] = []
        for model in models:
            try:
                await model.aclose()
            except Exception as exc:  # one model's failure must not keep the others open
                failures.append(exc)
        if failures:
            raise ExceptionGroup("some models failed to close", failures)


def _key(spec: str) -> str:
    return spec.strip()
