from typing import Any

from hansa.engine.text import json_object, map_strings


def test_every_string_is_changed_in_document_order_and_the_shape_is_kept() -> None:
    seen: list[str] = []

    def upper(s: str) -> str:
        seen.append(s)
        return s.upper()

    value = {"a": "x", "b": [1, "y", {"c": "z", "d": [["w"]]}], "e": None, "f": {"g": "q"}}
    assert map_strings(value, upper) == {
        "a": "X",
        "b": [1, "Y", {"c": "Z", "d": [["W"]]}],
        "e": None,
        "f": {"g": "Q"},
    }
    assert seen == ["x", "y", "z", "w", "q"]
    assert value["a"] == "x", "the original is left alone"
    assert map_strings("s", upper) == "S" and map_strings(5, upper) == 5


def test_no_depth_exhausts_the_stack() -> None:
    deep: Any = {"leaf": "s"}
    for _ in range(100_000):  # far past the interpreter's recursion limit
        deep = [deep]
    out = map_strings(deep, str.upper)
    for _ in range(100_000):
        out = out[0]
    assert out == {"leaf": "S"}


def test_a_structured_answer_is_read_as_an_object_or_not_at_all() -> None:
    assert json_object('{"summary": "s"}') == {"summary": "s"}
    assert json_object('["a list"]') is None
    assert json_object('{"cut off": ') is None
    assert json_object("plain prose") is None
