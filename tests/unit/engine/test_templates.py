import pytest

from hansa import errors
from hansa.engine import templates
from hansa.engine.templates import Scope, render, render_value

SCOPE = Scope(
    message={"content": "Hello", "senderId": "u1"},
    user={"name": "Ada", "tags": ["a", "b"]},
    context={"topic": "pricing"},
    project={"name": "Aquaverter"},
    results={"copy": {"html": "<p>hi</p>", "n": 3}, "fetch": {"items": [{"name": "x"}]}},
    llm_response="The answer",
    loop={"item": {"name": "first"}, "i": 0},
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{message.content}}!", "Hello!"),
        ("Hi {{user.name}}", "Hi Ada"),
        ("about {{ context.topic }}", "about pricing"),
        ("for {{project.name}}", "for Aquaverter"),
        ("page: {{copy.html}}", "page: <p>hi</p>"),
        ("page: {{copy.result.html}}", "page: <p>hi</p>"),
        ("said: {{llmResponse}}", "said: The answer"),
        ("#{{i}} {{item.name}}", "#0 first"),
    ],
)
def test_each_namespace_is_filled(text: str, expected: str) -> None:
    assert render(text, SCOPE) == expected


def test_list_indexes_walk_into_lists() -> None:
    assert render("{{fetch.items.0.name}} {{user.tags.1}}", SCOPE) == "x b"


def test_non_strings_substitute_as_compact_json() -> None:
    text = "{{copy.n}} {{user.tags}} {{fetch.items.0}} {{copy.result}}"
    assert render(text, SCOPE) == ('3 ["a","b"] {"name":"x"} {"html":"<p>hi</p>","n":3}')


def test_a_whole_reference_keeps_the_value_and_its_type() -> None:
    value = {"n": "{{copy.n}}", "tags": [" {{ user.tags }} "], "all": "{{copy.result}}"}
    assert render_value(value, SCOPE) == {
        "n": 3,
        "tags": [["a", "b"]],
        "all": {"html": "<p>hi</p>", "n": 3},
    }
    assert render_value({"i": "{{i}}", "x": "n={{copy.n}}"}, SCOPE) == {"i": 0, "x": "n=3"}


def test_a_missing_variable_is_the_law_of_clarity_and_names_it() -> None:
    for text, name in [
        ("{{user.age}}", "user.age"),
        ("{{copy.title}}", "copy.title"),
        ("{{nope.x}}", "nope.x"),
        ("{{user.tags.5}}", "user.tags.5"),
        ("{{llmResponse}}", "llmResponse"),
    ]:
        scope = SCOPE if name != "llmResponse" else Scope()
        with pytest.raises(errors.InvalidInput, match="law of clarity") as caught:
            render(text, scope)
        assert name in caught.value.message
        assert caught.value.details == {"law": "clarity", "missing": [name]}
    with pytest.raises(templates.MissingVariable, match="'copy' has no 'title'"):
        render_value({"a": ["{{copy.title}}"]}, SCOPE)


def test_a_namespace_the_scope_does_not_carry_is_a_step_ref() -> None:
    plan = Scope(results={"context": {"x": 1}})
    assert render_value("{{context.x}}", plan) == 1
    with pytest.raises(templates.MissingVariable):
        render("{{context.topic}}", Scope(context={}, results={"context": {"topic": "t"}}))


def test_output_is_capped() -> None:
    big = Scope(results={"s": {"v": "x" * 40_000}})
    assert len(render("{{s.v}}", big)) == 40_000
    with pytest.raises(templates.OutputTooLarge) as caught:
        render("{{s.v}}{{s.v}}", big)
    assert isinstance(caught.value, errors.InvalidInput)
    assert str(templates.MAX_OUTPUT_BYTES) in caught.value.message
    at_cap = Scope(results={"s": {"v": "é" * (templates.MAX_OUTPUT_BYTES // 2)}})
    assert render("{{s.v}}", at_cap) == "é" * (templates.MAX_OUTPUT_BYTES // 2)
    with pytest.raises(templates.OutputTooLarge):
        render("{{s.v}}.", at_cap)  # bytes, not characters


def test_substituted_text_is_never_rendered_again() -> None:
    scope = Scope(message={"content": "{{user.x}} {{__class__}}"}, user={"x": "secret"})
    assert render("said: {{message.content}}", scope) == "said: {{user.x}} {{__class__}}"
    assert render_value({"p": "{{message.content}}"}, scope) == {"p": "{{user.x}} {{__class__}}"}


@pytest.mark.parametrize(
    "text",
    [
        "{{__class__}}",
        "{{ message.__class__ }}",
        "{{message._private}}",
        "{{_x.y}}",
        "{{1+1}}",
        "{{ user.name | upper }}",
        "{{user['name']}}",
        "{{ title }}",
        "{% for x in y %}",
    ],
)
def test_what_is_not_a_reference_stays_as_written(text: str) -> None:
    assert render(text, SCOPE) == text
    assert render_value({"v": text}, SCOPE) == {"v": text}
    assert templates.references(text) == ()


def test_references_lists_what_a_value_names() -> None:
    value = {"a": "{{copy.html}} {{ user.name }}", "b": ["{{item.name}}", "{{llmResponse}}"]}
    assert templates.references(value) == ("copy.html", "user.name", "item.name", "llmResponse")
    assert templates.references("{{item}} {{i}} {{copy.n}} {{copy.n}}", loop_keys=["item"]) == (
        "item",
        "copy.n",
    )


def test_mask_replaces_every_reference_with_a_stand_in() -> None:
    value = {"x": "{{copy.html}}", "y": ["a {{copy.n}} {{__class__}} {{ title }}"], "z": 1}
    assert templates.mask(value, "ref") == {
        "x": "ref",
        "y": ["a ref {{__class__}} {{ title }}"],
        "z": 1,
    }
