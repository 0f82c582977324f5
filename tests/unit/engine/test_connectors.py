"""A task's connectors: chosen from the project's config, secrets opened, clients closed."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cryptography.fernet import Fernet

from hansa import errors
from hansa.domain.project import ProjectContext
from hansa.engine.runs.connectors import check_config, connectors_for
from hansa.settings import Settings
from hansa.store import secrets

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tasks"))
from fake_wordpress import serve  # noqa: E402

KEY = Fernet.generate_key().decode()


@pytest.mark.anyio
async def test_sealed_secrets_reach_the_site_and_the_clients_close_after() -> None:
    with serve() as site:
        port = site.base_url.rsplit(":", 1)[1]
        settings = Settings(outbound_allow=f"127.0.0.1:{port}", secret_key=KEY)
        services: Any = SimpleNamespace(settings=settings, stdio_servers={})
        config = secrets.box(KEY).seal(
            {
                "wordpress": {
                    "baseUrl": site.base_url,
                    "username": site.username,
                    "appPassword": site.app_password,
                },
                "woocommerce": {
                    "baseUrl": site.base_url,
                    "consumerKey": site.consumer_key,
                    "consumerSecret": site.consumer_secret,
                },
            }
        )
        project = ProjectContext(project_id="p1", config=config)
        async with connectors_for(services, "t1", project) as found:
            page = await found["cms"].create_page(
                title="T", slug="t", html="<p>x</p>", status="draft", idempotency_key="k"
            )
            product = await found["shop"].create_product(
                name="Mug", price="1.00", description="", status="draft", idempotency_key="k2"
            )
        assert page["created"] and product["created"], "the opened secrets were accepted"
        with pytest.raises(RuntimeError, match="closed"):
            await found["cms"].get_page(page["pageId"])
        with pytest.raises(RuntimeError, match="closed"):
            await found["shop"].get_product(product["productId"])


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"wordpress": {"baseUrl": "http://127.0.0.1:8617/internal/admin?x="}}, "wordpress"),
        ({"woocommerce": {"baseUrl": "https://u:p@shop.example"}}, "woocommerce"),
        ({"wordpress": {"baseUrl": "https://s.example/#x"}}, "wordpress"),
        ({"wordpress": {"baseUrl": "javascript:alert(1)"}}, "wordpress"),
        ({"wordpress": {"baseUrl": 7}}, "wordpress"),
        ({"wordpress": "https://s.example"}, "wordpress"),
    ],
)
def test_a_site_address_that_could_steer_requests_is_refused(
    config: dict[str, Any], field: str
) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        check_config(config)
    assert caught.value.details["field"].startswith(f"config.{field}")
    assert "8617" not in caught.value.message and "u:p" not in caught.value.message


def test_plain_site_addresses_pass() -> None:
    check_config({"wordpress": {"baseUrl": "https://s.example/blog/"}, "other": {"x": "?"}})
    check_config({"woocommerce": {"baseUrl": "http://127.0.0.1:8080", "consumerKey": "ck"}})
