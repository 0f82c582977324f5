import time

import pytest

from hansa.engine.planning import answers, plan_questions, playbooks
from hansa.engine.planning.triage import triage
from hansa.tasks.base import page_slug
from hansa.tasks.registry import default_registry

REGISTRY = default_registry()


def _extract(playbook, plan, text, *, first):
    """What ``text`` answers of ``plan``'s requirements (the one reader)."""
    return plan_questions.read(playbook, plan, text, REGISTRY, first=first).values()


PAGE = next(p for p in playbooks.builtin() if p.id == "new_page")


def test_the_services_request_matches_the_new_page_playbook_and_plans() -> None:
    assert PAGE is not None and PAGE.id == "new_page"
    decision = triage("Please create a new webpage called Services")
    assert decision.plan and decision.playbook is PAGE
    assert "agents take part" in decision.reason


def test_questions_are_not_needed_for_a_simple_question() -> None:
    assert not triage("What makes a good landing page?").plan


def test_labelled_answers_in_one_message() -> None:
    found = _extract(
        PAGE,
        PAGE.new_plan(),
        "language: English; audience: homeowners; SEO: water softeners; layout B",
        first=False,
    )
    assert found == {
        "language": "English",
        "audience": "homeowners",
        "seo_angle": "water softeners",
        "layout": "B",
    }


def test_the_title_is_read_from_the_request() -> None:
    found = _extract(PAGE, PAGE.new_plan(), "Please create a page called Our Team.", first=True)
    assert found["title"] == "Our Team"


def test_a_fork_by_its_title() -> None:
    plan = PAGE.new_plan()
    assert _extract(PAGE, plan, "layout: services by category", first=False)["layout"] == "B"


def test_approval_and_cancel_words() -> None:
    assert answers.is_approval("yes, proceed")
    assert answers.is_approval("OK, go ahead")
    assert not answers.is_approval("yes but change the slug")
    assert answers.is_cancel("cancel that")
    assert page_slug("Our Services & Prices!") == "our-services-prices"
    assert page_slug("/our-services/") == "our-services"


AUDIT = next(p for p in playbooks.builtin() if p.id == "seo_audit")


@pytest.mark.parametrize(
    ("request_text", "page"),
    [
        ("Please audit the Pricing page for SEO", "Pricing"),
        ("Please audit our Services Overview page", "Services Overview"),
        ("Please audit the page called Our Services for SEO", "Our Services"),
        ('Review the "pricing" page for SEO', "pricing"),
        ("Check the SEO of /pricing", "/pricing"),
        ("audit page 01M83FEKDBQNGNFPE3SJKJ3Z2T", "01M83FEKDBQNGNFPE3SJKJ3Z2T"),
        ("Please audit the page for SEO", None),
    ],
)
def test_the_audited_page_is_read_by_title_address_or_id(
    request_text: str, page: str | None
) -> None:
    assert AUDIT is not None and AUDIT.id == "seo_audit"
    found = _extract(AUDIT, AUDIT.new_plan(), request_text, first=True)
    assert found.get("page") == page


def test_an_audit_plans_although_it_changes_nothing() -> None:
    decision = triage("Please audit the Pricing page for SEO")
    assert decision.plan and decision.playbook is AUDIT
    assert decision.reason == "planning run: it runs a recorded task (run_audit)"
    assert "changes" in triage("Please create a new webpage called Services").reason


def test_a_products_name_ends_before_its_price() -> None:
    product = playbooks.find("Please add a new product called Softener XL for 499")
    assert product is not None and product.id == "new_product"
    text = "Please add a new product called Softener XL for 499"
    found = _extract(product, product.new_plan(), text, first=True)
    assert (found["name"], found["price"]) == ("Softener XL", "499")
    named = _extract(product, product.new_plan(), "Add a product called Filter Kit.", first=True)
    assert named["name"] == "Filter Kit"


@pytest.mark.parametrize(
    ("request_text", "page"),
    [
        ("Please delete the Old offers page", "Old offers"),
        ("Remove the page called Summer Sale.", "Summer Sale"),
        ("Please delete the page /old-offers", "/old-offers"),
        ("Please delete a page", None),
    ],
)
def test_the_page_to_delete_is_read_and_the_run_is_flagged(
    request_text: str, page: str | None
) -> None:
    decision = triage(request_text)
    assert decision.playbook is not None and decision.playbook.id == "delete_page"
    assert "cannot be undone" in decision.reason
    plan = decision.playbook.new_plan()
    assert _extract(decision.playbook, plan, request_text, first=True).get("page") == page


