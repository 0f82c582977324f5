import pytest

from hansa import errors
from hansa.domain.project import ProjectContext
from hansa.engine import laws
from hansa.engine.roster import default_roster
from hansa.tasks.registry import default_registry

AGENTS = {a.id: a for a in default_roster()}
REGISTRY = default_registry()
OPEN = ProjectContext(project_id="p1", project_name="Aquaverter")


def test_a_task_the_project_does_not_allow_is_refused_by_scope() -> None:
    locked = ProjectContext(
        project_id="p1", project_name="Aquaverter", allowed_task_types=("create_ticket",)
    )
    verdict = laws.judge(
        REGISTRY,
        "create_page",
        {"title": "T", "slug": "t", "contentHtml": "x"},
        AGENTS["webEngineer"],
        locked,
    )
    assert "law of allowed scope" in verdict.scope_refusal and "Aquaverter" in verdict.scope_refusal
    with pytest.raises(laws.ScopeDenied):
        verdict.raise_for_refusal()


def test_an_agent_without_the_capability_is_refused_by_scope() -> None:
    verdict = laws.judge(REGISTRY, "delete_page", {"pageId": "x"}, AGENTS["researchAgent"], OPEN)
    assert "Research Agent Rui" in verdict.scope_refusal and "cms_pages" in verdict.scope_refusal


def test_missing_parameters_are_named_never_guessed() -> None:
    verdict = laws.judge(REGISTRY, "create_page", {"title": "T"}, AGENTS["webEngineer"], OPEN)
    assert sorted(verdict.missing) == ["contentHtml", "slug"]
    with pytest.raises(laws.MissingParameters) as caught:
        verdict.raise_for_refusal()
    assert sorted(caught.value.details["missing"]) == ["contentHtml", "slug"]


def test_step_references_are_allowed_at_plan_time_and_resolved_later() -> None:
    params = {"title": "T", "slug": "t", "contentHtml": "{{copy.html}}"}
    verdict = laws.judge(
        REGISTRY, "create_page", params, AGENTS["webEngineer"], OPEN, resolved=False
    )
    verdict.raise_for_refusal()  # neither scope nor clarity refuses it
    assert verdict.scope_refusal is None and not verdict.missing and not verdict.invalid
    resolved = laws.resolve_refs(params, {"copy": {"html": "<p>hi</p>"}})
    assert resolved["contentHtml"] == "<p>hi</p>"
    embedded = laws.resolve_refs({"x": "a {{s.n}} b"}, {"s": {"n": 3}})
    assert embedded == {"x": "a 3 b"}
    with pytest.raises(errors.InvalidInput, match="law of clarity"):
        laws.resolve_refs(params, {"copy": {}})


def test_reversibility_comes_from_the_task_type_and_its_parameters() -> None:
    agent = AGENTS["notificationAgent"]
    vetted = frozenset({("x.org", 443)})
    get = laws.judge(
        REGISTRY,
        "webhook.call",
        {"url": "https://x.org", "method": "GET"},
        agent,
        OPEN,
        trusted=vetted,
    )
    post = laws.judge(
        REGISTRY,
        "webhook.call",
        {"url": "https://x.org", "method": "POST"},
        agent,
        OPEN,
        trusted=vetted,
    )
    assert get.reversible and not post.reversible
    delete = laws.judge(REGISTRY, "delete_page", {"pageId": "p"}, AGENTS["webEngineer"], OPEN)
    assert not delete.reversible
    assert any(c["law"] == "no_return" and "confirmation" in c["reason"] for c in delete.checks)


def _get(params: dict[str, object], trusted: frozenset[tuple[str, int]]) -> laws.Verdict:
    return laws.judge(
        REGISTRY,
        "webhook.call",
        {"method": "GET", **params},
        AGENTS["notificationAgent"],
        OPEN,
        resolved=False,
        trusted=trusted,
    )


@pytest.mark.parametrize(
    "params",
    [
        {"url": "https://hooks.example.com/ping?d={{audit.html}}"},
        {"url": "https://hooks.example.com/{{ copy.slug }}"},
        {"url": "https://hooks.example.com/ping", "headers": {"X-Data": "{{audit.score}}"}},
    ],
)
def test_a_get_carrying_an_earlier_result_needs_confirmation(params: dict[str, object]) -> None:
    verdict = _get(params, frozenset({("hooks.example.com", 443)}))
    assert verdict.missing == () and verdict.invalid == ()
    assert not verdict.reversible, "what a GET sends in its address leaves for good"
    assert any(c["law"] == "no_return" and "confirmation" in c["reason"] for c in verdict.checks)


def test_a_get_to_a_target_the_operator_did_not_vet_needs_confirmation() -> None:
    url = {"url": "https://hooks.example.com:8443/ping"}
    assert _get(url, frozenset({("hooks.example.com", 8443)})).reversible
    assert not _get(url, frozenset()).reversible
    assert not _get(url, frozenset({("hooks.example.com", 443)})).reversible, "another port"
    assert not _get({"url": "http://93.184.215.14/ping"}, frozenset()).reversible


def test_a_get_the_guard_refuses_outright_sends_nothing_and_stays_reversible() -> None:
    for url in ("http://169.254.169.254/latest", "http://127.0.0.1:9/x", "http://2130706433/"):
        assert _get({"url": url}, frozenset()).reversible, url
