"""The providers hold a structured answer to its schema: OpenAI's strict mode where the
schema allows it (the reader's does), Anthropic's output format always (issue 30)."""

from __future__ import annotations

from hansa.engine.planning import answers, model_answers, plan_questions, playbooks
from hansa.models.openai import strict
from hansa.tasks.registry import default_registry

PAGE = next(p for p in playbooks.builtin() if p.id == "new_page")


def test_the_readers_schema_is_strict_and_a_loose_one_is_not() -> None:
    questions = plan_questions.questions(PAGE, PAGE.new_plan(), default_registry())
    reader = model_answers.schema(questions, answers.spans("English, homeowners, B"))
    assert strict(reader)
    assert not strict({"type": "object", "properties": {"agent": {"type": "string"}}})
    assert not strict(
        {
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
            "required": ["a"],
            "additionalProperties": False,
        }
    ), "a nested object that allows other properties"
