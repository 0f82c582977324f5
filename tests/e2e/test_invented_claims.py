"""What a weak model invents is caught, end to end (issue 30, gap 4): figures, statistics,
links, dates and promises that appear in no input (the request, the project, the tools'
results) are findings of Hans's review of a run and of the answer check of a turn; a run
with such findings is not reported plainly done, and the audit's score counts them. The
same words, grounded in the request, the project or a tool's result, pass.

Each test starts a server of its own, whose scripted agents (``[agents.<id>] model =
"scripted:<file>"``) write the drafts and answers, step by step, in the test's order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
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
    running_server,
    turn,
    wordpress_project,
)

INVENTED_COPY = [  # (what the draft says, what the review must name)
    (
        "Save on every bill: 35.9% of homeowners cut their water costs. "
        "Learn more at https://www4mccai.example/stats",
        ["the statistic “35.9%”", "the link “https://www4mccai.example/stats”"],
    ),
    ("Our spring prices hold until Friday, December 12th.", ["the date “December 12th”"]),
    (
        "Order today and your new filter will be installed within 24 hours.",
        ["the promise “will be installed within 24 hours”"],
    ),
    ("Trusted by 12,000 families across Ontario.", ["the figure “12,000”"]),
]
PLAIN_REQUEST = "Update the copy on the Pricing page to say our spring prices are here"
GROUNDED_COPY = [  # (the request, the draft that repeats what it was given)
    (
        "Update the copy on the Pricing page to say 20% off all filters until March 31, "
        "details at https://aquaverter.ca/spring",
        "Spring sale: 20% off every filter until 31 March. Details: aquaverter.ca/spring",
    ),
    (
        "Change the text on the Pricing page to say we have served 12000 families since 1998",
        "Since 1998, 12,000 families have trusted us with their water.",
    ),
    (  # the project's own address
        "Rewrite the copy on the Pricing page to say where to find us online",
        "Find every plan and price at https://www.aquaverter.ca",
    ),
]
NEW_PAGE = (
    "Please create a new page called Water Filtration Services; language: English; "
    "audience: homeowners; seo angle: water filtration; layout: B"
)
NEW_PAGE_COPY = (
    "Homeowners 2018-AJC Water Filtration Service. 35.9% of the total page views were from "
    "this short link in Google Analytics (https://www4mccai.example/l). Call 416-555-0199."
)


def _script(tmp: Path, agent: str, steps: list[dict[str, Any]]) -> str:
    path = tmp / f"{agent}.json"
    path.write_text(json.dumps(steps))
    return f'[agents.{agent}]\nmodel = "scripted:{path}"\n'


@contextmanager
def _server(tmp: Path, scripts: dict[str, list[dict[str, Any]]]) -> Iterator[Server]:
    config = "\n".join(_script(tmp, agent, steps) for agent, steps in scripts.items())
    (tmp / "hansa.toml").write_text(config)
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as server:
        yield server


def _run(client: httpx.Client, cid: str, request: str) -> tuple[dict[str, Any], str]:
    """Plan ``request``, approve it, wait for its end: the run card and Hans's last word."""
    planned = turn(client, cid, request)
    plans = [e for e in planned if e["type"] == "plan"]
    if not plans:  # the update's one question: which section (all of it)
        assert "Which section should change" in hans_says(planned)[-1], hans_says(planned)
        planned = turn(client, cid, "all")
        plans = [e for e in planned if e["type"] == "plan"]
    assert plans, hans_says(planned)
    run_id = plans[0]["data"]["runId"]
    approval = turn(client, cid, "yes, proceed")
    finished = events_until(client, cid, run_done(run_id), after=approval[-1]["seq"])
    return client.get(f"/api/runs/{run_id}").json(), hans_says(finished)[-1]


def _tasks(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["taskType"]: t for g in card["groups"] for t in g["tasks"]}


def _thinking(client: httpx.Client, cid: str) -> list[str]:
    messages = client.get(f"/api/conversations/{cid}/messages").json()
    return [m["content"] for m in messages if m["kind"] == "thinking"]