def test_a_word_after_the_verb_that_is_not_a_name_is_not_taken_for_one() -> None:
    assert AUDIT is not None
    text = "Check the SEO of the Pricing page"
    assert _extract(AUDIT, AUDIT.new_plan(), text, first=True) == {}


# The review's inputs (H3) and their relatives: each took seconds, some hours, before
# the patterns were made linear. Messages are at most 20,000 characters.
ADVERSARIAL = [
    " " * 19_990,
    "1. a" + " " * 10_000 + "b",
    "1. a" + " " * 19_990 + "b",
    "Please create a new webpage called Services 1. a" + " " * 19_900 + "b",
    "yes" + " " * 19_990 + "x",
    "yes" + "," * 19_990 + "x",
    "yes please" + " " * 19_980 + "x",
    "language: a" + " " * 19_980 + "x",
    "a, " + " " * 19_980 + "x",
    "a, ab" + " " * 19_980 + "x",
    "1. " * 6_600,
    "\t2. " * 5_000,
    "layout " + " " * 19_990 + "bb",
    "the " * 5_000,
    ", ab" * 5_000,
    "called " + "A" * 19_990,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_no_message_makes_the_answer_parsers_slow(text: str) -> None:
    # a bound on complexity, not a benchmark: each call takes a few milliseconds here, the
    # quadratic patterns took from 0.5 s to hours on these inputs
    found = [p for p in (playbooks.find(t) for t in _REQUESTS) if p is not None]
    calls = [lambda: answers.is_approval(text), lambda: answers.is_cancel(text)]
    for playbook in found:
        for first in (True, False):
            calls.append(lambda p=playbook, f=first: _extract(p, p.new_plan(), text, first=f))
    for call in calls:
        started = time.perf_counter()
        call()
        assert time.perf_counter() - started < 0.1


_REQUESTS = (
    "Please create a new webpage called Services",
    "Please add a new product called Softener XL for 499",
    "Please audit the Pricing page for SEO",
    "Please delete the Old offers page",
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1. English 2. homeowners", {"language": "English", "audience": "homeowners"}),
        ("1) English\n2) homeowners", {"language": "English", "audience": "homeowners"}),
        ("1.\n  English; 2. homeowners.", {"language": "English", "audience": "homeowners"}),
        ("1. English 2.x", {"language": "English 2.x"}),
        ("1. ", {}),  # a blank answer is still the first question's: nothing is guessed
        (
            "language is English, target audience: homeowners",
            {"language": "English", "audience": "homeowners"},
        ),
        ("the page title should be Our Team", {}),  # not a question of this plan
        ("language:   ", {}),
    ],
)
def test_numbered_and_labelled_answers(text: str, expected: dict[str, str]) -> None:
    assert PAGE is not None
    plan = PAGE.new_plan()
    asked = [r for r in plan.requirements if r.name in ("language", "audience", "seo_angle")]
    plan = plan.model_copy(update={"requirements": asked})
    assert _extract(PAGE, plan, text, first=False) == expected


@pytest.mark.parametrize(
    ("text", "approves"),
    [
        ("yes", True),
        ("Yes, please proceed!", True),
        ("ok   go ahead", True),
        ("looks good, start", True),
        ("yes please, do it", True),
        ("yes, but make it blue", False),
        ("yes" + " " * 300, False),  # past SHORT_ANSWER_CHARS nothing is a bare "yes"
    ],
)
def test_approval(text: str, approves: bool) -> None:
    assert answers.is_approval(text) is approves


def test_label_patterns_of_ever_new_questions_stay_bounded() -> None:
    kept = answers.LABEL_PATTERNS_KEPT
    for n in range(kept + 50):  # every plan its own question, as a model may write them
        question = answers.Question(f"q{n}", f"Label {n}", aliases=(f"detail {n}",))
        reading = answers.read([question], f"detail {n}: value {n}")
        assert reading.values() == {f"q{n}": f"value {n}"}

    assert answers._label_pattern.cache_info().currsize <= kept
