"""Playbooks that act on an existing page, end to end: the SEO audit (a page named by its
title, address or id is found, audited, and what the audit found reaches the user; a page
that is missing or ambiguous fails the run truthfully) and deleting a page (irreversible:
nothing happens until the user confirms the exact step)."""

from __future__ import annotations

from typing import Any

import httpx

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

THIN = "<h1>{title}</h1><p>Plans from 9 € a month.</p>"


def _page(client: httpx.Client, cid: str, pid: str, title: str, slug: str) -> dict[str, Any]:
    html = THIN.format(title=title)
    params = {"title": title, "slug": slug, "contentHtml": html}
    return execute_task(client, cid, "webEngineer", "create_page", params, projectId=pid)


def _plan(client: httpx.Client, cid: str, request: str) -> tuple[list[dict[str, Any]], str]:
    """The planning turn's events and the id of the run it proposes."""
    planned = turn(client, cid, request)
    return planned, next(e for e in planned if e["type"] == "plan")["data"]["runId"]


def _approve_and_finish(
    client: httpx.Client, cid: str, request: str
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """The planning turn's events, the finished run card, and the run's events."""
    planned, run_id = _plan(client, cid, request)
    approval = turn(client, cid, "yes, proceed")
    finished = events_until(client, cid, run_done(run_id), after=approval[-1]["seq"])
    return planned, client.get(f"/api/runs/{run_id}").json(), finished


def test_a_page_named_by_its_title_is_found_audited_and_reported(server: Server) -> None:
    with server.client() as client:
        pid = wordpress_project(client)
        cid = new_conversation(client, projectId=pid)
        page = _page(client, cid, pid, "Pricing", "pricing")
        _page(client, cid, pid, "Contact", "contact")
        planned, card, finished = _approve_and_finish(
            client, cid, "Please audit the Pricing page for SEO"
        )
        by_address, _, _ = _approve_and_finish(client, cid, "Check the SEO of /contact")

    thinking = [e["data"]["summary"] for e in planned if e["type"] == "thinking"]
    assert "Hans chose a planning run: it runs a recorded task (run_audit)" in thinking
    assert not any("asking for what is missing" in t for t in thinking), "nothing to ask"
    assert "Hans is planning a run for this request" in thinking, "one agent: no multi-agent run"
    assert "Hans is drafting a staged plan with 1 step" in thinking
    (plan_text,) = hans_says(planned)
    assert "Audit the page Pricing of Aquaverter" in plan_text
    assert "tell me what to change (e.g. “page: …”)" in plan_text
    (task,) = card["groups"][0]["tasks"]
    assert task["parameters"] == {"page": "Pricing"}
    assert card["status"] == "completed"
    audit = task["result"]
    assert audit["pageId"] == page["pageId"] and audit["h1"] == "Pricing"
    final = hans_says(finished)[-1]
    assert f"score {audit['score']}/100" in final
    assert audit["findings"] and all(f["message"] in final for f in audit["findings"])
    assert "Audit the page /contact" in hans_says(by_address)[0]


def test_a_missing_or_ambiguous_page_fails_the_run_with_a_way_forward(server: Server) -> None:
    with server.client() as client:
        pid = wordpress_project(client)
        cid = new_conversation(client, projectId=pid)
        _page(client, cid, pid, "Offers", "offers")
        _page(client, cid, pid, "Offers", "offers-2024")
        _, missing, missing_events = _approve_and_finish(
            client, cid, "Please audit the Careers page for SEO"
        )
        _, twice, twice_events = _approve_and_finish(
            client, cid, "Please audit the Offers page for SEO"
        )

    assert missing["status"] == "failed"
    said = hans_says(missing_events)[-1]
    assert "there is no page called “Careers” in this project" in said
    assert "Check the reference" in said, "the recovery path for a missing reference"
    assert twice["status"] == "failed"
    (task,) = twice["groups"][0]["tasks"]
    assert task["result"]["error"]["code"] == "ambiguous_page"
    said = hans_says(twice_events)[-1]
    assert "2 pages match “Offers”" in said and "which page you mean" in said


def test_the_page_is_asked_for_when_the_request_names_none(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        asked = turn(client, cid, "Please audit the page for SEO")
    (question,) = hans_says(asked)
    assert "Page — Which page should I audit (its title, address or id)?" in question
    assert "You can answer in one message" not in question, "one question needs no example"


def test_deleting_a_page_by_name_waits_for_the_users_confirmation(server: Server) -> None:
    with server.client() as client:
        pid = wordpress_project(client)
        cid = new_conversation(client, projectId=pid)
        page = _page(client, cid, pid, "Old offers", "old-offers")
        planned, run_id = _plan(client, cid, "Please delete the Old offers page")
        turn(client, cid, "yes, proceed")
        waiting = events_until(  # the chip may come with the approval's own events
            client,
            cid,
            lambda e: e["type"] == "status" and "confirmation" in e["data"]["text"],
            after=planned[-1]["seq"],
        )
        task = client.get(f"/api/runs/{run_id}").json()["groups"][0]["tasks"][0]
        still_there = client.get(page["url"]).status_code
        confirmed = client.post(
            f"/api/tasks/{task['id']}/confirm", json={"parametersHash": task["parametersHash"]}
        )
        finished = events_until(client, cid, run_done(run_id), after=waiting[-1]["seq"])
        gone = client.get(page["url"]).status_code
        done = client.get(f"/api/tasks/{task['id']}").json()

    thinking = [e["data"]["summary"] for e in planned if e["type"] == "thinking"]
    assert any("cannot be undone" in t for t in thinking), thinking
    assert task["parameters"] == {"page": "Old offers"} and task["isReversibleBySystem"] is False
    assert task["status"] == "awaiting_confirmation" and still_there == 200
    assert "needs your confirmation" in waiting[-1]["data"]["text"]
    assert confirmed.status_code == 200, confirmed.text
    assert gone == 404
    assert done["status"] == "completed" and done["irreversibleConfirmedAt"]
    assert done["result"]["pageId"] == page["pageId"]
    assert hans_says(finished)[-1].startswith("Done: Delete the page Old offers")
