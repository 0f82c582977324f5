"""Finding a project's page or product by the name a user gave it (``runs/lookup.py``),
against a real SQLite database and Hansa's own CMS and shop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hansa.domain.project import ProjectContext
from hansa.engine.runs import Found, find_named
from hansa.engine.runs.store_workspace import StoreWorkspace
from hansa.engine.runtime.services import Services
from hansa.engine.runtime.setup import build_services
from hansa.models.function import FunctionModel
from hansa.settings import Settings
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.tasks.connectors.workspace_cms import PAGES, PRODUCTS, WorkspaceCms, WorkspaceShop

pytestmark = pytest.mark.anyio

HERE = ProjectContext()
"""Hansa's own CMS and shop, no project in focus (the tenant's pages)."""


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/lookup.db")
    built = await build_services(settings, model=FunctionModel(lambda messages, info: "ok"))
    ws = StoreWorkspace(built, T)
    cms = WorkspaceCms(ws, None, PAGES)
    for title in ("About", "Contact Us", "Contact Form Thanks", "Services"):
        slug = title.lower().replace(" ", "-")
        await cms.create_page(
            title=title, slug=slug, html="<p>x</p>", status="draft", idempotency_key=slug
        )
    shop = WorkspaceShop(ws, None, PRODUCTS)
    await shop.create_product(
        name="Softener XL", price="499", description="", status="draft", idempotency_key="p"
    )
    yield built
    await built.models.aclose()
    await built.db.dispose()


async def test_a_page_is_found_by_its_title_or_address_ignoring_case(services: Services) -> None:
    assert await find_named(services, T, HERE, "page", "services") == Found(("Services",))
    assert await find_named(services, T, HERE, "page", "contact-us") == Found(("Contact Us",))


async def test_a_name_whose_words_one_page_holds_is_taken_loosely(services: Services) -> None:
    found = await find_named(services, T, HERE, "page", "thanks")

    assert found.names == ("Contact Form Thanks",) and found.loose


async def test_no_match_or_several_loose_ones_name_what_the_project_has(
    services: Services,
) -> None:
    careers = await find_named(services, T, HERE, "page", "careers")
    contact = await find_named(services, T, HERE, "page", "contact")

    assert careers.names == () and careers.checked and careers.listed
    assert set(careers.known) == {"About", "Contact Us", "Contact Form Thanks", "Services"}
    assert contact.names == (), "two pages hold the word: neither is taken"


async def test_products_are_found_in_the_workspace_shop(services: Services) -> None:
    assert (await find_named(services, T, HERE, "product", "softener xl")).names == ("Softener XL",)
    missing = await find_named(services, T, HERE, "product", "Softener Mega")
    assert missing.names == () and missing.known == ("Softener XL",)


async def test_what_hansa_cannot_read_is_not_looked_up(services: Services) -> None:
    for kind in ("menu", "form"):
        assert not (await find_named(services, T, HERE, kind, "main")).checked
    shop = HERE.model_copy(update={"config": {"woocommerce": {"baseUrl": "https://x.test"}}})
    assert not (await find_named(services, T, shop, "product", "Softener XL")).checked
