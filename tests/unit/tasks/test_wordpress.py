"""WordPressCms against a real local HTTP server playing a WordPress site."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors.wordpress import WordPressCms

sys.path.insert(0, str(Path(__file__).parent))
from fake_wordpress import FakeSite, allowing, closed_port_url, serve  # noqa: E402

PAGE = {"title": "About us", "slug": "about-us", "html": "<p>Hello</p>", "status": "draft"}


@pytest.fixture
def site() -> Iterator[FakeSite]:
    with serve() as running:
        yield running


@pytest.fixture
async def cms(site: FakeSite) -> AsyncIterator[WordPressCms]:
    async with WordPressCms(
        site.base_url, site.username, site.app_password, policy=allowing(site.base_url)
    ) as connector:
        yield connector


@pytest.mark.anyio
async def test_create_get_update_delete_round_trip(cms: WordPressCms, site: FakeSite) -> None:
    created = await cms.create_page(**PAGE, idempotency_key="k1")
    page_id = created["pageId"]
    assert created == {
        "pageId": page_id,
        "title": "About us",
        "slug": "about-us",
        "html": "<p>Hello</p>",
        "status": "draft",
        "url": f"{site.base_url}/about-us/",
        "created": True,
    }

    assert await cms.get_page(page_id) == {k: v for k, v in created.items() if k != "created"}

    updated = await cms.update_page(page_id, html="<p>Bye</p>", status="publish")
    assert (updated["html"], updated["status"], updated["title"]) == (
        "<p>Bye</p>",
        "publish",
        "About us",
    )
    assert (await cms.get_page(page_id))["html"] == "<p>Bye</p>"

    assert await cms.delete_page(page_id) == {"pageId": page_id, "deleted": True}
    assert site.pages == {}


@pytest.mark.anyio
async def test_creating_twice_with_the_same_slug_returns_the_same_page(
    cms: WordPressCms, site: FakeSite
) -> None:
    first = await cms.create_page(**PAGE, idempotency_key="k1")
    again = await cms.create_page(**PAGE, idempotency_key="k1")

    assert again["pageId"] == first["pageId"]
    assert (first["created"], again["created"]) == (True, False)
    assert len(site.pages) == 1
    assert [r for r in site.requests if r.startswith("POST")] == ["POST /wp-json/wp/v2/pages"]


@pytest.mark.anyio
async def test_a_slug_with_spaces_is_looked_up_and_created_as_one_slug(
    cms: WordPressCms, site: FakeSite
) -> None:
    page = await cms.create_page(**{**PAGE, "slug": "About Us"}, idempotency_key="k1")
    again = await cms.create_page(**{**PAGE, "slug": "about us"}, idempotency_key="k1")
    assert page["slug"] == "about-us"
    assert again["pageId"] == page["pageId"]


@pytest.mark.anyio
async def test_update_without_changes_returns_the_page(cms: WordPressCms) -> None:
    created = await cms.create_page(**PAGE, idempotency_key="k1")
    assert (await cms.update_page(created["pageId"]))["title"] == "About us"


@pytest.mark.anyio
async def test_wrong_password_is_permission_denied(site: FakeSite) -> None:
    async with WordPressCms(
        site.base_url, site.username, "wrong", policy=allowing(site.base_url)
    ) as cms:
        with pytest.raises(TaskFailed) as failed:
            await cms.create_page(**PAGE, idempotency_key="k1")
    assert failed.value.code == "permission_denied"
    assert not failed.value.retryable
    assert "refused the credentials (HTTP 401)" in failed.value.message
    assert "invalid application password" in failed.value.message
    assert "wrong" not in failed.value.message
    assert site.pages == {}


@pytest.mark.anyio
async def test_unknown_page_is_not_found(cms: WordPressCms) -> None:
    for call in (cms.get_page("999"), cms.update_page("999", title="x"), cms.delete_page("999")):
        with pytest.raises(TaskFailed) as failed:
            await call
        assert failed.value.code == "not_found"
        assert "page 999 (HTTP 404)" in failed.value.message


@pytest.mark.anyio
async def test_an_id_that_is_not_a_number_never_reaches_the_site(
    cms: WordPressCms, site: FakeSite
) -> None:
    with pytest.raises(TaskFailed) as failed:
        await cms.get_page("../users/1")
    assert failed.value.code == "not_found"
    assert site.requests == []


@pytest.mark.anyio
async def test_server_error_is_a_retryable_site_error(cms: WordPressCms, site: FakeSite) -> None:
    site.fail_with = 500
    with pytest.raises(TaskFailed) as failed:
        await cms.get_page("1")
    assert (failed.value.code, failed.value.retryable) == ("site_error", True)
    assert "HTTP 500" in failed.value.message


@pytest.mark.anyio
async def test_other_client_errors_are_rejected_with_the_sites_message(cms: WordPressCms) -> None:
    with pytest.raises(TaskFailed) as failed:
        await cms.create_page(**{**PAGE, "status": "bogus"}, idempotency_key="k1")
    assert (failed.value.code, failed.value.retryable) == ("rejected", False)
    assert "HTTP 400" in failed.value.message
    assert "Invalid parameter(s): status" in failed.value.message


@pytest.mark.anyio
async def test_a_slow_site_is_a_retryable_timeout(site: FakeSite) -> None:
    site.delay = 0.5
    async with WordPressCms(
        site.base_url,
        site.username,
        site.app_password,
        policy=allowing(site.base_url),
        timeout=0.1,
    ) as cms:
        with pytest.raises(TaskFailed) as failed:
            await cms.get_page("1")
    assert (failed.value.code, failed.value.retryable) == ("timeout", True)


@pytest.mark.anyio
async def test_unreachable_site_is_a_retryable_connection_failure() -> None:
    closed = closed_port_url()
    async with WordPressCms(closed, "editor", "secret", policy=allowing(closed)) as cms:
        with pytest.raises(TaskFailed) as failed:
            await cms.get_page("1")
    assert (failed.value.code, failed.value.retryable) == ("connection_failed", True)
    assert "could not reach the site" in failed.value.message


@pytest.mark.anyio
async def test_an_html_answer_is_a_bad_response(site: FakeSite) -> None:
    async with WordPressCms(
        f"{site.base_url}/blog",
        site.username,
        site.app_password,
        policy=allowing(site.base_url),
    ) as cms:
        with pytest.raises(TaskFailed) as failed:
            await cms.get_page("1")
    assert (failed.value.code, failed.value.retryable) == ("bad_response", False)
    assert "did not answer like a WordPress REST API" in failed.value.message


@pytest.mark.anyio
async def test_a_missing_route_is_not_found_with_the_sites_message(site: FakeSite) -> None:
    async with WordPressCms(
        f"{site.base_url}/gone",
        site.username,
        site.app_password,
        policy=allowing(site.base_url),
    ) as cms:
        with pytest.raises(TaskFailed) as failed:
            await cms.get_page("1")
    assert failed.value.code == "not_found"
    assert "No route was found" in failed.value.message


def test_from_config_names_the_missing_settings() -> None:
    with pytest.raises(TaskFailed) as failed:
        WordPressCms.from_config({"baseUrl": "https://example.com", "username": " "})
    assert failed.value.code == "connector_config"
    assert failed.value.message == (
        "the WordPress connection is missing settings: username, appPassword"
    )


def test_from_config_refuses_an_address_without_a_scheme() -> None:
    config = {"baseUrl": "example.com", "username": "u", "appPassword": "p"}
    with pytest.raises(TaskFailed) as failed:
        WordPressCms.from_config(config)
    assert failed.value.code == "connector_config"


@pytest.mark.anyio
async def test_from_config_builds_a_working_connector(site: FakeSite) -> None:
    config = {
        "baseUrl": f"{site.base_url}/wp-json/",
        "username": site.username,
        "appPassword": site.app_password,
    }
    async with WordPressCms.from_config(config, policy=allowing(site.base_url)) as cms:
        created = await cms.create_page(**PAGE, idempotency_key="k1")
    assert created["pageId"] in {str(page_id) for page_id in site.pages}


@pytest.mark.anyio
async def test_find_pages_by_title_or_address(cms: WordPressCms) -> None:
    about = await cms.create_page(**PAGE, idempotency_key="k1")
    team = await cms.create_page(
        title="Team",
        slug="team",
        html="<p>About us and our team</p>",
        status="publish",
        idempotency_key="k2",
    )

    by_title = await cms.find_pages("ABOUT US")
    assert [p["pageId"] for p in by_title] == [about["pageId"]], "a mention in content is no match"
    assert [p["pageId"] for p in await cms.find_pages("/team")] == [team["pageId"]]
    assert await cms.find_pages("Pricing") == []
