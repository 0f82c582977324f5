"""A playbook's plan as Hans states it: the intent reads well before every value is given."""

from __future__ import annotations

from hansa.engine.planning import playbooks


def _new_page() -> playbooks.Playbook:
    return next(p for p in playbooks.builtin() if p.id == "new_page")


def test_the_intent_names_the_page_once_it_is_known() -> None:
    book = _new_page()
    plan = book.new_plan()
    named = plan.model_copy(
        update={
            "requirements": [
                r.model_copy(update={"value": "Services"}) if r.name == "title" else r
                for r in plan.requirements
            ]
        }
    )

    assert book.render(named, "Aquaverter", None).intent.startswith(
        "A new Services page for Aquaverter"
    )


def test_a_value_not_given_yet_leaves_no_gap_in_what_hans_says() -> None:
    book = _new_page()

    rendered = book.render(book.new_plan(), "Aquaverter", None)

    assert rendered.intent.startswith("A new page for Aquaverter")
    assert "  " not in rendered.intent and "  " not in rendered.title
    assert "Create a  page" not in rendered.intent
