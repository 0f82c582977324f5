"""The agent loop over the real server (seeds 002, 003): scripted models call tools.

One server; each test talks to an agent of its own, whose model is a script of its own
(``[agents.<id>] model = "scripted:<file>"``), so the tests do not share script steps.
The server allows two rounds of tool calls per reply (``HANSA_MAX_TOOL_ROUNDS``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness import (
    Server,
    events_until,
    execute_task,
    hans_says,
    new_conversation,
    post,
    running_server,
    turn,
    wordpress_project,
)

ROUNDS = 2
"""``HANSA_MAX_TOOL_ROUNDS`` of the server."""

PAGE_HTML = "<h1>Pricing</h1><p>Three plans, billed monthly.</p>"
AUDIT_ANSWER = "The Pricing page scores well; I added a short FAQ block to it."
SCOPE_ANSWER = "I cannot remove pages myself; the Web Engineer can."
WEBHOOK = {"url": "https://hooks.example.com/deploy", "method": "POST", "body": {"go": True}}
HELD_ANSWER = "I have asked to call the deploy hook; it needs your go-ahead."
LOOPING = {"entityId": "no-such-entity"}
FALSE_CLAIM = "Done: I created the page for you."
HONEST = "I have not made any change yet; tell me the title and I will build it."
NO_SUCH_PAGE = "01JD3X5Q7N8W2R4T6Y8U0I2O4P"
NOT_FOUND = "I could not find that page; it may not have been made yet."

SCRIPTS: dict[str, list[dict[str, Any]]] = {
    # (a) a tool, a second tool, an answer
    "webEngineer": [
        {"toolCalls": [{"name": "run_audit", "arguments": {"page": "Pricing"}}]},
        {
            "text": "Adding a FAQ block.",
            "toolCalls": [
                {
                    "name": "update_content_block",
                    "arguments": {"page": "Pricing", "blockId": "faq", "html": "<p>FAQ</p>"},
                }
            ],
        },
        {"text": AUDIT_ANSWER},
    ],
    # (b) a tool outside the agent's scope (not offered: a made-up call)
    "growthLead": [
        {
            "toolCalls": [
                {"name": "delete_page", "arguments": {"page": "Pricing"}, "offered": False}
            ]
        },
        {"text": SCOPE_ANSWER},
    ],
    # (c) an irreversible tool
    "technicalLead": [
        {"toolCalls": [{"name": "webhook.call", "arguments": WEBHOOK}]},
        {"text": HELD_ANSWER},
    ],
    # (d) a runaway loop: it asks for tools again and again
    "deliveryLead": [
        {"toolCalls": [{"name": "entity.read", "arguments": LOOPING}]} for _ in range(ROUNDS + 1)
    ],
    # (f) the quality gate: a false claim, then an honest answer
    "seoSpecialist": [{"text": FALSE_CLAIM}, {"text": HONEST, "promptHas": ["not sent"]}],
    # (g) the quality gate: a link to no page, then an answer without it
    "ecommerceSpecialist": [
        {"text": f"It is at /api/workspace/pages/{NO_SUCH_PAGE}"},
        {"text": NOT_FOUND, "promptHas": ["does not exist"]},
    ],
    # (e) a slow tool, cut by a cancel
    "chief": [{"toolCalls": [{"name": "wait", "arguments": {"seconds": 120}}]}],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("agent-loop")
    config = []
    for agent, steps in SCRIPTS.items():
        script = tmp / f"{agent}.json"
        script.write_text(json.dumps(steps))
        config.append(f'[agents.{agent}]\nmodel = "scripted:{script}"\n')
    (tmp / "hansa.toml").write_text("\n".join(config))
    env = {"HANSA_MAX_TOOL_ROUNDS": str(ROUNDS)}
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml")), env=env) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def _loop_events(events: list[dict[str, Any]]) -> list[str]:
    """The turn's tool events and its answer, in order (text deltas run together)."""
    kinds: list[str] = []
    for e in events:
        kind = e["type"]
        if kind in ("tool_call", "tool_result", "text_delta", "done") or (
            kind == "message" and e["data"]["kind"] == "assistant"
        ):
            if not (kind == "text_delta" and kinds and kinds[-1] == "text_delta"):
                kinds.append(kind)
    return kinds


