import json

from hansa.engine.planning import model_answers, playbooks
from hansa.engine.planning.model_answers import Choice

PAGE = next(p for p in playbooks.builtin() if p.id == "new_page")


def _open(*names: str):
    plan = PAGE.new_plan()
    return plan, [r for r in plan.requirements if r.name in names]


def test_the_schema_offers_a_forks_options_and_custom_or_none() -> None:
    _, questions = _open("language", "layout")
    schema = model_answers.schema(PAGE, questions)
    assert schema["required"] == ["language", "layout"]
    layout = schema["properties"]["layout"]["properties"]["choice"]["enum"]
    language = schema["properties"]["language"]["properties"]["choice"]["enum"]
    assert layout == ["A", "B", "C", "custom", "none"]
    assert language == ["custom", "none"]


def test_the_instructions_name_the_questions_and_their_options() -> None:
    plan, questions = _open("layout")
    text = model_answers.instructions(PAGE, plan, questions)
    assert "Overview with lead capture" in text and "Which layout" in text


def test_an_option_a_custom_answer_and_none_are_read() -> None:
    _, questions = _open("language", "audience", "layout")
    raw = json.dumps(
        {
            "language": {"choice": "custom", "text": "  French,   please "},
            "audience": {"choice": "none", "text": ""},
            "layout": {"choice": "B", "text": ""},
        }
    )
    assert model_answers.parse(PAGE, questions, raw) == [
        Choice("language", custom="French, please"),
        Choice("layout", option="B"),
    ]


def test_what_does_not_fit_is_skipped_and_prose_is_no_answer() -> None:
    _, questions = _open("language", "layout")
    assert model_answers.parse(PAGE, questions, "The user wants layout B.") is None
    assert model_answers.parse(PAGE, questions, "[1, 2]") is None
    raw = json.dumps(
        {
            "language": {"choice": "B", "text": ""},  # an option of another question
            "layout": {"choice": "D", "text": ""},  # no such option
            "slug": {"choice": "custom", "text": "not asked"},
        }
    )
    assert model_answers.parse(PAGE, questions, raw) == []
    long = json.dumps({"layout": {"choice": "custom", "text": "x" * 500}})
    (choice,) = model_answers.parse(PAGE, questions, long) or []
    assert choice.custom is not None and len(choice.custom) == model_answers.CUSTOM_CHARS


def test_defaults_a_forks_first_option_templates_and_none() -> None:
    plan = PAGE.new_plan()
    assert PAGE.default("layout", plan, "Aquaverter") == "A"
    assert PAGE.default("language", plan, "Aquaverter") == "English"
    assert "Aquaverter" in (PAGE.default("audience", plan, "Aquaverter") or "")
    assert PAGE.default("seo_angle", plan, "Aquaverter") is None, "the title is still missing"
    titled = plan.model_copy(
        update={
            "requirements": [
                r.model_copy(update={"value": "Services"}) if r.name == "title" else r
                for r in plan.requirements
            ]
        }
    )
    assert PAGE.default("seo_angle", titled, "Aquaverter") == "Services"
    assert PAGE.default("title", plan, "Aquaverter") is None, "no sensible default"


def test_a_custom_layout_stands_for_itself_in_the_plan() -> None:
    plan = PAGE.new_plan()
    plan = plan.model_copy(
        update={
            "requirements": [
                r.model_copy(update={"value": "a video header"}) if r.name == "layout" else r
                for r in plan.requirements
            ]
        }
    )
    full = PAGE.render(plan, "Aquaverter", None)
    assert "a video header" in full.stages[0].steps[0].summary
