from hansa.engine.planning import answers, playbooks
from hansa.engine.planning.triage import triage

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
    assert answers.slugify("Our Services & Prices!") == "our-services-prices"
