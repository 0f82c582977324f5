"""WooCommerce products over its REST API (``/wp-json/wc/v3/products``).

Requests are signed with a REST API consumer key and secret sent as HTTP Basic
credentials, which WooCommerce accepts over HTTPS only (plain HTTP would need
OAuth 1.0a signatures, which this connector does not do). Failures map to
``TaskFailed`` exactly as for WordPress pages (see ``wordpress.WordPressRest``).

Idempotency: the task's idempotency key is the product's SKU. ``create_product``
looks the SKU up first and returns the product already holding it (with
``created: False``); WooCommerce refuses a second product with the same SKU, so
two attempts racing each other still end with one product. The SKU is visible
to shop staff and, depending on the theme, to customers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hansa.tasks.base import Result, ShopConnector, TaskFailed
from hansa.tasks.connectors.outbound import OutboundPolicy
from hansa.tasks.connectors.wordpress import (
    RestConnector,
    WordPressRest,
    check_id,
    required_settings,
)


def _product(data: dict[str, Any]) -> Result:
    return {
        "productId": str(data.get("id", "")),
        "name": str(data.get("name", "")),
        "status": str(data.get("status", "")),
        "url": str(data.get("permalink", "")),
        "price": str(data.get("regular_price", "")),
        "sku": str(data.get("sku", "")),
    }


class WooCommerceShop(RestConnector, ShopConnector):
    """Products of a WooCommerce shop, through its REST API and a consumer key.

    Args:
        base_url: The WordPress site's root address, e.g. ``https://shop.example.com``.
        consumer_key: The REST API consumer key (``ck_…``), with read/write access.
        consumer_secret: Its consumer secret (``cs_…``).
        policy: What the outbound guard admits (by default: public https sites only).
        timeout: Seconds to wait for each request.
    """

    def __init__(
        self,
        base_url: str,
        consumer_key: str,
        consumer_secret: str,
        *,
        policy: OutboundPolicy | None = None,
        timeout: float = 15,
    ) -> None:
        self._rest = WordPressRest(
            base_url,
            consumer_key,
            consumer_secret,
            credentials="consumer key and secret",
            policy=policy,
            timeout=timeout,
        )

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], *, policy: OutboundPolicy | None = None
    ) -> WooCommerceShop:
        """Build from a project's ``{"baseUrl", "consumerKey", "consumerSecret"}`` settings.

        Raises:
            TaskFailed: ``connector_config``, naming the missing settings.
        """
        base_url, key, secret = required_settings(
            config, ("baseUrl", "consumerKey", "consumerSecret"), "WooCommerce"
        )
        return cls(base_url, key, secret, policy=policy)

    async def create_product(
        self, *, name: str, price: str, description: str, status: str, idempotency_key: str
    ) -> Result:
        """Create a product whose SKU is ``idempotency_key``, or return the one holding it.

        Returns:
            The product (``productId, name, status, url, price, sku``) and ``created``.
        """
        # WooCommerce reads commas in ?sku= as a list of SKUs.
        sku = idempotency_key.replace(",", "-")
        found = await self._find(sku)
        if found is not None:
            return {**_product(found), "created": False}
        body = {
            "name": name,
            "regular_price": price,
            "description": description,
            "status": status,
            "sku": sku,
        }
        try:
            product = await self._rest.fetch_one(
                "POST", "wc/v3/products", "products API", json=body
            )
        except TaskFailed as exc:
            # Another attempt may have taken the SKU between our lookup and this request.
            if exc.code == "rejected" and (found := await self._find(sku)) is not None:
                return {**_product(found), "created": False}
            raise
        return {**_product(product), "created": True}

    async def get_product(self, product_id: str) -> Result:
        """The product ``{productId, name, status, url, price, sku}``."""
        route = f"wc/v3/products/{check_id(product_id, 'product')}"
        return _product(await self._rest.fetch_one("GET", route, f"product {product_id}"))

    async def delete_product(self, product_id: str) -> Result:
        """Delete the product for good (no trash); returns ``{productId, deleted: True}``."""
        route = f"wc/v3/products/{check_id(product_id, 'product')}"
        await self._rest.fetch_one(
            "DELETE", route, f"product {product_id}", params={"force": "true"}
        )
        return {"productId": product_id, "deleted": True}

    async def _find(self, sku: str) -> dict[str, Any] | None:
        found = await self._rest.fetch_many(
            "GET",
            "wc/v3/products",
            f"product with SKU {sku}",
            params={"sku": sku, "status": "any"},
        )
        matches = [p for p in found if isinstance(p, dict) and p.get("sku") == sku]
        return matches[0] if matches else None
