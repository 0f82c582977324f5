"""Cached tokens a gap moved are kept, not evaluated again (issue 34 item 2)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from hansa.models import _local_reuse
from hansa.models._local_reuse import Run, runs
from hansa.models.local import LocalModel


def test_a_prompt_that_only_grows_reuses_its_beginning() -> None:
    assert runs([1, 2, 3], [1, 2, 3, 4, 5], min_run=2) == [Run(0, 0, 3)]


def test_the_last_prompt_token_is_always_evaluated() -> None:
    assert runs([1, 2, 3, 4], [1, 2, 3, 4], min_run=2) == [Run(0, 0, 3)]


def test_a_left_out_middle_part_moves_what_follows_it() -> None:
    cached = [1, 2, 90, 91, 92, 3, 4, 5, 6]  # 90-92: the previous agent's persona
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    assert runs(cached, prompt, min_run=3) == [Run(0, 0, 2), Run(5, 2, 4)]


def test_a_dropped_oldest_message_moves_the_rest() -> None:
    cached = [1, 50, 51, 52, 2, 3, 4, 5]  # 50-52: the oldest message, now dropped
    prompt = [1, 2, 3, 4, 5, 9]
    assert runs(cached, prompt, min_run=3) == [Run(0, 0, 1), Run(4, 1, 4)]


def test_runs_shorter_than_the_minimum_are_evaluated_again() -> None:
    cached = [1, 2, 90, 3, 4, 91, 3, 4, 5, 6]  # 3, 4 twice: only the longer run is kept
    prompt = [1, 2, 3, 4, 5, 6, 9]
    assert runs(cached, prompt, min_run=3) == [Run(0, 0, 2), Run(6, 2, 4)]


def test_new_text_in_the_middle_ends_the_reuse() -> None:
    cached = [1, 2, 3, 4, 5, 6]
    prompt = [1, 2, 70, 71, 3, 4, 5, 6, 9]  # 70-71 are new: what follows moves right
    assert runs(cached, prompt, min_run=2) == [Run(0, 0, 2)]


def test_nothing_in_common_reuses_nothing() -> None:
    assert runs([5, 6, 7], [1, 2, 3], min_run=1) == []


# The real model: what ``Llama.eval`` is handed when a middle part of the prompt goes.


@pytest.fixture(scope="module")
def model() -> Iterator[LocalModel]:
    yield LocalModel()


def _evaluated(llm: Any) -> list[int]:
    counts: list[int] = []
    evaluate = llm.eval

    def counting(tokens: Sequence[int]) -> None:
        counts.append(len(tokens))
        evaluate(tokens)

    llm.eval = counting
    return counts


def _answer(llm: Any, messages: list[dict[str, str]]) -> str:
    completion = llm.create_chat_completion(messages=messages, max_tokens=12, temperature=0.0)
    return str(completion["choices"][0]["message"]["content"])


def test_a_turn_to_another_agent_evaluates_only_its_persona_and_the_question(
    model: LocalModel,
) -> None:
    llm = model._load()
    try:
        rules = {"role": "system", "content": "Team rules: be plain and kind. " * 12}
        seo = {"role": "system", "content": "You are the SEO Specialist: search traffic. " * 4}
        brand = {"role": "system", "content": "You are the Creative Lead: brand colours. " * 4}
        asked = "How do I get more visitors to my bakery's site, which sells bread and cakes? " * 2
        first = {"role": "user", "content": asked}
        answer = _answer(llm, [rules, seo, first])
        counts = _evaluated(llm)
        question = {"role": "user", "content": "Which colours suit it?"}
        _answer(llm, [rules, first, {"role": "assistant", "content": answer}, brand, question])
        own = len(llm.tokenize((brand["content"] + question["content"]).encode(), add_bos=False))
        exchange = len(llm.tokenize((asked + answer).encode(), add_bos=False))
    finally:
        llm.close()
    headers = 20  # the answer's last token and its end, three role headers
    assert exchange > headers  # evaluating the earlier exchange again would fail below
    assert counts[0] <= own + headers  # counts[0]: the prompt; then one per generated token


def test_a_model_whose_cache_cannot_shift_is_left_as_it_is() -> None:
    class Unshiftable:
        class _ctx:  # noqa: N801  (llama-cpp-python's attribute)
            memory = None

        def generate(self) -> None: ...

    llm = Unshiftable()
    before = llm.generate
    _local_reuse.reuse_moved(llm)  # type: ignore[arg-type]  # the seam's stand-in
    assert llm.generate == before
