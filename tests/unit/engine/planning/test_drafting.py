"""The steps of a plan the model is still writing (``planning/drafting.py``)."""

from __future__ import annotations

import json

from hansa.engine.planning import drafting

PLAN = {
    "intent": "Move the shop",
    "title": "Shop move",
    "stages": [
        {
            "group": "A",
            "title": "Move",
            "steps": [
                {"ref": "a", "owner": "x", "taskType": "t", "parameters": {}, "summary": "One"},
                {"summary": 'Say "two"', "ref": "b", "owner": "x", "taskType": "t"},
            ],
        },
        {"group": "B", "title": "Check", "steps": [{"ref": "c", "summary": "Three"}]},
    ],
}
TEXT = json.dumps(PLAN)


def test_a_step_is_written_once_its_summary_is_closed() -> None:
    closed = TEXT.index('"One"') + len('"One"')

    assert drafting.written(TEXT[: closed - 1]) == [], "the string is still open"
    assert drafting.written(TEXT[:closed]) == [(0, 0, "One")]
    assert drafting.written(TEXT) == [(0, 0, "One"), (0, 1, 'Say "two"'), (1, 0, "Three")]


def test_a_fence_before_the_json_is_skipped_and_other_text_has_no_steps() -> None:
    assert drafting.written("```json\n" + TEXT[: TEXT.index("One") + 4]) == [(0, 0, "One")]
    assert drafting.written("I cannot plan this.") == []
    assert drafting.written("") == []
    assert drafting.written('{"stages": "not a list"}') == []
    assert drafting.written('{"stages": [{"steps": [{"summary": "  "}, 3]}]}') == []


def test_progress_announces_each_step_once_in_order_whatever_the_pieces() -> None:
    for size in (1, 3, 16, len(TEXT)):
        progress = drafting.Progress()
        said = []
        for start in range(0, len(TEXT), size):
            said += progress.add(TEXT[start : start + size])
        assert said == ["One", 'Say "two"', "Three"], size


def test_a_call_made_again_announces_only_the_steps_it_adds() -> None:
    progress = drafting.Progress()
    first = progress.add(TEXT[: TEXT.index("Three")])
    progress.restart()
    again = progress.add(TEXT)

    assert first == ["One", 'Say "two"']
    assert again == ["Three"]


def test_the_entry_masks_credentials_and_cuts_a_long_summary() -> None:
    secret = drafting.entry("Hans", 2, "Call https://h.example/hook?api_key=K1  now")
    long = drafting.entry("Hans", 1, "word " * 100)

    assert secret == "Hans is planning step 2: Call https://h.example/hook?api_key=*** now"
    assert long.startswith("Hans is planning step 1: word word")
    assert long.endswith("…") and len(long) == len("Hans is planning step 1: ") + 160