def test_invented_claims_in_a_draft_are_findings_and_the_run_says_so(
    tmp_path: Path,
) -> None:
    drafts = [{"text": text} for text, _ in INVENTED_COPY]
    drafts += [{"text": text} for _, text in GROUNDED_COPY]
    with _server(tmp_path, {"creativeLead": drafts}) as server, server.client() as client:
        pid = wordpress_project(client)
        cid = new_conversation(client, projectId=pid)
        html = "<h1>Pricing</h1><p>Three plans.</p>"
        params = {"title": "Pricing", "slug": "pricing", "contentHtml": html}
        execute_task(client, cid, "webEngineer", "create_page", params, projectId=pid)
        invented = [_run(client, cid, PLAIN_REQUEST) for _ in INVENTED_COPY]
        grounded = [_run(client, cid, request) for request, _ in GROUNDED_COPY]
        thinking = _thinking(client, cid)

    for (card, final), (_, named) in zip(invented, INVENTED_COPY, strict=True):
        draft = _tasks(card)["draft_content"]
        (problem,) = draft["result"]["validation"]["discrepancies"]
        for claim in named:
            assert claim in problem, (claim, problem)
            assert claim in final, final
        assert final.startswith("Finished, but not as planned: "), final
        assert not final.startswith("Done"), final
        assert card["metadata"]["validation"]["discrepancies"][0]["problem"] == problem
    for (card, final), (request, _) in zip(grounded, GROUNDED_COPY, strict=True):
        assert card["status"] == "completed"
        draft = _tasks(card)["draft_content"]
        assert draft["result"]["validation"]["discrepancies"] == [], request
        assert final.startswith("Done: "), (request, final)
    assert thinking.count("Hans read back 2 results: 1 differs from the plan") == len(INVENTED_COPY)
    assert thinking.count("Hans read back 2 results: all match the plan") == len(GROUNDED_COPY)


def test_the_review_of_a_new_page_scores_what_its_copy_invented(tmp_path: Path) -> None:
    scripts = {"creativeLead": [{"text": NEW_PAGE_COPY}, {"text": "Water filtration for homes."}]}
    with _server(tmp_path, scripts) as server, server.client() as client:
        pid = wordpress_project(client)
        cid = new_conversation(client, projectId=pid)
        card, final = _run(client, cid, NEW_PAGE)
        plain_card, plain_final = _run(
            client, cid, NEW_PAGE.replace("Water Filtration Services", "Water Softeners")
        )

    audit = _tasks(card)["run_audit"]["result"]
    (found,) = [f for f in audit["findings"] if f["code"] == "invented_claims"]
    assert found["severity"] == "error"
    for claim in ("“35.9%”", "“https://www4mccai.example/l”", "“2018”", "“416-555-0199”"):
        assert claim in found["message"], found
    plain = _tasks(plain_card)["run_audit"]["result"]
    assert not [f for f in plain["findings"] if f["code"] == "invented_claims"]
    others = [f for f in audit["findings"] if f["code"] != "invented_claims"]
    penalty = {"error": 25, "warning": 10, "info": 5}
    assert audit["score"] == max(0, 100 - sum(penalty[f["severity"]] for f in audit["findings"]))
    assert audit["score"] <= 100 - sum(penalty[f["severity"]] for f in others) - 25
    assert f"score {audit['score']}/100" in final
    assert found["message"] in final, "the review's finding reaches the user"
    assert final.startswith("Finished, but not as planned: "), final
    assert plain_final.startswith("Done: "), plain_final


PROMISES = [
    "Don't worry: all your requests will be completed by tomorrow morning.",
    "Your site will be live on Monday, I promise.",
    "We guarantee that 9 out of 10 visitors will call you.",
]
HONEST = "I can't say when it is done; the team will tell you as soon as it is."


@pytest.mark.parametrize("promise", PROMISES)
def test_the_answer_check_holds_back_an_invented_promise(tmp_path: Path, promise: str) -> None:
    scripts = {
        "clientSuccess": [
            {"text": promise},
            {"text": HONEST, "promptHas": ["not sent", "nothing in the request"]},
            {"text": promise},
            {"text": promise},
        ]
    }
    with _server(tmp_path, scripts) as server, server.client() as client:
        cid = new_conversation(client)
        retried = turn(client, cid, "Is everything in order?", activeAgentId="clientSuccess")
        failed = turn(client, cid, "And the rest?", activeAgentId="clientSuccess")

    (superseded,) = [e for e in retried if e["type"] == "draft_superseded"]
    assert superseded["data"]["reasons"] == ["invented_claim"]
    assert hans_says(retried) == [HONEST]
    (answer,) = hans_says(failed)
    assert answer.startswith(promise)
    assert answer.endswith(
        "Note: an automatic check could not confirm this answer (it states figures, links, "
        "dates or promises that nothing it was given holds)."
    )


GROUNDED_ANSWERS = [  # (the user's message, an answer that repeats what it was given)
    (
        "The client said the fix will be live on Monday; please note that for me",
        "Noted: the fix will be live on Monday.",
    ),
    (
        "Our spring sale is 20% off until March 31, see aquaverter.ca/spring. Sum it up",
        "Spring sale: 20 % off until 31 March, at https://aquaverter.ca/spring.",
    ),
]


