"""Requests outside the playbooks' words (issue 30, gap 3), through the real server with the
scripted model: several deliverables for several agents become a plan with a step per
deliverable on its agent; a change of a page, product, menu or form the project has becomes
an update of it, found by name (lower-case names too); a name the project does not have
makes Hans say so and ask, never plan a new one; a one-agent question still goes to one
agent."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from harness import (
    Server,
    events_until,
    execute_task,
    hans_says,
    new_conversation,
    run_done,
    turn,
    wordpress_project,
)


def _site(client: httpx.Client) -> tuple[str, str, dict[str, str]]:
    """A project with the pages About, Contact Us and Services, and a conversation on it;
    the pages' ids by title."""
    pid = wordpress_project(client)
    cid = new_conversation(client, projectId=pid)
    ids = {}
    for title, slug in (("About", "about"), ("Contact Us", "contact-us"), ("Services", "services")):
        html = f"<h1>{title}</h1><p>What Aquaverter says about {title}.</p>"
        params = {"title": title, "slug": slug, "contentHtml": html}
        ids[title] = execute_task(client, cid, "webEngineer", "create_page", params, projectId=pid)[
            "pageId"
        ]
    return pid, cid, ids


def _plan(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "plan")["data"]


def _steps(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for stage in plan["plan"]["stages"] for s in stage["steps"]]


def _thinking(events: list[dict[str, Any]]) -> list[str]:
    return [e["data"]["summary"] for e in events if e["type"] == "thinking"]


@pytest.mark.parametrize(
    ("request_text", "owners"),
    [
        (
            "For the spring launch we need visuals, SEO copy and a landing page timeline",
            ["creativeLead", "growthLead", "deliveryLead"],
        ),
        (
            "Spring campaign prep: hero visuals for the landing page, plus keywords for the "
            "shop, and a delivery schedule",
            ["creativeLead", "growthLead", "deliveryLead"],
        ),
        (
            "Please get us three things:\n- new product photos\n- the SEO copy for the "
            "landing page\n- a roadmap for the launch",
            ["creativeLead", "growthLead", "deliveryLead"],
        ),
        ("Improve our SEO and redesign the brand visuals", ["growthLead", "creativeLead"]),
        (
            "Plan our spring campaign: visuals, SEO copy and a landing page",
            ["creativeLead", "growthLead", "webEngineer"],
        ),
    ],
)
def test_several_deliverables_become_a_plan_with_a_step_per_deliverable_on_its_agent(
    server: Server, request_text: str, owners: list[str]
) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        events = turn(client, cid, request_text)

    thinking = _thinking(events)
    assert f"Hans chose a planning run: it asks for {len(owners)} deliverables" in " ".join(
        thinking
    )
    routing = next(e for e in events if e["type"] == "routing")
    assert routing["data"]["agentId"] == "chief", "Hans plans it; no one agent answers it"
    steps = _steps(_plan(events))
    assert [s["owner"] for s in steps] == owners
    assert len(_plan(events)["plan"]["stages"]) == 1, "the deliverables do not wait for each other"
    speakers = {e["agentId"] for e in events if e["type"] == "message"}
    assert speakers <= {"chief", None}
    (given,) = [t for t in thinking if t.startswith("Hans is giving each deliverable to its")]
    assert all(f"{_NAMES[o]} (" in given for o in owners)


_NAMES = {
    "creativeLead": "Creative Lead Mak",
    "growthLead": "Growth Lead Dana",
    "deliveryLead": "Delivery Lead Ada",
    "webEngineer": "Web Engineer Nico",
}


def test_the_deliverables_plan_runs_each_step_on_its_agent(server: Server) -> None:
    request = "Coordinate the launch: visuals, SEO copy and a landing page timeline"
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        plan = _plan(turn(client, cid, request))
        approved = turn(client, cid, "yes, proceed")
        events_until(client, cid, run_done(plan["runId"]), after=approved[-1]["seq"])
        card = client.get(f"/api/runs/{plan['runId']}").json()

    tasks = {t["createdByAgentId"]: t for g in card["groups"] for t in g["tasks"]}
    assert card["status"] == "completed"
    assert tasks["creativeLead"]["taskType"] == "draft_content"
    assert tasks["growthLead"]["taskType"] == "draft_content"
    assert tasks["deliveryLead"]["taskType"] == "create_ticket"
    assert tasks["deliveryLead"]["result"]["ticketId"]
    assert "timeline" in tasks["deliveryLead"]["parameters"]["title"]


