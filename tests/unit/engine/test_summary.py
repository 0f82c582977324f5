"""Hans's final message: what was done, with links, and what the reviews found."""

from __future__ import annotations

from typing import Any

from factories import make_run, make_task
from hansa.domain import run
from hansa.engine.runs.summary import FINDINGS_SHOWN, compose
from hansa.tasks.builtin.audit import audit_html

NAMES = {"chief": "Hans", "webEngineer": "Web Engineer Nico"}
GOOD_PAGE = (
    "<!doctype html><title>Services</title>"
    '<meta name="description" content="Web design, hosting and care plans for small '
    'businesses in Ottawa, from one team.">'
    "<h1>Services</h1><h2>Design</h2><p>" + "We design clear, fast websites. " * 60 + "</p>"
    '<p><a href="/contact">Contact us</a> or <a href="/pricing">see pricing</a>.</p>'
)


RUN = make_run(
    id="r1", conversation_id="c", title="Create the Services page", status=run.RunStatus.COMPLETED
)


def _task(i: int, by: str, summary: str, result: dict[str, Any] | None) -> run.Task:
    return make_task(
        RUN,
        id=f"t{i}",
        step_group="ABC"[min(i, 2)],
        sequence_order=i,
        created_by=by,
        status=run.TaskStatus.COMPLETED,
        task_type="x",
        summary=summary,
        result=result,
        attempts=1,
    )


def _page_and_review(html: str) -> tuple[list[run.Task], dict[str, Any]]:
    url = "/api/workspace/pages/p1"
    review = {"url": url, **audit_html("Services", html)}
    tasks = [
        _task(0, "webEngineer", "Create the Services page", {"url": url}),
        _task(1, "chief", "Review the new Services page", review),
    ]
    return tasks, review


def test_the_reviews_findings_reach_the_user_most_severe_first() -> None:
    tasks, review = _page_and_review("<title>Services</title><p>Too short.</p>")
    assert review["findings"], "a bare page has findings"

    text, _ = compose(RUN, tasks, NAMES)

    lines = text.splitlines()
    count = len(review["findings"])
    assert f"- Hans: Review the new Services page — score {review['score']}/100, {count} " in text
    assert "- Web Engineer Nico: Create the Services page — /api/workspace/pages/p1" in lines
    listed = lines[lines.index("The review found:") + 1 :]
    order = {"error": 0, "warning": 1, "info": 2}
    expected = sorted(review["findings"], key=lambda f: order[f["severity"]])
    assert count <= FINDINGS_SHOWN
    assert listed == [f"{i}. {f['message']}" for i, f in enumerate(expected, 1)]
    assert listed[0].endswith(
        next(f["message"] for f in review["findings"] if f["severity"] == "error")
    )


def test_at_most_FINDINGS_SHOWN_findings_are_listed() -> None:
    first, review = _page_and_review("<title>Services</title><p>Too short.</p>")
    second = _task(2, "chief", "Review the About page", {**review, "url": "/about"})
    total = 2 * len(review["findings"])
    assert total > FINDINGS_SHOWN

    text, _ = compose(RUN, [*first, second], NAMES)

    lines = text.splitlines()
    listed = lines[lines.index("The review found:") + 1 :]
    assert len(listed) == FINDINGS_SHOWN + 1
    assert listed[-1] == f"… and {total - FINDINGS_SHOWN} more in the run card."


def test_a_clean_review_says_so() -> None:
    tasks, review = _page_and_review(GOOD_PAGE)
    assert review["findings"] == [], review["findings"]

    text, _ = compose(RUN, tasks, NAMES)

    assert text.endswith("The review found nothing to fix.")
    assert f"score {review['score']}/100, 0 findings" in text


def test_a_run_without_a_review_has_no_findings_section() -> None:
    tasks = [_task(0, "webEngineer", "Create the Services page", {"url": "/p"})]

    text, facts = compose(RUN, tasks, NAMES)

    assert "review" not in text.lower()
    assert facts == {"completed": 1, "failed": 0, "cancelled": 0, "discrepancies": 0}


def test_a_discrepancy_found_on_reading_back_is_not_reported_as_done() -> None:
    lost = "the page 7 is not there when read back (the site has no page 7 (HTTP 404))"
    validation = {"checked": True, "discrepancies": [lost]}
    tasks = [
        _task(0, "webEngineer", "Create the Services page", {"url": "/p", "validation": validation})
    ]

    text, facts = compose(RUN, tasks, NAMES)

    lines = text.splitlines()
    assert not text.startswith("Done")
    assert (
        lines[0]
        == "Finished, but not as planned: Create the Services page. Here is what the team did:"
    )
    assert f"- Create the Services page: {lost}" in lines
    assert facts["discrepancies"] == 1


def test_a_failed_run_offers_to_undo_what_completed() -> None:
    failed_run = RUN.model_copy(update={"status": run.RunStatus.FAILED})
    done = _task(0, "webEngineer", "Create the Services page", {"url": "/p"})
    broken = _task(1, "chief", "Review the page", None).model_copy(
        update={"status": run.TaskStatus.FAILED, "error": "no page"}
    )

    offered, _ = compose(failed_run, [done, broken], NAMES, undoable=1)
    silent, _ = compose(failed_run, [done, broken], NAMES)

    assert "press Undo on the run card" in offered.splitlines()[-1]
    assert "Undo" not in silent