def test_a_tool_then_a_second_tool_then_the_answer(client: httpx.Client) -> None:
    pid = wordpress_project(client)
    cid = new_conversation(client, projectId=pid)
    page = {"title": "Pricing", "slug": "pricing", "contentHtml": PAGE_HTML}
    page_id = execute_task(client, cid, "webEngineer", "create_page", page, projectId=pid)["pageId"]

    events = turn(client, cid, "How is the Pricing page doing?")
    calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    html = client.get(f"/api/workspace/pages/{page_id}")

    assert _loop_events(events) == [
        "tool_call",
        "tool_result",
        "text_delta",
        "tool_call",
        "tool_result",
        "text_delta",
        "message",
        "done",
    ]
    audit_call, update_call = _of(events, "tool_call")
    audit, update = _of(events, "tool_result")
    assert audit_call["data"] == {
        "toolCallId": audit["data"]["toolCallId"],
        "name": "run_audit",
        "arguments": {"page": "Pricing"},
    }
    assert audit["data"]["ok"] is True and audit["data"]["error"] is None, audit["data"]["error"]
    assert audit["data"]["result"]["h1"] == "Pricing" and "score" in audit["data"]["result"]
    assert update_call["data"]["name"] == "update_content_block"
    assert update["data"]["ok"] is True, update
    assert update["data"]["toolCallId"] == update_call["data"]["toolCallId"]
    assert any(e["type"] == "operation" and "update page" in e["data"]["name"] for e in events)
    (answer,) = hans_says(events)
    landed = (  # where the change landed, said by Hans whatever the model said (issue 30)
        "Where this landed: update_content_block: Hansa's workspace, as a draft for Aquaverter "
        "(not on its live site) (Aquaverter's WordPress site is not connected to Hansa; the "
        "project drafts its changes here until it is)."
    )
    assert answer == f"Adding a FAQ block.\n\n{AUDIT_ANSWER}\n\n{landed}"
    deltas = "".join(e["data"]["delta"] for e in _of(events, "text_delta"))
    assert deltas.strip() == answer
    assert events[-1]["data"]["status"] == "completed"
    reply_calls = [c for c in calls if c["agentId"] == "webEngineer"]
    assert len(reply_calls) == 3, calls
    assert all(c["success"] and c["turnId"] == events[-1]["turnId"] for c in reply_calls)
    prompts = [c["promptTokens"] for c in sorted(reply_calls, key=lambda c: c["createdAt"])]
    assert prompts[0] < prompts[1] < prompts[2], "each call's prompt holds the tools' answers"
    assert html.status_code == 200 and '<section data-block="faq"><p>FAQ</p>' in html.text


def test_a_tool_outside_the_agents_scope_is_refused_and_the_model_answers(
    client: httpx.Client,
) -> None:
    cid = new_conversation(client)

    events = turn(client, cid, "How is our traffic this month?")

    (call,) = _of(events, "tool_call")
    (result,) = _of(events, "tool_result")
    assert call["agentId"] == "growthLead" and call["data"]["name"] == "delete_page"
    assert result["data"]["ok"] is False and result["data"]["result"] is None
    error = result["data"]["error"]
    assert error["code"] == "scope_denied"
    assert "cms_pages" in error["message"] and "allowed scope" in error["message"]
    assert hans_says(events) == [SCOPE_ANSWER]
    assert events[-1]["data"]["status"] == "completed"
    assert not _of(events, "run_created"), "nothing ran, nothing was held"
    timeline = client.get(f"/api/conversations/{cid}/timeline").json()
    summaries = [t["summary"] for t in timeline if t["kind"].startswith("tool_")]
    assert summaries == [
        "Growth Lead Dana called the tool delete_page",
        "delete_page gave no result (scope_denied)",
    ]


def test_an_irreversible_tool_waits_for_confirmation_and_the_answer_says_so(
    client: httpx.Client,
) -> None:
    cid = new_conversation(client)

    events = turn(client, cid, "Is our server integration ready to deploy?")

    (call,) = _of(events, "tool_call")
    (result,) = _of(events, "tool_result")
    assert call["agentId"] == "technicalLead" and call["data"]["name"] == "webhook.call"
    held = result["data"]["result"]
    assert result["data"]["ok"] is True and held["status"] == "awaiting_confirmation"
    kinds = [e["type"] for e in events]
    assert kinds.index("tool_call") < kinds.index("run_created") < kinds.index("tool_result")
    (answer,) = hans_says(events)
    assert answer.startswith(HELD_ANSWER)
    assert "Waiting for your confirmation: webhook.call" in answer
    assert "cannot be undone" in answer

    run_id, task_id = held["runId"], held["taskId"]
    waiting = events_until(
        client,
        cid,
        lambda e: (
            e["type"] == "task_status"
            and e["taskId"] == task_id
            and e["data"]["status"] == "awaiting_confirmation"
        ),
    )
    assert waiting, "the scheduler holds the task for consent"
    task = client.get(f"/api/tasks/{task_id}").json()
    assert task["status"] == "awaiting_confirmation"
    assert task["isReversibleBySystem"] is False and task["result"] is None
    assert task["parametersHash"] == held["parametersHash"]
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "running"
    assert not any(e["type"] == "operation" for e in events), "the webhook was not called"
    timeline = client.get(f"/api/conversations/{cid}/timeline").json()
    assert "webhook.call waits for your confirmation" in [t["summary"] for t in timeline]


