"""``/openapi.json`` as client generators read it (issue 33 item 11), on the real server.

``openapi-python-client`` names a model by its schema's title and drops an operation whose
models would share one (``duplicate models with name "ConditionGroup"``: the rules
operations lost their types); a header an operation does not declare, a generated client
cannot send (``Idempotency-Key``).
"""

from __future__ import annotations

from typing import Any

import test_openapi

from harness import Server

spec = test_openapi.spec  # the description as the server gives it (a module's fixture)

REF = "#/components/schemas/"


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def test_no_two_schemas_share_a_title_and_every_reference_resolves(spec: dict[str, Any]) -> None:
    schemas: dict[str, Any] = spec["components"]["schemas"]
    titles: dict[str, str] = {}
    for name, schema in schemas.items():
        title = schema.get("title", name)
        assert title not in titles, f"{name} and {titles[title]} are both titled {title!r}"
        titles[title] = name
        assert not name.endswith(("-Input", "-Output")), name
    for ref in _refs(spec):
        assert ref.startswith(REF) and ref.removeprefix(REF) in schemas, ref


def test_the_rules_operations_keep_their_condition_types(spec: dict[str, Any]) -> None:
    rules = spec["paths"]["/api/rules"]
    sent = rules["post"]["requestBody"]["content"]["application/json"]["schema"]
    answered = rules["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    schemas = spec["components"]["schemas"]
    taken = _refs(schemas[sent["$ref"].removeprefix(REF)])
    given = _refs(schemas[answered["$ref"].removeprefix(REF)])

    assert f"{REF}ConditionGroupInput" in taken and f"{REF}ConditionGroupOutput" in given
    assert schemas["ConditionGroupInput"]["title"] == "ConditionGroupInput"
    assert schemas["ConditionGroupOutput"]["properties"] == (
        schemas["ConditionGroupInput"]["properties"] | schemas["ConditionGroupOutput"]["properties"]
    ), "one model, seen from its two sides"


def test_every_post_declares_its_idempotency_key_and_the_server_honours_it(
    server: Server, spec: dict[str, Any]
) -> None:
    posts = [(p, ops["post"]) for p, ops in spec["paths"].items() if "post" in ops]
    assert len(posts) > 50
    for path, operation in posts:
        (key,) = [p for p in operation.get("parameters", []) if p["name"] == "Idempotency-Key"]
        assert key["in"] == "header" and key["required"] is False, path
        assert key["schema"]["type"] == "string" and key["schema"]["maxLength"] == 200, path

    with server.client() as client:
        body = {"title": "Once"}
        sent = [
            client.post("/api/conversations", json=body, headers={"Idempotency-Key": "k-1"})
            for _ in range(2)
        ]
        other = client.post(
            "/api/conversations", json={"title": "Twice"}, headers={"Idempotency-Key": "k-1"}
        )
    assert sent[0].status_code == 201 and sent[0].json()["id"] == sent[1].json()["id"]
    assert other.status_code == 422
