"""The embedded model's structured output (issue 30): built from the schema's own grammar,
with room for the longest answer that grammar allows, so a read is always JSON of it."""

from __future__ import annotations

import json

import pytest

from hansa.engine.planning import answers, model_answers, plan_questions, playbooks
from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.models.local import LocalModel, longest
from hansa.tasks.registry import default_registry

PAGE = next(p for p in playbooks.builtin() if p.id == "new_page")
QUESTIONS = [
    q for q in plan_questions.questions(PAGE, PAGE.new_plan(), default_registry()) if q.asked
]
MESSAGES = [
    "It's for homeowners in Ontario with hard water, and the layout grouped by category",
    "#10.5% of the total is for our customers, whatever works; Water Filtration Services",
]


def test_the_longest_answer_of_the_readers_schema_is_bounded_and_covers_every_answer() -> None:
    spans = answers.spans(MESSAGES[0])
    schema = model_answers.schema(QUESTIONS, spans)
    bound = longest(schema)
    assert bound is not None and bound < 2_000
    widest = {
        q.name: {
            "choice": "custom" if q.own_words else q.options[0].id,
            "text": max(spans, key=len),
        }
        for q in QUESTIONS
    }
    assert len(json.dumps(widest)) <= bound
    assert longest({"type": "string"}) is None, "a string without maxLength is unbounded"
    assert longest({"type": "object", "properties": {"a": {"type": "integer"}}}) is None


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("message", MESSAGES)
async def test_a_structured_read_is_always_json_of_the_schema(message: str) -> None:
    model = LocalModel()
    spans = answers.spans(message)
    schema = model_answers.schema(QUESTIONS, spans)
    prompt = [
        ChatMessage("system", model_answers.instructions("A new page", QUESTIONS)),
        ChatMessage("user", message),
    ]
    settings = ModelSettings(temperature=0, max_tokens=model_answers.MAX_TOKENS)
    params = RequestParams(output_schema=schema, purpose=model_answers.PURPOSE)
    try:
        response = await model.request(prompt, settings, params)
    finally:
        await model.aclose()
    reply = json.loads(response.text)  # never cut off, never prose
    assert set(reply) == {q.name for q in QUESTIONS}
    for q in QUESTIONS:
        entry = reply[q.name]
        assert entry["choice"] in schema["properties"][q.name]["properties"]["choice"]["enum"]
        assert entry["text"] in ["", *spans]
    for value in (model_answers.parse(QUESTIONS, message, response.text) or {}).values():
        assert answers.written(value.words, message)
