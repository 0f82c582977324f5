"""Where a connector's changes land (tasks/connectors/targets.py), for every task type that
names one: never a shop for a page, never "<platform> at <domain>" for a workspace page."""

from __future__ import annotations

import pytest

from hansa.domain.project import ProjectContext
from hansa.tasks.connectors.targets import target
from hansa.tasks.registry import default_registry

LANDING = sorted(t.name for t in default_registry().all() if t.lands_via is not None)


def _project(**fields: object) -> ProjectContext:
    return ProjectContext.model_validate(
        {"project_id": "p1", "project_name": "Aquaverter", "project_domain": "aquaverter.ca"}
        | fields
    )


def test_the_task_types_that_change_pages_or_products_name_their_connector() -> None:
    assert LANDING == ["create_page", "create_product", "delete_page", "update_content_block"]


@pytest.mark.parametrize("name", LANDING)
@pytest.mark.parametrize(
    ("fields", "where", "draft", "said"),
    [
        ({"cms_platform": "hansa"}, "workspace", False, "Hansa's workspace, where Aquaverter's"),
        ({}, "workspace", False, "Hansa's workspace, where Aquaverter's"),
        (
            {"cms_platform": "wordpress"},
            "workspace",
            True,
            "Hansa's workspace, as a draft for Aquaverter (not on its live site)",
        ),
        (
            {"cms_platform": "wordpress", "config": {"wordpress": {}, "woocommerce": {}}},
            "site",
            False,
            "the live ",
        ),
        (
            {"project_id": None, "project_name": None},
            "workspace",
            True,
            "Hansa's workspace, outside",
        ),
    ],
)
def test_each_landing_type_s_target(
    name: str, fields: dict[str, object], where: str, draft: bool, said: str
) -> None:
    connector = default_registry().get(name).lands_via
    assert connector is not None
    found = target(_project(**fields), connector)
    assert (found.where, found.draft) == (where, draft)
    assert found.said.startswith(said)
    assert "shop" not in found.said or connector == "shop"
    assert " at aquaverter.ca" not in found.said or found.where == "site"
    assert (found.reason is not None) == draft


def test_the_reason_names_what_is_not_connected_and_who_chose_the_workspace() -> None:
    unset = _project(cms_platform="wordpress")
    assert target(unset, "cms").reason == "Aquaverter's WordPress site is not connected to Hansa"
    assert target(unset, "shop").reason == "Aquaverter's shop is not connected to Hansa"
    chosen = _project(cms_platform="wordpress", config={"workspaceDrafts": True})
    assert target(chosen, "cms").reason == (
        "Aquaverter's WordPress site is not connected to Hansa; the project drafts its "
        "changes here until it is"
    )
    connected = _project(cms_platform="wordpress", config={"wordpress": {"baseUrl": "x"}})
    assert target(unset, "cms", workspace=True).reason == (
        "Aquaverter's WordPress site is not connected to Hansa; you chose to draft it here"
    )
    assert target(connected, "cms", workspace=True).reason == "you chose to draft it here"
    shopify = _project(cms_platform="Shopify")
    assert target(shopify, "cms").missing == "Shopify site"
    assert target(connected, "cms").details() == {
        "where": "site",
        "draft": False,
        "said": "the live WordPress site at aquaverter.ca",
    }
