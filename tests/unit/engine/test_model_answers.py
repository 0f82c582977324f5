import json

from hansa.engine.planning import answers, model_answers, plan_questions, playbooks
from hansa.tasks.registry import default_registry

PAGE = next(p for p in playbooks.builtin() if p.id == "new_page")


def _open(*names: str) -> list[answers.Question]:
    listed = plan_questions.questions(PAGE, PAGE.new_plan(), default_registry())
    return [q for q in listed if q.name in names]


MESSAGE = "French please, for young families; the layout with services grouped by kind"


def test_the_schema_offers_options_custom_none_and_only_the_messages_words() -> None:
    questions = _open("language", "layout")
    spans = answers.spans(MESSAGE)
    schema = model_answers.schema(questions, spans)
    assert schema["required"] == ["language", "layout"]
    layout = schema["properties"]["layout"]["properties"]
    language = schema["properties"]["language"]["properties"]
    assert layout["choice"]["enum"] == ["A", "B", "C", "custom", "none"]
    assert language["choice"]["enum"] == ["custom", "none"]
    assert language["text"]["enum"] == ["", *spans]
    assert "French please" in spans and "for young families" in spans
    assert "young families" in spans, "a part without the words that lead into it"
    assert all(answers.written(s, MESSAGE) for s in spans)


def test_the_instructions_name_the_questions_and_their_options() -> None:
    text = model_answers.instructions("A new page", _open("layout"))
    assert "Services by category" in text and "Layout" in text


def test_an_option_and_the_users_own_words_are_read_with_the_words_they_came_from() -> None:
    questions = _open("language", "audience", "layout")
    raw = json.dumps(
        {
            "language": {"choice": "custom", "text": "French   please"},
            "audience": {"choice": "none", "text": ""},
            "layout": {"choice": "B", "text": "the layout with services grouped by kind"},
        }
    )
    found = model_answers.parse(questions, MESSAGE, raw)
    assert found == {
        "language": answers.Answer("French please", "French please", answers.How.MODEL),
        "layout": answers.Answer(
            "B", "the layout with services grouped by kind", answers.How.MODEL
        ),
    }


def test_a_value_the_user_did_not_write_is_never_taken() -> None:
    questions = _open("language", "audience", "layout")
    raw = json.dumps(
        {
            "language": {"choice": "custom", "text": "English"},  # not in the message
            "audience": {"choice": "custom", "text": "#10.5% of the total is for our customers"},
            "layout": {"choice": "C", "text": ""},  # an option with no words behind it
        }
    )
    assert model_answers.parse(questions, MESSAGE, raw) == {}


def test_what_does_not_fit_is_skipped_and_prose_is_no_answer() -> None:
    questions = _open("language", "layout")
    assert model_answers.parse(questions, MESSAGE, "The user wants layout B.") is None
    assert model_answers.parse(questions, MESSAGE, "[1, 2]") is None
    raw = json.dumps(
        {
            "language": {"choice": "B", "text": "French please"},  # another question's option
            "layout": {"choice": "D", "text": "French please"},  # no such option
            "slug": {"choice": "custom", "text": "French please"},  # not asked
        }
    )
    assert model_answers.parse(questions, MESSAGE, raw) == {}


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
