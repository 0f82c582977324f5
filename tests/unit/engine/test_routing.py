import pytest

from hansa import errors
from hansa.domain.routing import RoutingRule
from hansa.engine.roster import default_roster
from hansa.engine.routing import DEFAULT_RULES, Router, rules_from_config

AGENTS = {a.id for a in default_roster()}


@pytest.fixture
def router() -> Router:
    return Router(DEFAULT_RULES, AGENTS)


@pytest.mark.parametrize(
    ("text", "agent"),
    [
        ("What is the delivery date?", "deliveryLead"),
        ("Show me the project timeline", "deliveryLead"),
        ("Our client is unhappy", "clientSuccess"),
        ("Update the account owner", "clientSuccess"),
        ("Refresh our brand", "creativeLead"),
        ("Make the visuals bolder", "creativeLead"),
        ("We need a creative idea", "creativeLead"),
        ("Please improve our SEO traffic", "growthLead"),
        ("Run Google ads", "growthLead"),
        ("Plan a new campaign", "growthLead"),
        ("Move our hosting", "technicalLead"),
        ("The server is slow", "technicalLead"),
        ("Renew the SSL certificate", "technicalLead"),
        ("Set up the CRM integration", "technicalLead"),
        ("Create a new page called Services", "webEngineer"),
        ("Please create a new webpage called Services", "webEngineer"),
        ("Write a blog post", "webEngineer"),
        ("Change the template", "webEngineer"),
        ("Try a two-column layout", "webEngineer"),
    ],
)
def test_each_keyword_family_routes_to_its_agent(router: Router, text: str, agent: str) -> None:
    decision = router.decide(text, "chief")
    assert decision.agent_id == agent
    assert decision.rule_id is not None and decision.matched


def test_rules_apply_in_seed_order(router: Router) -> None:
    # "delivery" comes before "page" in seed 000's determineAgent
    assert router.decide("delivery date for the page", "chief").agent_id == "deliveryLead"


def test_whole_words_fix_the_seed_substring_misfire(router: Router) -> None:
    decision = router.decide("Where do my uploads go?", "chief")
    assert decision.agent_id == "chief"
    assert decision.rule_id is None


def test_no_match_keeps_the_active_agent(router: Router) -> None:
    decision = router.decide("hello there", "webEngineer")
    assert decision.agent_id == "webEngineer"
    assert not decision.changed


def test_plural_endings_match(router: Router) -> None:
    assert router.decide("Our clients want updates", "chief").agent_id == "clientSuccess"


def test_config_rules_replace_the_defaults() -> None:
    rules = rules_from_config(
        {
            "routing": {
                "rules": [
                    {"id": "r", "target": "fileAgent", "reason": "files", "pattern": r"\bpdf\b"}
                ]
            }
        }
    )
    router = Router(rules, AGENTS)
    assert router.decide("attach the PDF", "chief").agent_id == "fileAgent"
    assert router.decide("improve SEO", "chief").agent_id == "chief"


def test_rule_for_unknown_agent_is_a_config_error() -> None:
    with pytest.raises(errors.ConfigError, match="unknown agents"):
        Router((RoutingRule(id="x", target="nobody", reason="r", keywords=("x",)),), AGENTS)


def test_bad_pattern_is_a_config_error() -> None:
    with pytest.raises(errors.ConfigError, match="bad pattern"):
        Router((RoutingRule(id="x", target="chief", reason="r", pattern="("),), AGENTS)


def test_catastrophic_pattern_times_out_instead_of_hanging() -> None:
    slow = RoutingRule(id="slow", target="fileAgent", reason="r", pattern=r"(a+)+$")
    router = Router((slow, *DEFAULT_RULES), AGENTS)
    decision = router.decide("a" * 40 + "! seo", "chief")
    assert decision.agent_id == "growthLead"


def test_keep_runs_no_rule_and_records_the_reason(router: Router) -> None:
    kept = router.keep("webEngineer", "the message answers the plan")
    assert (kept.agent_id, kept.previous_agent_id) == ("webEngineer", "webEngineer")
    assert (kept.rule_id, kept.matched, kept.reason) == (None, None, "the message answers the plan")
    assert router.keep(None, "why").agent_id == "chief", "with no active agent, Hans keeps it"
