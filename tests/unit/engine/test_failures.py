"""A failed turn's answer names its cause in plain words, once, and not the error's text."""

from __future__ import annotations

import pytest
from sqlalchemy import exc as sa_exc

from hansa import errors
from hansa.engine import failures, laws
from hansa.engine.roster import default_roster

AGENT = next(a for a in default_roster() if a.id == "webEngineer")


@pytest.mark.parametrize(
    ("exc", "cause"),
    [
        (errors.ProviderError("HTTP 529 from upstream"), "the language model did not answer"),
        (errors.ConfigError("no OPENAI key"), "this Hansa server is not set up for it"),
        (laws.ScopeDenied("webEngineer may not delete_page"), "the law of allowed scope"),
        (laws.MissingParameters("create_page", ("title",)), "the law of clarity"),
        (errors.TaskFailed("wp said 500 <html>"), "an outside system it used failed"),
        (TimeoutError(), "it took too long"),
        (sa_exc.OperationalError("select 1", {}, Exception("down")), "the database"),
        (RuntimeError("bug at line 3"), "something unexpected went wrong inside Hansa"),
    ],
)
def test_each_cause_is_named_and_the_errors_own_text_is_not(exc: BaseException, cause: str) -> None:
    said = failures.message(AGENT, exc)

    assert said.startswith(f"Sorry, {AGENT.display_name} could not finish this reply because")
    assert cause in said
    assert str(exc) not in said or not str(exc), "the error's own text is not repeated"
    assert said.count("because") == 1, "the cause is said once"


def test_only_a_model_failure_blames_the_model() -> None:
    blamed = [
        type(e).__name__
        for e in (errors.ConfigError("x"), errors.TaskFailed("x"), RuntimeError("x"))
        if "language model" in failures.message(AGENT, e)
    ]

    assert blamed == []
