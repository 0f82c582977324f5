"""A named service's URL for a path stays on its host; its unattended methods are its own;
a graph naming a service the tenant has not configured is refused, naming the field."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hansa.domain import graph
from hansa.domain.service import Service, same_origin

NOW = datetime(2026, 11, 27, tzinfo=UTC)


def _service(**extra: object) -> Service:
    fields: dict[str, object] = {
        "id": "s1",
        "tenant_id": "acme",
        "name": "logging",
        "base_url": "https://logs.example/api/",
        "headers": {},
        "unattended_methods": ["POST"],
        "created_at": NOW,
        "updated_at": NOW,
        **extra,
    }
    return Service.model_validate(fields)


def test_a_path_is_joined_to_the_base_url() -> None:
    assert _service().url("/logs/query") == "https://logs.example/api/logs/query"
    assert _service().url(None) == "https://logs.example/api"


@pytest.mark.parametrize(
    ("url", "same"),
    [
        ("https://logs.example/api/x", True),
        ("https://logs.example:443/elsewhere", False),  # a port written out is another origin
        ("https://logs.example@evil.example/x", False),
        ("http://logs.example/api/x", False),
        ("https://logs.example.evil.example/x", False),
        ("https://[::1/", False),
    ],
)
def test_same_origin_tells_a_path_that_leaves_the_host(url: str, same: bool) -> None:
    assert same_origin("https://logs.example/api", url) is same


def test_only_the_listed_methods_are_unattended() -> None:
    service = _service(unattended_methods=["GET", "POST"])
    assert service.unattended("POST") and service.unattended("GET")
    assert not service.unattended("DELETE")


def _body(service: str) -> dict[str, object]:
    node = {"service": service, "method": "GET", "path": "/x"}
    return {"name": "g", "components": [{"id": "a", "type": "service.call", "config": node}]}


def test_a_graph_naming_an_unknown_service_is_refused_at_its_field() -> None:
    (problem,) = graph.problems(_body("nowhere"), [], 10, {"logging"})
    assert problem.code is graph.Code.UNKNOWN_SERVICE
    assert problem.field == "components[0].config.service" and problem.node == "a"
    assert "logging" in problem.message, "the services the tenant has are named"
    assert graph.problems(_body("logging"), [], 10, {"logging"}) == []
    assert graph.problems(_body("nowhere"), [], 10) == [], "no list given: not checked"