@pytest.mark.parametrize(
    ("request_text", "page", "added"),
    [
        ("Add a FAQ section to the About page", "About", "FAQ section"),
        (
            "Please put our opening hours (Mon-Fri 9-17) on the services page",
            "Services",
            "opening hours (Mon-Fri 9-17)",
        ),
        (
            "could you add customer testimonials to the about page?",
            "About",
            "customer testimonials",
        ),
        ("Add our new address to the contact page", "Contact Us", "new address"),
        ("Add a contact form to the About page", "About", "contact form"),
    ],
)
def test_an_addition_to_an_existing_page_is_an_update_of_the_page_found_by_name(
    server: Server, request_text: str, page: str, added: str
) -> None:
    with server.client() as client:
        _, cid, _ = _site(client)
        events = turn(client, cid, request_text)

    plan = _plan(events)
    said = hans_says(events)[0]
    assert "Page title" not in said and "What should the page be called" not in said
    assert not any(s["taskType"] == "create_page" for s in _steps(plan)), "no new page"
    update = next(s for s in _steps(plan) if s["taskType"] == "update_content_block")
    assert update["owner"] == "webEngineer"
    assert update["parameters"]["page"] == page, "the page under the project's own name"
    assert added in plan["plan"]["intent"]
    assert "Hans found the page to change in the project" in _thinking(events)
    if page == "Contact Us":
        assert "I took “the contact page” as Contact Us." in said


def test_the_addition_lands_on_the_page_and_keeps_what_it_had(server: Server) -> None:
    with server.client() as client:
        _, cid, ids = _site(client)
        plan = _plan(turn(client, cid, "Add a FAQ section to the services page"))
        approved = turn(client, cid, "yes, proceed")
        events_until(client, cid, run_done(plan["runId"]), after=approved[-1]["seq"])
        card = client.get(f"/api/runs/{plan['runId']}").json()
        stored = client.get(f"/api/workspace/pages/{ids['Services']}")

    assert card["status"] == "completed", card
    assert stored.status_code == 200
    html = stored.text
    assert "What Aquaverter says about Services." in html, "the page keeps its content"
    assert 'data-block="faq-section"' in html, "the new section is added to it"


@pytest.mark.parametrize(
    ("request_text", "page"),
    [
        ("Update the services page to mention our 10-year warranty", "Services"),
        ("Change the headline on the about page to say Clean water for every home", "About"),
        ("Please rewrite the intro of the page called Services", "Services"),
    ],
)
def test_a_change_of_an_existing_page_updates_it(
    server: Server, request_text: str, page: str
) -> None:
    with server.client() as client:
        _, cid, _ = _site(client)
        events = turn(client, cid, request_text)
        answered = turn(client, cid, "section: all")

    (said,) = hans_says(events)
    assert "What should the page be called" not in said and "Page —" not in said
    assert f"Goal: Change the content of the {page} page of Aquaverter" in said
    assert "Section —" in said, "which part of the page changes is asked, not guessed"
    steps = _steps(_plan(answered))
    (update,) = [s for s in steps if s["taskType"] == "update_content_block"]
    assert update["parameters"]["page"] == page
    assert not any(s["taskType"] == "create_page" for s in steps)


@pytest.mark.parametrize(
    ("request_text", "named", "answer"),
    [
        ("Add a FAQ section to the Careers page", "Careers", "page: About"),
        ("please put the new price list on the pricing page", "pricing", "page: About"),
        ("Update the team page to mention our new hires", "team", "page: About; section: all"),
    ],
)
def test_a_page_the_project_does_not_have_is_said_and_asked_about_never_created(
    server: Server, request_text: str, named: str, answer: str
) -> None:
    with server.client() as client:
        _, cid, _ = _site(client)
        asked = turn(client, cid, request_text)
        answered = turn(client, cid, answer)

    assert not [e for e in asked if e["type"] == "plan"], "no plan for a page that is not there"
    (said,) = hans_says(asked)
    assert "Hans found no page by that name and is asking which one" in _thinking(asked)
    assert f"I can't find a page called “{named}” in Aquaverter." in said
    assert "Its pages are: About, Contact Us, Services." in said
    assert "Which existing page" in said or "Which page should change" in said
    steps = _steps(_plan(answered))
    assert not any(s["taskType"] == "create_page" for s in steps)
    (update,) = [s for s in steps if s["taskType"] == "update_content_block"]
    assert update["parameters"]["page"] == "About"