def test_a_runaway_loop_ends_with_error_and_done(client: httpx.Client) -> None:
    cid = new_conversation(client)

    events = turn(client, cid, "What is the delivery timeline?")
    calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    convo = client.get(f"/api/conversations/{cid}").json()

    assert len(_of(events, "tool_call")) == ROUNDS == len(_of(events, "tool_result"))
    for result in _of(events, "tool_result"):
        assert result["data"]["ok"] is False and result["data"]["error"]["code"] == "not_found"
    assert [e["type"] for e in events][-2:] == ["error", "done"]
    assert events[-2]["data"]["code"] == "tool_loop_limit"
    assert events[-1]["data"]["status"] == "failed"
    (apology,) = hans_says(events)
    assert f"after {ROUNDS} rounds of tool calls" in apology
    assert len(calls) == ROUNDS + 1, "one llm_calls row per model call"
    assert convo["state"] == "idle"


def test_cancel_seals_a_dangling_tool_call(client: httpx.Client) -> None:
    cid = new_conversation(client)
    posted = post(client, cid, "Hold on for a moment please")
    tid = posted["turnId"]
    events_until(
        client, cid, lambda e: e["type"] == "tool_call" and e["turnId"] == tid, after=posted["seq"]
    )

    cancelled = client.post(f"/api/turns/{tid}/cancel")
    events = events_until(
        client,
        cid,
        lambda e: e["type"] == "done" and e["turnId"] == tid,
        after=posted["seq"],
    )
    again = client.post(f"/api/turns/{tid}/cancel")
    convo = client.get(f"/api/conversations/{cid}").json()

    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json() == {"turnId": tid, "conversationId": cid, "status": "cancelled"}
    mine = [e for e in events if e["turnId"] == tid]
    assert [e["type"] for e in mine][-3:] == ["tool_call", "tool_result", "done"]
    call, sealed, done = mine[-3:]
    assert sealed["data"]["toolCallId"] == call["data"]["toolCallId"]
    assert sealed["data"]["ok"] is False and sealed["data"]["error"]["code"] == "cancelled"
    assert done["data"]["status"] == "cancelled"
    assert again.status_code == 200 and again.json()["status"] == "cancelled"
    assert convo["state"] == "idle"


def test_cancel_refuses_a_finished_turn_and_an_unknown_one(client: httpx.Client) -> None:
    cid = new_conversation(client)
    posted = post(client, cid, "How is the client account?")  # the default scripted model
    events_until(client, cid, lambda e: e["type"] == "done", after=posted["seq"])

    finished = client.post(f"/api/turns/{posted['turnId']}/cancel")
    unknown = client.post("/api/turns/01NOSUCHTURN0000000000000/cancel")

    assert finished.status_code == 409, finished.text
    assert finished.json()["error"]["code"] == "conflict"
    assert unknown.status_code == 404


def test_the_quality_gate_retries_a_false_claim(client: httpx.Client) -> None:
    cid = new_conversation(client)

    events = turn(client, cid, "What did you do about my request?", activeAgentId="seoSpecialist")
    calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    messages = client.get(f"/api/conversations/{cid}/messages").json()
    timeline = client.get(f"/api/conversations/{cid}/timeline").json()

    assert events[-1]["data"]["status"] == "completed"
    assert hans_says(events) == [HONEST], "the second answer is the answer"
    assert [c["agentId"] for c in calls] == ["seoSpecialist", "seoSpecialist"], "one retry"
    kinds = [e["type"] for e in events]
    (superseded,) = _of(events, "draft_superseded")
    draft = superseded["data"]["messageId"]
    deltas = _of(events, "text_delta")
    drafted = "".join(d["data"]["delta"] for d in deltas if d["data"]["messageId"] == draft)
    assert drafted.strip() == FALSE_CLAIM
    assert superseded["data"]["reasons"] == ["unbacked_claim"]
    assert superseded["agentId"] == "seoSpecialist"
    (answer,) = [e for e in events if e["type"] == "message" and e["data"]["kind"] == "assistant"]
    assert answer["data"]["messageId"] != draft, "the answer has an id of its own"
    final = "".join(d["data"]["delta"] for d in deltas if d["data"]["messageId"] != draft)
    assert final.strip() == HONEST
    first_of_answer = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "text_delta" and e["data"]["messageId"] != draft
    )
    assert kinds.index("draft_superseded") < first_of_answer
    thinking = [e["data"]["summary"] for e in events if e["type"] == "thinking"]
    held_back = (
        "Hans held back SEO Specialist Sami's draft (it says something was done that no "
        "tool call did) and asked for a new answer"
    )
    assert held_back in thinking and superseded["data"]["reason"] == held_back
    assert thinking[-1].startswith("Hans checked the new answer before sending it"), thinking
    assert draft not in {m["id"] for m in messages}, "no message is stored for the draft"
    assert [m["content"] for m in messages if m["kind"] == "assistant"] == [HONEST]
    assert "draft_superseded" in [t["kind"] for t in timeline]


def test_the_quality_gate_retries_a_broken_link(client: httpx.Client) -> None:
    cid = new_conversation(client)

    events = turn(client, cid, "Where can I read it?", activeAgentId="ecommerceSpecialist")

    assert events[-1]["data"]["status"] == "completed"
    (superseded,) = _of(events, "draft_superseded")
    assert superseded["data"]["reasons"] == ["broken_link"]
    assert hans_says(events) == [NOT_FOUND]
