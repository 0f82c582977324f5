import pytest

from hansa.engine.planning import answers, playbooks
from hansa.engine.planning.triage import triage
from hansa.tasks.base import page_slug

PAGE = playbooks.find("Please create a new webpage called Services")


def test_the_services_request_matches_the_new_page_playbook_and_plans() -> None:
    assert PAGE is not None and PAGE.id == "new_page"
    decision = triage("Please create a new webpage called Services")
    assert decision.plan and decision.playbook is PAGE
    assert "agents take part" in decision.reason


def test_questions_are_not_needed_for_a_simple_question() -> None:
    assert not triage("What makes a good landing page?").plan


def test_labelled_answers_in_one_message() -> None:
    found = answers.extract(
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
    found = answers.extract(
        PAGE, PAGE.new_plan(), "Please create a page called Our Team.", first=True
    )
    assert found["title"] == "Our Team"


def test_a_fork_by_its_title() -> None:
    plan = PAGE.new_plan()
    assert answers.extract(PAGE, plan, "layout: services by category", first=False)["layout"] == "B"


def test_approval_and_cancel_words() -> None:
    assert answers.is_approval("yes, proceed")
    assert answers.is_approval("OK, go ahead")
    assert not answers.is_approval("yes but change the slug")
    assert answers.is_cancel("cancel that")
    assert page_slug("Our Services & Prices!") == "our-services-prices"
    assert page_slug("/our-services/") == "our-services"


AUDIT = playbooks.find("Please audit the Pricing page for SEO")


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
    found = answers.extract(AUDIT, AUDIT.new_plan(), request_text, first=True)
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
    found = answers.extract(product, product.new_plan(), text, first=True)
    assert (found["name"], found["price"]) == ("Softener XL", "499")
    named = answers.extract(
        product, product.new_plan(), "Add a product called Filter Kit.", first=True
    )
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
    assert answers.extract(decision.playbook, plan, request_text, first=True).get("page") == page


def test_a_word_after_the_verb_that_is_not_a_name_is_not_taken_for_one() -> None:
    assert AUDIT is not None
    text = "Check the SEO of the Pricing page"
    assert answers.extract(AUDIT, AUDIT.new_plan(), text, first=True) == {}