def test_products_menus_and_forms_are_changed_not_created(server: Server) -> None:
    with server.client() as client:
        pid, cid, _ = _site(client)
        product = {"name": "Softener XL", "price": "499"}
        execute_task(client, cid, "ecommerceSpecialist", "create_product", product, projectId=pid)
        price = turn(client, cid, "Change the price of the softener xl product to 449")
        turn(client, cid, "cancel")
        missing = turn(client, cid, "Please update the description of the Softener Mega product")
        turn(client, cid, "cancel")
        menu = turn(client, cid, "Add a link to the services page in the main menu")
        turn(client, cid, "cancel")
        form = turn(client, cid, "Add a phone number field to the contact form")

    (ticket,) = _steps(_plan(price))
    assert ticket["taskType"] == "create_ticket"
    assert ticket["parameters"]["title"] == "Change the product Softener XL"
    assert "449" in ticket["parameters"]["description"]
    assert not any(e["type"] == "plan" for e in missing)
    (said,) = hans_says(missing)
    assert "I can't find a product called “Softener Mega” in Aquaverter." in said
    assert "Its products are: Softener XL." in said
    (menu_step,) = _steps(_plan(menu))
    assert menu_step["parameters"]["title"] == "Change the main menu"
    (form_step,) = _steps(_plan(form))
    assert form_step["parameters"]["title"] == "Change the contact form"


@pytest.mark.parametrize(
    ("question", "agent"),
    [
        ("Please improve our SEO traffic", "growthLead"),
        ("How do I make our visuals and our copy fit the brand?", "creativeLead"),
        ("Suggest a visual direction for our brand refresh", "creativeLead"),
        ("What should go on the about page?", "webEngineer"),
    ],
)
def test_a_one_agent_request_still_goes_to_one_agent(
    server: Server, question: str, agent: str
) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        events = turn(client, cid, question)

    routing = next(e for e in events if e["type"] == "routing")
    assert routing["data"]["agentId"] == agent
    assert not any(e["type"] in ("plan", "run_created") for e in events)


@pytest.mark.parametrize(
    "request_text",
    [
        "Add our opening hours to the contact page and a FAQ to the about page",
        "add testimonials to the about page and the services page",
    ],
)
def test_additions_to_several_pages_never_start_the_new_page_plan(
    server: Server, request_text: str
) -> None:
    with server.client() as client:
        _, cid, _ = _site(client)
        events = turn(client, cid, request_text)

    (said,) = hans_says(events)
    assert "What should the page be called" not in said and "Page title" not in said
    plans = [e for e in events if e["type"] == "plan"]
    assert not any(s["taskType"] == "create_page" for p in plans for s in _steps(p["data"]))
    speakers = {e["agentId"] for e in events if e["type"] == "message"}
    assert speakers <= {"chief", None}, "Hans plans or asks; no agent answers about it"


def test_the_page_named_in_answer_is_looked_up_too(server: Server) -> None:
    with server.client() as client:
        _, cid, _ = _site(client)
        turn(client, cid, "Add a FAQ section to the Careers page")
        wrong = turn(client, cid, "page: Team")
        right = turn(client, cid, "page: services")
        turn(client, cid, "cancel")
        turn(client, cid, "Add a FAQ section to the about page")
        adjusted = turn(client, cid, "page: Jobs")

    (said,) = hans_says(wrong)
    assert "I can't find a page called “Team” in Aquaverter." in said
    assert "Which existing page" in said and not any(e["type"] == "plan" for e in wrong)
    (update,) = [s for s in _steps(_plan(right)) if s["taskType"] == "update_content_block"]
    assert update["parameters"]["page"] == "Services", "the project's own name for it"
    (again,) = hans_says(adjusted)
    assert "I can't find a page called “Jobs” in Aquaverter." in again
    assert not any(e["type"] == "plan" for e in adjusted), "the plan on a missing page is gone"
