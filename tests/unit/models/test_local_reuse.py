"""Cached tokens a gap moved are kept, not evaluated again (issue 34 item 2)."""

from __future__ import annotations

from collections.abc import Iterator
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


def test_new_text_in_the_middle_is_a_gap_and_what_follows_moves() -> None:
    cached = [1, 2, 3, 4, 5, 6]
    prompt = [1, 2, 70, 71, 3, 4, 5, 6, 9]  # 70-71 are new: what follows moves right
    assert runs(cached, prompt, min_run=2) == [Run(0, 0, 2), Run(2, 4, 4)]


def test_without_gaps_new_text_in_the_middle_ends_the_reuse() -> None:
    cached = [1, 2, 3, 4, 5, 6]
    prompt = [1, 2, 70, 71, 3, 4, 5, 6, 9]
    assert runs(cached, prompt, min_run=2, gaps=False) == [Run(0, 0, 2)]


def test_a_run_is_found_only_after_the_previous_one() -> None:
    cached = [7, 8, 9, 1, 2, 3]
    prompt = [1, 2, 3, 7, 8, 9, 0]  # both runs are cached, in the other order
    assert runs(cached, prompt, min_run=3) == [Run(3, 0, 3)]


def test_nothing_in_common_reuses_nothing() -> None:
    assert runs([5, 6, 7], [1, 2, 3], min_run=1) == []


# The real model: what ``Llama.eval`` is handed when a middle part of the prompt goes.


@pytest.fixture(scope="module")
def model() -> Iterator[LocalModel]:
    yield LocalModel()


def _evaluated(llm: Any) -> list[int]:
    """The tokens each ``llama_decode`` of ``llm`` is handed from now on: the gaps' and the
    rest of the prompt's, then one per generated token."""
    counts: list[int] = []
    decode = llm._ctx.decode

    def counting(batch: Any) -> None:
        counts.append(batch.batch.n_tokens)
        decode(batch)

    llm._ctx.decode = counting
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


def test_a_new_summary_before_the_history_evaluates_the_summary_not_the_history(
    model: LocalModel,
) -> None:
    llm = model._load()
    try:
        rules = {"role": "system", "content": "Team rules: be plain and kind. " * 12}
        earlier = [
            {"role": "user", "content": f"Question {n} about the bakery's bread and cakes? " * 3}
            if n % 2 == 0
            else {"role": "assistant", "content": f"Answer {n}: bake early, sell fresh. " * 3}
            for n in range(6)
        ]
        persona = {"role": "system", "content": "You are the SEO Specialist: search traffic."}
        question = {"role": "user", "content": "What should the front page say?"}
        _answer(llm, [rules, *earlier, persona, question])
        counts = _evaluated(llm)
        summary = "Summary so far: the user runs a bakery and asked about its site. " * 2
        summarised = [{"role": "system", "content": rules["content"] + summary}, *earlier[2:]]
        answer = _answer(llm, [*summarised, persona, question])
        gap_and_rest = sum(counts[: len(counts) - _generated(llm, answer)])
        followed = _evaluated(llm)
        more = {"role": "user", "content": "And the about page?"}
        _answer(
            llm, [*summarised, persona, question, {"role": "assistant", "content": answer}, more]
        )
        kept_history = len(
            llm.tokenize("".join(m["content"] for m in earlier[2:]).encode(), add_bos=False)
        )
        new_text = len(llm.tokenize((summary + persona["content"]).encode(), add_bos=False))
    finally:
        llm.close()
    headers = 40  # role headers, the question and tokens at the runs' edges
    assert kept_history > headers  # evaluating the history again would fail below
    assert gap_and_rest <= new_text + headers
    assert followed[0] <= 30  # the next prompt extends this one: its cache is consistent


def _generated(llm: Any, answer: str) -> int:
    """The decodes a completion of ``answer`` took after its prompt (one per token but the
    last)."""
    return max(len(llm.tokenize(answer.encode(), add_bos=False)) - 1, 0)


def test_a_model_whose_cache_cannot_shift_is_left_as_it_is() -> None:
    class Unshiftable:
        class _ctx:  # noqa: N801  (llama-cpp-python's attribute)
            memory = None

        def generate(self) -> None: ...

    llm = Unshiftable()
    before = llm.generate
    _local_reuse.reuse_moved(llm)  # type: ignore[arg-type]  # the seam's stand-in
    assert llm.generate == before


def test_with_reuse_off_the_context_reuses_only_the_unchanged_beginning() -> None:
    llm = LocalModel(cache_reuse=False)._load()
    try:
        counts = _evaluated(llm)
        rules = {"role": "system", "content": "Team rules: be plain and kind. " * 12}
        first = {"role": "user", "content": "How do I get more visitors to my bakery's site? " * 3}
        _answer(llm, [rules, {"role": "system", "content": "You are the SEO Specialist."}, first])
        counts.clear()
        brand = {"role": "system", "content": "You are the Creative Lead."}
        _answer(llm, [rules, first, brand, {"role": "user", "content": "Which colours?"}])
        exchange = len(llm.tokenize(first["content"].encode(), add_bos=False))
    finally:
        llm.close()
    assert llm.context_params.n_seq_max == 1
    assert counts[0] > exchange  # the question after the left-out persona is evaluated again


def test_the_setting_reaches_the_embedded_model() -> None:
    from hansa.models.registry import infer_model

    off = infer_model("local", local_model_path=None, local_cache_reuse=False)
    on = infer_model("local", local_model_path=None)
    assert isinstance(off, LocalModel) and isinstance(on, LocalModel)
    assert off._cache_reuse is False and on._cache_reuse is True
