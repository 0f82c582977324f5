"""The rolling summary's rules (seed 002 §5): when, what it folds in, what code keeps."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from hansa.domain.message import Author, Kind, Message
from hansa.domain.summary import ConversationSummary, SummaryFacts
from hansa.engine import rolling_summary
from hansa.engine.rolling_summary import Thresholds, extract_facts, needs_summary, to_fold

PAGE_ID = "01JQ7ZP3V5K2M8N4R6T9W1X3Y5"
RUN_ID = "01JQ7ZQ0A1B2C3D4E5F6G7H8J9"
TASK_UUID = "3f2b8c1e-9a4d-4c7e-8b1a-2d5e6f7a8b9c"


def _msg(seq: int, kind: Kind, content: str, **metadata: str) -> Message:
    return Message(
        id=f"m{seq}",
        conversation_id="c",
        turn_id=f"t{seq}",
        run_id=None,
        kind=kind,
        author=Author.USER if kind is Kind.USER else Author.ASSISTANT,
        agent_id=None if kind is Kind.USER else "chief",
        content=content,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        metadata=dict(metadata),
        seq=seq,
    )


def _chat(n: int, chars: int = 10) -> list[Message]:
    return [
        _msg(i + 1, Kind.USER if i % 2 == 0 else Kind.ASSISTANT, f"m{i + 1} " + "x" * chars)
        for i in range(n)
    ]


LIMITS = Thresholds(messages=8, chars=0, tokens=0, keep=4)


def test_the_count_triggers_a_summary_past_its_budget_and_not_before() -> None:
    assert not needs_summary(8, 100, LIMITS, overflow=False)
    assert needs_summary(9, 100, LIMITS, overflow=False)


def test_characters_tokens_and_an_overflow_trigger_it_too() -> None:
    by_chars = Thresholds(messages=0, chars=500, tokens=0, keep=4)
    by_tokens = Thresholds(messages=0, chars=0, tokens=100, keep=4)
    off = Thresholds(messages=0, chars=0, tokens=0, keep=4)

    assert needs_summary(3, 501, by_chars, overflow=False)
    assert not needs_summary(3, 500, by_chars, overflow=False)
    assert needs_summary(3, 401, by_tokens, overflow=False)  # 401 chars ≈ 101 tokens
    assert not needs_summary(3, 400, by_tokens, overflow=False)
    assert needs_summary(3, 10, off, overflow=True), "a history that did not fit"
    assert not needs_summary(2, 10_000, by_chars, overflow=True), "nothing old enough to fold"


def test_the_summary_folds_all_but_the_newest_messages_up_to_an_answer() -> None:
    history = _chat(10)

    assert [m.seq for m in to_fold(history, LIMITS).folded] == [1, 2, 3, 4, 5, 6]
    # an odd keep would leave an answer apart from its question: the question stays too
    odd = Thresholds(messages=8, chars=0, tokens=0, keep=3)
    assert [m.seq for m in to_fold(history, odd).folded] == [1, 2, 3, 4, 5, 6]


def test_long_newest_messages_keep_fewer_but_always_the_last_exchange() -> None:
    history = _chat(10, chars=300)
    tight = Thresholds(messages=0, chars=700, tokens=0, keep=6)

    assert [m.seq for m in to_fold(history, tight).folded] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert to_fold(_chat(2, chars=5_000), tight).folded == []


def test_code_keeps_ids_decisions_and_open_questions_whatever_the_model_writes() -> None:
    folded = [
        _msg(1, Kind.USER, f"Please look at page {PAGE_ID} and task {TASK_UUID}."),
        _msg(2, Kind.ASSISTANT, "Done. Should the slug be spring-sale or sale-2026?", runId=RUN_ID),
        _msg(3, Kind.USER, "We decided: go with spring-sale."),
        _msg(4, Kind.ASSISTANT, "Noted."),
        _msg(5, Kind.USER, "What does the audit say about images?"),
        _msg(6, Kind.ASSISTANT, "Which audit do you mean, the March one?"),
    ]
    later = [_msg(7, Kind.USER, "Tell me about prices.")]

    facts = extract_facts(folded, later, None)

    assert facts.ids == [PAGE_ID, TASK_UUID, RUN_ID]
    assert facts.decisions == ["We decided: go with spring-sale."]
    assert facts.open_questions == ["Which audit do you mean, the March one?"], (
        "the slug question was decided, the user's question answered; the last one is open"
    )


def test_facts_carry_over_versions_and_a_later_decision_closes_an_open_question() -> None:
    earlier = SummaryFacts(ids=[PAGE_ID], decisions=["yes, proceed"], open_questions=["Which?"])
    folded = [_msg(9, Kind.USER, f"OK, approve run {RUN_ID}."), _msg(10, Kind.ASSISTANT, "Ok.")]

    facts = extract_facts(folded, [], earlier)

    assert facts.ids == [PAGE_ID, RUN_ID]
    assert facts.decisions == ["yes, proceed", f"OK, approve run {RUN_ID}."]
    assert facts.open_questions == []


def test_the_prompt_shows_the_kept_facts_before_the_prose() -> None:
    summary = ConversationSummary(
        conversation_id="c",
        version=2,
        covered_through_seq=40,
        covered_messages=30,
        text="The user is planning a spring sale.",
        facts=SummaryFacts(ids=[PAGE_ID], decisions=["go with spring-sale"], open_questions=[]),
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )

    shown = rolling_summary.for_prompt(summary)

    assert shown.version == 2
    assert shown.facts.splitlines() == [
        "## Earlier in this conversation (summary v2, 30 messages)",
        f"Ids mentioned: {PAGE_ID}",
        "Decisions:",
        "- go with spring-sale",
    ]
    assert shown.prose == "The user is planning a spring sale."


def test_without_the_model_the_prose_is_an_extract_of_the_messages() -> None:
    text = rolling_summary.extract_text(None, _chat(2))

    assert text.splitlines() == ["User: m1 xxxxxxxxxx", "Assistant (chief): m2 xxxxxxxxxx"]


PASTES = Thresholds(messages=8, chars=0, tokens=0, keep=2, paste=1_000)


def test_the_newest_paste_stays_word_for_word_and_the_chatter_around_it_is_folded() -> None:
    history = _chat(10)
    history[2] = _msg(3, Kind.USER, "contract " + "c" * 2_000)  # the second user message

    fold = to_fold(history, PASTES)

    assert [m.id for m in fold.kept] == ["m3"]
    assert [m.seq for m in fold.folded] == [1, 2, 4, 5, 6, 7, 8], "all but it and the last two"
    plain = to_fold(history, Thresholds(messages=8, chars=0, tokens=0, keep=2))
    assert "m3" in [m.id for m in plain.folded], "without the rule the paste is folded"


def test_a_kept_paste_is_folded_once_a_newer_paste_replaces_it() -> None:
    old = _msg(2, Kind.USER, "old contract " + "o" * 2_000)
    history = _chat(6)
    history[0] = _msg(11, Kind.USER, "new contract " + "n" * 2_000)
    history = [_msg(10 + i, m.kind, m.content) for i, m in enumerate(history, start=1)]

    fold = to_fold(history, PASTES, kept_before=[old])

    assert [m.id for m in fold.kept] == ["m11"]
    assert fold.folded[0].id == "m2", "the replaced paste is folded, oldest first"
    nothing = to_fold(history[-2:], PASTES, kept_before=[old])
    assert nothing.folded == [] and nothing.kept == [old], "nothing to fold: kept as it was"


def test_the_fold_goes_down_to_its_share_of_the_budget_so_the_next_turn_needs_none() -> None:
    history = _chat(12, chars=400)  # ~410 characters a message
    at_once = Thresholds(messages=0, chars=3_000, tokens=0, keep=12, fold_share=1.0)
    halfway = Thresholds(messages=0, chars=3_000, tokens=0, keep=12, fold_share=0.5)
    assert needs_summary(12, sum(len(m.content) for m in history), halfway, overflow=False)

    for limits in (at_once, halfway):
        fold = to_fold(history, limits)
        left = history[len(fold.folded) :]
        chars = sum(len(m.content) for m in left)
        # a question stays with its answer: one message over the share at most
        assert chars <= limits.chars * limits.fold_share + 410
        next_exchange = _chat(2, chars=400)
        after = chars + sum(len(m.content) for m in next_exchange)
        again = needs_summary(len(left) + 2, after, limits, overflow=False)
        # folded just under the budget, the next exchange passes it again; halfway, not
        assert again is (limits is at_once)


def test_the_fold_keeps_its_share_of_the_prompts_history_budget() -> None:
    history = _chat(12, chars=400)  # ~104 estimated tokens a message with its overhead
    limits = Thresholds(messages=0, chars=0, tokens=0, keep=12, history_tokens=1_000)
    whole = to_fold(history, limits)
    half = to_fold(history, dataclasses.replace(limits, fold_share=0.5))

    kept_whole = len(history) - len(whole.folded)
    kept_half = len(history) - len(half.folded)
    assert (kept_whole - 1) * 104 <= 1_000 < (kept_whole + 2) * 104
    assert (kept_half - 1) * 104 <= 500 < (kept_half + 2) * 104
    assert kept_half < kept_whole


def test_a_history_nearly_full_asks_for_the_summary_before_it_overflows() -> None:
    assert not rolling_summary.nearly_full(800, 1_000, 0.8)
    assert rolling_summary.nearly_full(801, 1_000, 0.8)
    assert not rolling_summary.nearly_full(5_000, 0, 0.8), "no budget known: overflow decides"
    # folded down to half the budget, the history is far from asking again
    assert not rolling_summary.nearly_full(500, 1_000, 0.8)


def test_an_extract_keeps_its_newest_lines_within_its_bound() -> None:
    text = ""
    for round_ in range(200):  # a model that keeps failing: each version extends the last
        previous = ConversationSummary(
            conversation_id="c",
            version=round_ + 1,
            covered_through_seq=round_ * 4,
            covered_messages=round_ * 4,
            text=text,
            facts=SummaryFacts(ids=[], decisions=[], open_questions=[]),
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        folded = [_msg(round_ * 4 + i, m.kind, m.content) for i, m in enumerate(_chat(4))]
        text = rolling_summary.extract_text(previous if text else None, folded)

    assert len(text) <= rolling_summary.EXTRACT_CHARS
    assert text.splitlines()[-1] == "Assistant (chief): m4 xxxxxxxxxx", "the newest line stays"
    assert len(text) > rolling_summary.EXTRACT_CHARS - 100, "it drops whole old lines only"