@pytest.mark.parametrize(("asked", "answer"), GROUNDED_ANSWERS)
def test_the_answer_check_passes_what_the_request_gave(
    tmp_path: Path, asked: str, answer: str
) -> None:
    with _server(tmp_path, {"clientSuccess": [{"text": answer}]}) as server:
        with server.client() as client:
            cid = new_conversation(client)
            events = turn(client, cid, asked, activeAgentId="clientSuccess")

    assert not [e for e in events if e["type"] == "draft_superseded"]
    assert hans_says(events) == [answer]
    thinking = [e["data"]["summary"] for e in events if e["type"] == "thinking"]
    assert any("nothing invented" in t for t in thinking), thinking


def test_the_answer_check_passes_what_a_tool_found(tmp_path: Path) -> None:
    note = {"entityType": "document", "name": "Spring sale: 35.9% off until May 4"}
    scripts = {
        "researchAgent": [
            {"toolCalls": [{"name": "entity.create", "arguments": note}]},
            {"text": "Noted."},
            {"toolCalls": [{"name": "entity.search", "arguments": {"query": "spring sale"}}]},
            {"text": "Your note says 35.9% off until May 4th."},
            {"text": "It also says 40% off until June 1st."},
            {"text": "Nothing else, as far as I can tell.", "promptHas": ["not sent"]},
        ]
    }
    with _server(tmp_path, scripts) as server, server.client() as client:
        noted = new_conversation(client)
        turn(client, noted, "Keep a note for our sale", activeAgentId="researchAgent")
        cid = new_conversation(client)
        found = turn(client, cid, "What does our note say?", activeAgentId="researchAgent")
        invented = turn(client, cid, "Anything else in it?", activeAgentId="researchAgent")

    assert [e["data"]["ok"] for e in found if e["type"] == "tool_result"] == [True]
    assert not [e for e in found if e["type"] == "draft_superseded"]
    assert hans_says(found) == ["Your note says 35.9% off until May 4th."]
    (superseded,) = [e for e in invented if e["type"] == "draft_superseded"]
    assert superseded["data"]["reasons"] == ["invented_claim"]
    assert hans_says(invented) == ["Nothing else, as far as I can tell."]


AUDIT_THEN_DRAFT = {
    "intent": "A new opening for the Pricing page, from what its audit finds.",
    "title": "Pricing opening",
    "stages": [
        {
            "group": "A",
            "title": "Audit",
            "steps": [
                {
                    "ref": "audit",
                    "owner": "chief",
                    "taskType": "run_audit",
                    "parameters": {"page": "Pricing"},
                    "summary": "Audit the Pricing page",
                }
            ],
        },
        {
            "group": "B",
            "title": "Draft",
            "steps": [
                {
                    "ref": "copy",
                    "owner": "creativeLead",
                    "taskType": "draft_content",
                    "parameters": {"kind": "page_copy", "brief": "An opening from the audit"},
                    "summary": "Draft the opening",
                }
            ],
        },
    ],
}
FROM_THE_AUDIT = "The Pricing page has 38 words and an audit score of 80; aim for 300 words."
NOT_FROM_IT = "The Pricing page has 45 words and an audit score of 95."


def test_a_draft_grounded_in_an_earlier_step_s_result_passes(tmp_path: Path) -> None:
    plan = {"purpose": "plan", "text": json.dumps(AUDIT_THEN_DRAFT)}
    steps = [plan, {"purpose": "draft", "text": FROM_THE_AUDIT}]
    steps += [plan, {"purpose": "draft", "text": NOT_FROM_IT}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    with running_server(tmp_path, model=f"scripted:{script}") as server:
        with server.client() as client:
            pid = wordpress_project(client)
            cid = new_conversation(client, projectId=pid)
            html = "<h1>Pricing</h1><p>" + "word " * 37 + "</p>"
            params = {"title": "Pricing", "slug": "pricing", "contentHtml": html}
            execute_task(client, cid, "webEngineer", "create_page", params, projectId=pid)
            grounded = _run(client, cid, "Please move the shop to the new host")
            invented = _run(client, cid, "Please move the shop to the new host")

    card, final = grounded
    audit = _tasks(card)["run_audit"]["result"]
    assert (audit["wordCount"], audit["score"]) == (38, 80), "what the draft repeats"
    assert _tasks(card)["draft_content"]["result"]["validation"]["discrepancies"] == []
    assert final.startswith("Done: "), final
    card, final = invented
    (problem,) = _tasks(card)["draft_content"]["result"]["validation"]["discrepancies"]
    assert "the figure “45”" in problem and "the figure “95”" in problem, problem
    assert "“38”" not in problem
    assert final.startswith("Finished, but not as planned: "), final
