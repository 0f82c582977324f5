"""The error body every refusal has, and ``answers``: a route's documented responses."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Self

from pydantic import AfterValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema

from hansa.domain import secrets
from hansa.domain.base import Wire


class Out(Wire):
    """An answer of the API: built from the domain object it shows (``Out.of(obj)`` reads
    its attributes), returned by the route, which FastAPI documents, checks and writes from
    this one model; the Python client reads the same model back from the JSON.

    ``answer["createdAt"]`` reads a field by its wire name (or its Python name), as
    ``hansa.client``'s answers were read when they were plain dicts."""

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def of(cls, obj: Any) -> Self:
        """The answer that shows ``obj``, read by attribute name: a field named otherwise on
        the wire has the attribute's name and the wire's as alias (a lookup by the camelCase
        alias first would miss on every field, slowly, on a pydantic model)."""
        return cls.model_validate(obj, by_alias=False, by_name=True)

    def __getitem__(self, key: str) -> Any:
        fields = type(self).model_fields
        if key in fields:
            return getattr(self, key)
        for name, field in fields.items():
            if field.alias == key:
                return getattr(self, name)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        fields = type(self).model_fields
        return key in fields or any(f.alias == key for f in fields.values())


Time = Annotated[
    datetime,
    PlainSerializer(datetime.isoformat, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
"""A time as these answers have always written it (``isoformat``: ``+00:00``, not ``Z``)."""
Masked = Annotated[dict[str, Any], AfterValidator(secrets.mask)]
"""A config, parameters, a result or metadata: every secret in it shows as ``***``. The
one place an answer masks them (``domain/secrets.py``; masking twice changes nothing)."""
MaskedText = Annotated[str, AfterValidator(secrets.mask_text)]
"""A summary or an error: the credentials it carries show as ``***``."""


class ErrorInfo(Wire):
    """What went wrong, for a program (``code``) and for a person (``message``)."""

    code: str = Field(examples=["not_found"])
    """A snake_case code (``not_found``, ``validation_error``, ``rate_limited``…)."""
    message: str
    """A sentence saying what was wrong and, where it helps, what to do."""
    details: dict[str, Any]
    """More about it: ``field`` (the input at fault), ``errors`` (every invalid field),
    ``reason`` (why the database is unavailable), ``problems`` (a graph's)…"""


class ErrorBody(Wire):
    """``{"error": {"code", "message", "details"}}``: every 4xx and 5xx answer."""

    error: ErrorInfo


ERRORS: dict[int, str] = {
    400: "Bad input: a NUL character in the path, query or body (`nul_character`), JSON "
    "nested too deep (`json_too_deep`), a bad cursor",
    401: "No API key, or one that is unknown or revoked (`unauthenticated`)",
    403: "The key's role may not do this (`forbidden`), the law of allowed scope refuses it "
    "(`scope_denied`), or a browser request from another site (`origin_denied`)",
    404: "No such id for this tenant (another tenant's ids are not found either)",
    409: "The object is not in a state that allows this (`conflict`, …), or a request with "
    "the same `Idempotency-Key` is still running",
    413: "The request body is larger than the server takes (`body_too_large`)",
    422: "Invalid input: malformed JSON (`malformed_json`), a field that is missing or of the "
    "wrong type (`validation_error`, every one in `details.errors`), a value the route "
    "refuses (`invalid_input`, with `details.field`)",
    429: "Too many requests or live streams (`rate_limited`); `Retry-After` says when to retry",
    501: "A part of a protocol Hansa does not do (`not_supported`); the message names what "
    "to do instead",
    503: "The database cannot take work now (`database_unavailable`, `details.reason`); "
    "`Retry-After` says when to retry",
    504: "The turn is still running after `HANSA_CHAT_TIMEOUT_SECONDS` (`turn_timeout`); it "
    "goes on, and `details` names its conversation and turn to follow it",
}
"""What each error status means here; every one is answered with ``ErrorBody``."""


def error_response(status: int) -> dict[str, Any]:
    """The OpenAPI response object of an error status (its schema a reference)."""
    return {
        "description": ERRORS[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }


def answers(
    model: Any = None, *errors: int, status: int = 200, description: str | None = None
) -> dict[int | str, dict[str, Any]]:
    """A route's ``responses=``: its success (``model``, at ``status``) and the error statuses
    particular to it (those every route may answer are added by ``api/openapi.py``)."""
    out: dict[int | str, dict[str, Any]] = {}
    if model is not None:
        out[status] = {"model": model, "description": description or "Success"}
    elif description is not None:
        out[status] = {"description": description}
    for code in errors:
        out[code] = {"model": ErrorBody, "description": ERRORS[code]}
    return out


def stated(**schema: Any) -> Callable[[dict[str, Any]], None]:
    """A ``json_schema_extra`` that states a parameter's schema as ``schema``, for a value the
    route parses itself (with its own error, which its type must not pre-empt)."""

    def state(found: dict[str, Any]) -> None:
        for key in ("anyOf", "type", "pattern", "minLength", "maxLength"):
            found.pop(key, None)
        found.update(schema)

    return state


def never_null(schema: dict[str, Any]) -> None:
    """A model's ``json_schema_extra`` for a PATCH body whose fields may be left out but not
    sent as null: the description drops their ``null``."""
    for prop in schema.get("properties", {}).values():
        options = prop.get("anyOf")
        if not options:
            continue
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1:
            del prop["anyOf"]
            prop.update(kept[0])
        else:
            prop["anyOf"] = kept
        if prop.get("default", ...) is None:
            del prop["default"]
