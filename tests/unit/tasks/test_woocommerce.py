"""WooCommerceShop against a real local HTTP server playing a WooCommerce shop."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors.woocommerce import WooCommerceShop

sys.path.insert(0, str(Path(__file__).parent))
from fake_wordpress import FakeSite, allowing, closed_port_url, serve  # noqa: E402

PRODUCT = {"name": "Blue mug", "price": "12.50", "description": "<p>Holds tea.</p>"}


@pytest.fixture
def site() -> Iterator[FakeSite]:
    with serve() as running:
        yield running


@pytest.fixture
async def shop(site: FakeSite) -> AsyncIterator[WooCommerceShop]:
    async with WooCommerceShop(
        site.base_url, site.consumer_key, site.consumer_secret, policy=allowing(site.base_url)
    ) as connector:
        yield connector


@pytest.mark.anyio
async def test_create_get_delete_round_trip(shop: WooCommerceShop, site: FakeSite) -> None:
    created = await shop.create_product(**PRODUCT, status="publish", idempotency_key="run1-t2")
    product_id = created["productId"]
    assert created == {
        "productId": product_id,
        "name": "Blue mug",
        "status": "publish",
        "url": f"{site.base_url}/product/{product_id}/",
        "price": "12.50",
        "sku": "run1-t2",
        "created": True,
    }
    assert site.products[int(product_id)]["description"] == "<p>Holds tea.</p>"
    assert await shop.get_product(product_id) == {
        k: v for k, v in created.items() if k != "created"
    }

    assert await shop.delete_product(product_id) == {"productId": product_id, "deleted": True}
    assert site.products == {}
    with pytest.raises(TaskFailed) as failed:
        await shop.get_product(product_id)
    assert failed.value.code == "not_found"


@pytest.mark.anyio
async def test_creating_twice_with_the_same_key_returns_the_same_product(
    shop: WooCommerceShop, site: FakeSite
) -> None:
    first = await shop.create_product(**PRODUCT, status="draft", idempotency_key="k1")
    again = await shop.create_product(**PRODUCT, status="draft", idempotency_key="k1")
    other = await shop.create_product(**PRODUCT, status="draft", idempotency_key="k2")

    assert again["productId"] == first["productId"] != other["productId"]
    assert (first["created"], again["created"]) == (True, False)
    assert len(site.products) == 2


@pytest.mark.anyio
async def test_concurrent_attempts_with_one_key_make_one_product(
    shop: WooCommerceShop, site: FakeSite
) -> None:
    results: list[dict[str, Any]] = []

    async def attempt() -> None:
        results.append(await shop.create_product(**PRODUCT, status="draft", idempotency_key="k1"))

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(attempt)

    assert len({r["productId"] for r in results}) == 1
    assert len(site.products) == 1


@pytest.mark.anyio
async def test_wrong_secret_is_permission_denied(site: FakeSite) -> None:
    async with WooCommerceShop(
        site.base_url, site.consumer_key, "cs_wrong", policy=allowing(site.base_url)
    ) as shop:
        with pytest.raises(TaskFailed) as failed:
            await shop.create_product(**PRODUCT, status="draft", idempotency_key="k1")
    assert (failed.value.code, failed.value.retryable) == ("permission_denied", False)
    assert "consumer key and secret" in failed.value.message
    assert "Consumer secret is invalid." in failed.value.message
    assert site.products == {}


@pytest.mark.anyio
async def test_unknown_product_is_not_found(shop: WooCommerceShop) -> None:
    with pytest.raises(TaskFailed) as failed:
        await shop.delete_product("999")
    assert failed.value.code == "not_found"
    assert "product 999 (HTTP 404)" in failed.value.message


@pytest.mark.anyio
async def test_server_error_is_a_retryable_site_error(
    shop: WooCommerceShop, site: FakeSite
) -> None:
    site.fail_with = 503
    with pytest.raises(TaskFailed) as failed:
        await shop.create_product(**PRODUCT, status="draft", idempotency_key="k1")
    assert (failed.value.code, failed.value.retryable) == ("site_error", True)
    assert "HTTP 503" in failed.value.message


@pytest.mark.anyio
async def test_invalid_status_is_rejected_with_the_shops_message(shop: WooCommerceShop) -> None:
    with pytest.raises(TaskFailed) as failed:
        await shop.create_product(**PRODUCT, status="bogus", idempotency_key="k1")
    assert (failed.value.code, failed.value.retryable) == ("rejected", False)
    assert "Invalid parameter(s): status" in failed.value.message


@pytest.mark.anyio
async def test_unreachable_shop_is_a_retryable_connection_failure() -> None:
    closed = closed_port_url()
    async with WooCommerceShop(closed, "ck", "cs", policy=allowing(closed)) as shop:
        with pytest.raises(TaskFailed) as failed:
            await shop.delete_product("1")
    assert (failed.value.code, failed.value.retryable) == ("connection_failed", True)


def test_from_config_names_the_missing_settings() -> None:
    with pytest.raises(TaskFailed) as failed:
        WooCommerceShop.from_config({"baseUrl": "https://shop.example.com"})
    assert failed.value.code == "connector_config"
    assert failed.value.message == (
        "the WooCommerce connection is missing settings: consumerKey, consumerSecret"
    )


@pytest.mark.anyio
async def test_from_config_builds_a_working_connector(site: FakeSite) -> None:
    config = {
        "baseUrl": site.base_url,
        "consumerKey": site.consumer_key,
        "consumerSecret": site.consumer_secret,
    }
    async with WooCommerceShop.from_config(config, policy=allowing(site.base_url)) as shop:
        created = await shop.create_product(**PRODUCT, status="draft", idempotency_key="k1")
    assert created["sku"] == "k1"
