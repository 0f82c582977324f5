from datetime import UTC, datetime

from hansa.domain import run
from hansa.engine.runs.append import next_group
from hansa.engine.runs.one_shot import details


def test_the_next_group_sorts_after_the_last() -> None:
    assert next_group("A") == "B"
    assert next_group("Y") == "Z"
    assert next_group("Z") == "ZA" and "Z" < "ZA" < "ZB"
    assert next_group("ZZ") == "ZZA"
    groups = ["A", "Z"]
    for _ in range(5):
        groups.append(next_group(groups[-1]))
    assert groups == sorted(groups)


def _task(result: dict) -> run.Task:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return run.Task(
        id="t",
        run_id="r",
        conversation_id="c",
        project_id=None,
        parent_task_id=None,
        step_group="A",
        sequence_order=0,
        created_by="webEngineer",
        status=run.TaskStatus.COMPLETED,
        task_type="create_page",
        parameters={},
        summary="s",
        is_reversible_by_system=True,
        irreversible_confirmed_at=None,
        confirmed_hash=None,
        attempts=1,
        scheduled_at=None,
        result=result,
        error=None,
        created_at=now,
        updated_at=now,
        metadata={},
    )


def test_details_carry_the_seeds_cms_id() -> None:
    wordpress = details(_task({"pageId": "4551", "url": "https://aquaverter.ca/services"}))
    assert wordpress == {"pageId": "4551", "cmsId": 4551, "url": "https://aquaverter.ca/services"}
    workspace = details(_task({"pageId": "01HZX", "url": "/api/workspace/pages/01HZX"}))
    assert workspace["cmsId"] == "01HZX"
    assert details(_task({"ticketId": "T-1"})) == {"ticketId": "T-1"}
