"""The description's building blocks, in process (the e2e tests read the live one)."""

from __future__ import annotations

import typing

from hansa.api.app import create_app
from hansa.api.models import events, identity
from hansa.domain import event, principal
from hansa.settings import Settings


def test_a_principals_kinds_are_the_domains() -> None:
    kinds = typing.get_args(identity.PrincipalOut.model_fields["kind"].annotation)
    assert set(kinds) == {k.value for k in principal.Kind}


def test_every_payload_has_its_data_and_event_schema() -> None:
    classes = events.payload_classes()
    assert len(classes) == len(typing.get_args(typing.get_args(event.Payload)[0]))
    schemas = events.schemas()
    for cls in classes:
        assert cls.__name__ in schemas and events.envelope_name(cls) in schemas
    assert set(schemas["Event"]["discriminator"]["mapping"]) == {
        events.event_type(c) for c in classes
    }


def test_the_description_builds_and_names_every_operation_once() -> None:
    spec = create_app(Settings(database_url="sqlite:///:memory:")).openapi()
    ids = [op["operationId"] for ops in spec["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))
    assert not [name for name in spec["components"]["schemas"] if "__" in name], (
        "two models share a name: FastAPI spelled them with their modules"
    )
