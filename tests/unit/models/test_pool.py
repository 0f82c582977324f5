"""ModelPool: models built on first use by spec, the first spec set chosen, all closed."""

from __future__ import annotations

import pytest

from hansa import errors
from hansa.models.base import ChatMessage, Model, ModelResponse, ModelSettings, RequestParams
from hansa.models.openai import OpenAIModel
from hansa.models.pool import ModelPool
from hansa.models.scripted import ScriptedModel


class _Closing(Model):
    def __init__(self, name: str, *, fails: bool = False) -> None:
        self.model_name = name
        self.closed = 0
        self._fails = fails

    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        return ModelResponse(self.model_name)

    async def aclose(self) -> None:
        self.closed += 1
        if self._fails:
            raise RuntimeError(f"{self.model_name} would not close")


def test_a_spec_is_built_on_first_use_then_the_same_model_is_kept() -> None:
    pool = ModelPool()
    assert "scripted" not in pool

    first = pool.get("scripted")
    again = pool.get(" scripted ")

    assert isinstance(first, ScriptedModel) and again is first
    assert "scripted" in pool


@pytest.mark.parametrize(
    ("specs", "chosen"),
    [
        (("action", "agent", "project", "server"), "action"),
        ((None, "agent", "project", "server"), "agent"),
        ((None, "", "  ", "server"), "server"),
        ((None, None, "project", "server"), "project"),
    ],
)
def test_choose_takes_the_first_spec_that_is_set(
    specs: tuple[str | None, ...], chosen: str
) -> None:
    models = {name: _Closing(name) for name in ("action", "agent", "project", "server")}
    pool = ModelPool(models)

    assert pool.choose(*specs) is models[chosen]


def test_choose_with_no_spec_set_is_a_config_error() -> None:
    with pytest.raises(errors.ConfigError, match="no model is named"):
        ModelPool().choose(None, "", " ")


def test_the_options_reach_the_models_the_pool_builds() -> None:
    pool = ModelPool(openai_base_url="http://127.0.0.1:9/v1")

    model = pool.choose(None, "openai:smollm2")

    assert isinstance(model, OpenAIModel) and model.model_name == "smollm2"
    with pytest.raises(errors.ConfigError, match="ANTHROPIC_API_KEY"):
        pool.choose("anthropic:claude-haiku-4-5", "openai:smollm2")
    assert "anthropic:claude-haiku-4-5" not in pool, "a spec that failed is not kept"


@pytest.mark.anyio
async def test_aclose_closes_every_model_once_even_past_a_failure() -> None:
    shared, failing, given = _Closing("shared"), _Closing("failing", fails=True), _Closing("given")
    pool = ModelPool({"a": shared, "b": shared, "c": failing, "d": given})
    pool.get("scripted")

    with pytest.raises(ExceptionGroup) as info:
        await pool.aclose()

    assert (shared.closed, failing.closed, given.closed) == (1, 1, 1)
    assert [str(e) for e in info.value.exceptions] == ["failing would not close"]
    assert "a" not in pool and "scripted" not in pool
