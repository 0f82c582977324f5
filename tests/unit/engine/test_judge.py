"""The laws' inputs, assembled once (``runs/judge.py``): the agent from the tenant's
directory, the project's context, the vetted targets; a real SQLite database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import Connection

from hansa.engine.runs.judge import Judge, UnknownAgent
from hansa.engine.runtime.services import Services
from hansa.engine.runtime.setup import build_services
from hansa.models.function import FunctionModel
from hansa.settings import Settings
from hansa.store.db import DEFAULT_TENANT_ID as T

pytestmark = pytest.mark.anyio

PAGE = {"title": "T", "slug": "t", "contentHtml": "{{copy.html}}"}


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/judge.db")
    built = await build_services(settings, model=FunctionModel(lambda messages, info: "ok"))
    yield built
    await built.models.aclose()
    await built.db.dispose()


async def test_a_task_is_judged_for_the_agent_and_project_it_names(services: Services) -> None:
    def judge(conn: Connection) -> tuple[bool, str, str | None]:
        judged = Judge(services, conn, T).task(
            "create_page", PAGE, "webEngineer", None, resolved=False
        )
        judged.verdict.raise_for_refusal()  # a step reference is fine at plan time
        return judged.verdict.reversible, judged.agent.id, judged.project.project_id

    assert await services.db.read(judge) == (True, "webEngineer", None)


async def test_an_unknown_agent_is_refused_naming_the_tasks_field(services: Services) -> None:
    def judge(conn: Connection) -> None:
        Judge(services, conn, T).task("create_page", PAGE, "nobody", None)

    with pytest.raises(UnknownAgent) as caught:
        await services.db.read(judge)
    assert caught.value.details == {"field": "createdByAgentId"}
    assert caught.value.message == "unknown agent 'nobody'"


async def test_the_scope_law_reads_the_agent_from_the_directory(services: Services) -> None:
    def judge(conn: Connection) -> str | None:
        verdict = (
            Judge(services, conn, T)
            .task("delete_page", {"pageId": "x"}, "researchAgent", None)
            .verdict
        )
        return verdict.scope_refusal

    refusal = await services.db.read(judge)
    assert refusal is not None and "cms_pages" in refusal
