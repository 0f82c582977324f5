"""Answers in plain words (issue 16 item 1): what the rules do not settle, the model reads
(purpose ``answers``, structured output), and Hans never asks the same question a third time.

Each test runs a server whose model is a script of its own: the Services page is asked
for, and its layout answered in words, not by letter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from harness import hans_says, new_conversation, running_server, turn, wordpress_project

REQUEST = "Please create a new webpage called Services"
IN_WORDS = (
    "Language: English; Audience: homeowners in Quebec; SEO: water softeners; "
    "Layout: one Services page with a lead capture block"
)
"""Every answer labelled, the layout described rather than named."""


def _answers(**choices: dict[str, str]) -> str:
    """The model's answer for the open questions (here only the layout is open)."""
    return json.dumps(choices)


def _server(tmp: Path, steps: list[dict[str, Any]]) -> Any:
    script = tmp / "script.json"
    script.write_text(json.dumps(steps))
    return running_server(tmp, model=f"scripted:{script}")


def _plan(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "plan")["data"]


def _values(plan: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {r["name"]: (r["value"], r["source"]) for r in plan["plan"]["requirements"]}


def _answer_calls(client: httpx.Client, cid: str) -> list[dict[str, Any]]:
    calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    return [c for c in calls if c["nodeId"] == "planner"]


def test_a_layout_described_in_words_picks_the_option_it_fits(tmp_path: Path) -> None:
    steps = [
        {
            "purpose": "answers",
            # the engine sends the open question, its options and the user's words
            "promptHas": ["Overview with lead capture", "one Services page with a lead capture"],
            "text": _answers(
                layout={"choice": "C", "text": "one Services page with a lead capture block"}
            ),
        }
    ]
    with _server(tmp_path, steps) as server, server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, REQUEST)
        answered = turn(client, cid, IN_WORDS)
        calls = _answer_calls(client, cid)
    plan = _plan(answered)
    assert _values(plan)["layout"] == ("C", "user")
    assert plan["plan"]["chosenFork"] == "C"
    (said,) = hans_says(answered)
    assert said.startswith(
        "Layout: I took “one Services page with a lead capture block” as C: "
        "Overview with lead capture."
    )
    assert "Here is the plan" in said and "Before I plan this" not in said
    # the rules' values stand: the model was asked only about the layout
    assert _values(plan)["language"] == ("English", "user")
    assert [c["success"] for c in calls] == [True]


def test_a_layout_no_option_fits_becomes_a_custom_choice_said_back(tmp_path: Path) -> None:
    own = "a single long page with a video header"
    steps = [{"purpose": "answers", "text": _answers(layout={"choice": "custom", "text": own})}]
    with _server(tmp_path, steps) as server, server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, REQUEST)
        answered = turn(
            client,
            cid,
            "Language: English; Audience: families; SEO: soft water; "
            "Layout: a single long page with a video header at the top",
        )
        card = client.get(f"/api/runs/{_plan(answered)['runId']}").json()
    plan = _plan(answered)
    assert _values(plan)["layout"] == (own, "user")
    assert plan["plan"]["chosenFork"] is None
    (said,) = hans_says(answered)
    assert f"Layout: none of the options fits that, so I will go with your own: “{own}”." in said
    copy = card["groups"][0]["tasks"][0]
    assert own in copy["parameters"]["brief"], "the copywriter gets the layout asked for"


def test_rules_only_then_the_default_instead_of_a_third_ask(tmp_path: Path) -> None:
    # the model's answers are unusable (not JSON, then a provider error): the rules alone
    unusable = [
        {"purpose": "answers", "text": "The user probably wants the lead capture layout."},
        {"purpose": "answers", "error": "the model is overloaded"},
    ]
    with _server(tmp_path, unusable) as server, server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        first = turn(client, cid, REQUEST)
        second = turn(
            client,
            cid,
            "Language: English; Audience: homeowners in Quebec; SEO: water softeners; "
            "the nicest one",
        )
        third = turn(client, cid, "whichever you like best")
        calls = _answer_calls(client, cid)
        planning = client.get(f"/api/conversations/{cid}").json()["metadata"]["planning"]
    # first ask: all four; second: the layout again (the rules read the rest)
    assert all(label in hans_says(first)[0] for label in ("Language", "Layout"))
    (again,) = hans_says(second)
    assert "1. Layout" in again and "Language" not in again.split("Before I plan")[1]
    assert "I could not place “the nicest one”" in again
    assert not [e for e in second if e["type"] == "plan"]
    # never a third time: Hans takes the first option, says so, and shows the plan
    plan = _plan(third)
    assert _values(plan)["layout"] == ("A", "default")
    assert _values(plan)["seo_angle"] == ("water softeners", "user")
    (said,) = hans_says(third)
    assert (
        "Layout: I asked twice without an answer I could use, so I went with "
        "A: One overview page (the first option)."
    ) in said
    assert "Before I plan this" not in said and "Here is the plan" in said
    assert planning["asked"]["layout"] == 2
    # both calls recorded: one answered (in prose, unusable), one failed
    assert [c["success"] for c in calls] == [True, False]


def test_each_question_is_asked_at_most_twice(tmp_path: Path) -> None:
    # no model at all for the answers: every call fails
    steps = [{"purpose": "answers", "error": "down"}]
    with _server(tmp_path, steps) as server, server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, "Please create a new page")  # nothing known: six questions
        second = turn(client, cid, "title: Services; hmm, not sure about the rest")
        third = turn(client, cid, "still thinking")
    (again,) = hans_says(second)
    assert "Language" in again and "Page title" not in again
    plan = _plan(third)
    values = _values(plan)
    assert values["title"] == ("Services", "user")
    assert values["language"] == ("English", "default")
    assert values["audience"] == ("people looking for the services of Aquaverter", "default")
    assert values["seo_angle"] == ("Services", "default")
    assert values["layout"] == ("A", "default")
    said = hans_says(third)[0]
    assert said.count("I asked twice without an answer I could use") == 4
