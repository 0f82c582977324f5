"""Built-in task types through the real server: workspace entities, content blocks,
products and audits (the WordPress connector: test_outside_systems.py)."""

from __future__ import annotations

import httpx

from harness import Server, events_until, execute_task, new_conversation


def test_workspace_entities_form_a_tree_with_edges_and_report_operations(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        root = execute_task(
            client,
            cid,
            "fileAgent",
            "entity.create",
            {"entityType": "document", "name": "Brand book"},
        )
        first = execute_task(
            client,
            cid,
            "fileAgent",
            "entity.create",
            {"entityType": "document", "name": "Colours", "parentId": root["entityId"]},
        )
        second = execute_task(
            client,
            cid,
            "fileAgent",
            "entity.create",
            {"entityType": "document", "name": "Fonts", "parentId": root["entityId"]},
        )
        goal = execute_task(
            client,
            cid,
            "fileAgent",
            "entity.create",
            {"entityType": "goal", "name": "Consistent brand", "fields": {"due": "Q1"}},
        )
        edge = execute_task(
            client,
            cid,
            "fileAgent",
            "entity.link",
            {"fromId": root["entityId"], "toId": goal["entityId"], "relation": "supports"},
        )
        execute_task(
            client,
            cid,
            "fileAgent",
            "entity.update",
            {"entityId": goal["entityId"], "patch": {"due": "Q2"}},
        )
        read = execute_task(client, cid, "fileAgent", "entity.read", {"entityId": goal["entityId"]})
        events = _log(client, cid)
    assert (first["position"], second["position"]) == (0, 1), "children keep their order"
    assert first["parentId"] == root["entityId"]
    assert edge["edgesCreated"][0]["relation"] == "supports"
    assert read["entity"]["data"] == {"due": "Q2"}
    operations = [e["data"]["name"] for e in events if e["type"] == "operation"]
    assert "create document “Colours”: success" in operations
    assert "update goal “Consistent brand”: success" in operations
    patches = [e["data"] for e in events if e["type"] == "entity_patch"]
    assert {"entity": "goal", "entityId": goal["entityId"], "patch": {"due": "Q2"}} in patches


def _log(client: httpx.Client, cid: str) -> list[dict]:
    last = client.get(f"/api/conversations/{cid}").json()["lastSeq"]
    return events_until(client, cid, lambda e: e["seq"] == last)


def test_content_blocks_products_and_audits(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        page = execute_task(
            client,
            cid,
            "webEngineer",
            "create_page",
            {
                "title": "Pricing",
                "slug": "pricing",
                "contentHtml": '<h1>Pricing</h1><section data-block="plans">old</section>',
            },
        )
        execute_task(
            client,
            cid,
            "webEngineer",
            "update_content_block",
            {"pageId": page["pageId"], "blockId": "plans", "html": "<p>Basic 9 €</p>"},
        )
        html = client.get(page["url"]).text
        product = execute_task(
            client,
            cid,
            "ecommerceSpecialist",
            "create_product",
            {"name": "Softener XL", "price": "499.00"},
        )
        audit = execute_task(client, cid, "seoSpecialist", "run_audit", {"pageId": page["pageId"]})
        taken = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "webEngineer",
                "taskType": "create_page",
                "parameters": {"title": "Again", "slug": "pricing", "contentHtml": "<p>x</p>"},
            },
        ).json()
    assert '<section data-block="plans"><p>Basic 9 €</p></section>' in html and "old" not in html
    assert product["productId"] and product["url"]
    assert {f["code"] for f in audit["findings"]} >= {"missing_meta_description", "thin_content"}
    assert taken["status"] == "failed" and taken["details"]["error"]["code"] == "slug_taken"


def test_products_are_served_as_products_and_pages_as_pages(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        product = execute_task(
            client,
            cid,
            "ecommerceSpecialist",
            "create_product",
            {"name": "Softener <XL>", "price": "499.00", "description": "For <big> homes"},
        )
        page = execute_task(
            client,
            cid,
            "webEngineer",
            "create_page",
            {"title": "Plans", "slug": "plans-served", "contentHtml": "<p>Plans</p>"},
        )
        shown = client.get(product["url"])
        crossed = [
            client.get(f"/api/workspace/pages/{product['productId']}").status_code,
            client.get(f"/api/workspace/products/{page['pageId']}").status_code,
        ]
    assert product["url"] == f"/api/workspace/products/{product['productId']}"
    assert shown.status_code == 200
    assert "<h1>Softener &lt;XL&gt;</h1><p>499.00</p><p>For &lt;big&gt; homes</p>" in shown.text
    assert shown.headers["content-security-policy"].startswith("sandbox;")
    assert crossed == [404, 404]
