"""The API's answer models: built from domain objects, masked once, written as the API always
wrote them, read back from JSON by the client, and by wire name like a dict."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from hansa.api.models.agents import AgentOut, ProjectOut
from hansa.api.models.automation import SessionOut
from hansa.api.models.conversations import ConversationOut
from hansa.api.models.runs import RunCard, RunSummary, TaskOut
from hansa.api.models.usage import EntityOut
from hansa.domain import message, run
from hansa.domain.agent import AgentDefinition, Category
from hansa.domain.conversation import Conversation, State
from hansa.domain.project import Project
from hansa.domain.session import AgentSession, SessionStatus
from hansa.domain.workspace import WorkspaceEdge, WorkspaceEntity

NOW = datetime(2026, 11, 27, 12, 30, 5, 120, tzinfo=UTC)
SECRET = {"apiKey": "sk-live-0123456789abcdef", "keep": 1}


def _task(**fields: object) -> run.Task:
    base: dict[str, object] = {
        "id": "t1",
        "run_id": "r1",
        "conversation_id": "c1",
        "project_id": None,
        "parent_task_id": None,
        "step_group": "A",
        "sequence_order": 0,
        "created_by": "seoAgent",
        "status": run.TaskStatus.COMPLETED,
        "task_type": "wait",
        "parameters": {"password": "hunter2", "seconds": 0},
        "summary": "Log in with password=hunter2",
        "is_reversible_by_system": True,
        "irreversible_confirmed_at": None,
        "confirmed_hash": None,
        "attempts": 1,
        "scheduled_at": None,
        "result": {"token": "abc123"},
        "error": None,
        "created_at": NOW,
        "updated_at": NOW,
        "metadata": {},
    }
    return run.Task.model_validate({**base, **fields})


def _run() -> run.Run:
    return run.Run(
        id="r1",
        tenant_id="default",
        conversation_id="c1",
        project_id=None,
        created_by="chief",
        title="Plan",
        status=run.RunStatus.COMPLETED,
        created_at=NOW,
        updated_at=NOW,
        metadata={"secret": "s3cr3t"},
    )


def _wire(model: object) -> dict[str, object]:
    assert hasattr(model, "model_dump_json")
    found: dict[str, object] = json.loads(model.model_dump_json(by_alias=True))
    return found


def test_a_conversation_is_masked_and_timed_as_the_api_always_wrote_it() -> None:
    convo = Conversation(
        id="c1",
        tenant_id="default",
        project_id=None,
        title=None,
        state=State.IDLE,
        current_agent="chief",
        last_seq=4,
        created_at=NOW,
        updated_at=NOW,
        metadata={"context": SECRET},
    )
    out = _wire(ConversationOut.of(convo))
    assert out["context"] == {"apiKey": "***", "keep": 1}
    assert out["metadata"] == {"context": {"apiKey": "***", "keep": 1}}
    assert out["createdAt"] == NOW.isoformat() and out["createdAt"].endswith("+00:00")
    assert out["projectId"] is None and out["currentAgent"] == "chief"
    assert "tenantId" not in out


def test_a_task_shows_every_secret_masked_and_its_author_as_created_by_agent_id() -> None:
    out = _wire(TaskOut.of(_task()))
    assert out["createdByAgentId"] == "seoAgent"
    assert out["parameters"] == {"password": "***", "seconds": 0}
    assert "hunter2" not in json.dumps(out)
    assert out["result"] == {"token": "***"}
    assert out["parametersHash"] == _task().parameters_hash
    assert out["scheduledAt"] is None and out["irreversibleConfirmedAt"] is None


def test_a_run_card_groups_tasks_and_thinking_and_reads_back_from_its_json() -> None:
    thought = message.Message(
        id="m1",
        conversation_id="c1",
        turn_id=None,
        run_id="r1",
        kind=message.Kind.THINKING,
        author=message.Author.ASSISTANT,
        agent_id="seoAgent",
        content="Checking the page",
        created_at=NOW,
        metadata={"group": "B"},
    )
    tasks = [_task(), _task(id="t2", step_group="B", created_by="chief")]
    card = RunCard.of_run(_run(), tasks, [thought], {"chief": "Hans"}, ["t2", "t1"])
    out = _wire(card)
    assert [a["id"] for a in out["agents"]] == ["chief", "seoAgent"]  # type: ignore[index]
    assert out["agents"][0]["displayName"] == "Hans"  # type: ignore[index]
    assert [g["stepGroup"] for g in out["groups"]] == ["A", "B"]  # type: ignore[index]
    assert out["groups"][1]["thinking"][0]["summary"] == "Checking the page"  # type: ignore[index]
    assert out["thinking"] == [] and out["undoableTaskIds"] == ["t2", "t1"]
    assert out["metadata"] == {"secret": "***"}
    assert RunCard.model_validate_json(card.model_dump_json(by_alias=True)) == card
    listed = _wire(RunSummary.of(_run()))
    assert set(out) - set(listed) == {"agents", "groups", "thinking", "undoableTaskIds"}


def test_an_answer_reads_like_the_dict_it_was() -> None:
    card = RunCard.of_run(_run(), [_task()], [], {}, [])
    assert card["status"] == "completed" == card.status
    assert card["groups"][0]["tasks"][0]["createdByAgentId"] == "seoAgent"
    assert card["created_by"] == "chief"
    assert "undoableTaskIds" in card and "nope" not in card
    with pytest.raises(KeyError):
        card["nope"]


def test_an_agent_draws_its_avatar_and_a_project_masks_its_config() -> None:
    agent = AgentDefinition(
        id="seoAgent",
        display_name="Sofia SEO",
        role="SEO",
        role_summary="Search",
        category=Category.UTILITY,
        color="#112233",
    )
    out = _wire(AgentOut.of(agent))
    assert out["avatar"] == {"initials": agent.initials, "color": "#112233"}
    project = Project(
        id="p1",
        tenant_id="default",
        name="Site",
        domain=None,
        cms_platform=None,
        allowed_task_types=("wait",),
        config={"wordpress": {"appPassword": "abcd efgh"}},
        created_at=NOW,
    )
    shown = _wire(ProjectOut.of(project))
    assert shown["config"] == {"wordpress": {"appPassword": "***"}}
    assert shown["allowedTaskTypes"] == ["wait"]


def test_a_session_counts_its_steps_as_api_md_names_them() -> None:
    session = AgentSession(
        id="s1",
        tenant_id="default",
        agent_id="chief",
        conversation_id="c1",
        goal="SEO",
        status=SessionStatus.RUNNING,
        iteration=3,
        step="audit",
        state={"token": "abc123"},
        guidance=None,
        max_steps=10,
        max_runtime_seconds=None,
        next_run_at=None,
        reason=None,
        created_at=NOW,
        updated_at=NOW,
    )
    out = _wire(SessionOut.of(session))
    assert (out["iteration"], out["step"], out["nextStep"]) == (3, 3, "audit")
    assert out["state"] == {"token": "***"}


def test_a_workspace_entity_is_masked_and_timed_as_the_api_always_wrote_it() -> None:
    entity = WorkspaceEntity(
        id="e1",
        tenant_id="default",
        project_id=None,
        kind="document",
        name="Brand token=abc12345xyz",
        parent_id=None,
        position=0,
        data={"context": SECRET, "html": "<p>Hi</p>"},
        idempotency_key="k1",
        created_at=NOW,
        updated_at=NOW,
        deleted_at=None,
    )
    edge = WorkspaceEdge(id="g1", from_id="e1", to_id="e2", relation="supports")
    out = _wire(EntityOut.of_entity(entity, [edge]))
    assert out["name"] == "Brand token=***"
    assert out["data"] == {"context": {"apiKey": "***", "keep": 1}, "html": "<p>Hi</p>"}
    assert out["createdAt"] == NOW.isoformat() and out["deleted"] is False
    assert out["edges"] == [{"edgeId": "g1", "fromId": "e1", "toId": "e2", "relation": "supports"}]
    assert "tenantId" not in out and "deletedAt" not in out
