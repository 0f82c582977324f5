from pathlib import Path

import pytest

from hansa import errors
from hansa.domain.agent import Category
from hansa.engine.roster import default_roster, load_config, roster_from_config


def test_default_roster_is_seed_000s_fourteen_agents_hans_first() -> None:
    roster = default_roster()
    assert len(roster) == 14
    assert roster[0].id == "chief" and roster[0].display_name == "Hans"
    assert roster[0].category is Category.SUPERVISOR
    names = {a.id: a.display_name for a in roster}
    assert names["growthLead"] == "Growth Lead Dana"
    assert names["webEngineer"] == "Web Engineer Nico"
    assert names["creativeLead"] == "Creative Lead Mak"
    assert len({a.id for a in roster}) == 14


def test_config_overrides_and_adds_agents(tmp_path: Path) -> None:
    path = tmp_path / "hansa.toml"
    path.write_text(
        '[agents.growthLead]\ndisplay_name = "Growth Lead Gina"\n'
        '[agents.legalAgent]\ndisplay_name = "Legal Agent Lou"\nrole = "Legal Agent"\n'
        'role_summary = "Checks terms."\ncategory = "utility"\n'
    )
    roster = roster_from_config(load_config(path))
    names = {a.id: a.display_name for a in roster}
    assert names["growthLead"] == "Growth Lead Gina"
    assert names["legalAgent"] == "Legal Agent Lou"
    assert roster[0].id == "chief"


def test_invalid_agent_config_names_the_agent(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="legalAgent"):
        roster_from_config({"agents": {"legalAgent": {"display_name": "Lou"}}})


def test_unreadable_config_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[agents\n")
    with pytest.raises(errors.ConfigError):
        load_config(path)
