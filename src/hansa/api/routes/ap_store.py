"""The Agent Protocol's (LangGraph Platform's) store under ``/ap/store``: a tenant's
long-term memory items, as ``langgraph-sdk``'s ``client.store`` reads and writes them
(``store/memory_items.py`` keeps them).

An item is a JSON object under a namespace (a list of labels) and a key. Limits, each
refused with 422 in the error shape (``validation_error`` naming the field, or
``invalid_input`` with ``details.field``):

- a namespace has 1 to ``MAX_LABELS`` (10) labels of 1 to 100 characters, none holding
  ``.`` (the SDK joins them with ``.`` in a GET's query); a search's or listing's prefix
  and suffix have 0 to 10;
- a key has 1 to 200 characters; a value is a JSON object of at most 64 KiB as compact
  JSON (UTF-8);
- a search takes ``limit`` 1 to 100, a listing of namespaces 1 to 1,000; ``offset`` is 0
  to 10,000;
- a tenant keeps at most 10,000 items: putting a new one past that is 422
  ``invalid_input`` (``details.limit``), not 429, since waiting does not help (only
  deleting items, or their expiry, does), as with the tenant's other counted things.

``ttl`` is in minutes, as in LangGraph: the item is absent to every read from then on
(expiry counts from its last put; ``refresh_ttl`` is accepted and ignored, reads do not
extend it). No sweeper deletes expired items: a put of their key replaces them, and a
tenant at its limit loses its expired ones first. ``index`` is accepted and ignored: there
are no embeddings (see ``search_store_items``). Fields of the protocol Hansa has no use
for are accepted and ignored.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, field_validator

from hansa.api.ap_shapes import Count, not_a_bool
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.store import memory_items as items

router = APIRouter(prefix="/ap/store", tags=["agent-protocol"])

MAX_TTL_MINUTES = 10 * 366 * 24 * 60
"""The longest ``ttl``: ten years."""
MAX_OFFSET = items.MAX_ITEMS
"""The largest ``offset``: past it a tenant has no items."""
MAX_QUERY_CHARS = 1_000
_LABEL = f"[^{items.SEPARATOR}]{{1,{items.MAX_LABEL_CHARS}}}"
JOINED_NAMESPACE = f"^{_LABEL}(\\{items.SEPARATOR}{_LABEL}){{0,{items.MAX_LABELS - 1}}}$"
"""A GET's ``namespace``: 1 to ``MAX_LABELS`` labels joined by the separator."""
JOINED_MAX_CHARS = items.MAX_LABELS * (items.MAX_LABEL_CHARS + 1) - 1
"""The longest search ``query``."""


Label = Annotated[
    str,
    Field(
        min_length=1,
        max_length=items.MAX_LABEL_CHARS,
        pattern=r"^[^.]+$",
        description="A label; no '.' (the protocol joins labels with it).",
    ),
]
Namespace = Annotated[
    list[Label], Field(min_length=1, max_length=items.MAX_LABELS, examples=[["users", "ada"]])
]
Prefix = Annotated[list[Label], Field(max_length=items.MAX_LABELS)]
Key = Annotated[str, Field(min_length=1, max_length=items.MAX_KEY_CHARS)]


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PutStoreItem(_In):
    """``PUT /ap/store/items``: store a new item, or a new value of one."""

    namespace: Namespace
    key: Key
    value: dict[str, Any]
    """A JSON object of at most 64 KiB as compact JSON."""
    index: StrictBool | list[str] | None = None
    """Accepted and ignored: there are no embeddings."""
    ttl: float | None = Field(default=None, gt=0, le=MAX_TTL_MINUTES)
    """Minutes until the item expires; none: never. Each put sets it anew."""

    @field_validator("value")
    @classmethod
    def _small(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            size = len(items.value_json(value))
        except ValueError:
            raise ValueError("not JSON (NaN, infinities and lone surrogates are not)") from None
        if size > items.MAX_VALUE_BYTES:
            raise ValueError(f"{size} bytes as JSON; at most {items.MAX_VALUE_BYTES}")
        return value


class DeleteStoreItem(_In):
    """``DELETE /ap/store/items``."""

    namespace: Namespace
    key: Key


class SearchStoreItems(_In):
    """``POST /ap/store/items/search``."""

    namespace_prefix: Prefix = Field(default_factory=list)
    filter: dict[str, Any] | None = None
    """Top-level fields of the value and the values they must equal."""
    limit: Count = Field(default=10, ge=1, le=100)
    offset: Count = Field(default=0, ge=0, le=MAX_OFFSET)
    query: str | None = Field(default=None, max_length=MAX_QUERY_CHARS)
    """Words that must each be in the value's JSON text, whatever their case."""
    refresh_ttl: StrictBool | None = None
    """Accepted and ignored: expiry counts from the last put."""

    @field_validator("filter")
    @classmethod
    def _equality_only(cls, given: dict[str, Any] | None) -> dict[str, Any] | None:
        for field, wanted in (given or {}).items():
            if isinstance(wanted, dict) and any(str(k).startswith("$") for k in wanted):
                raise ValueError(
                    f"{field}: operators ($gt, $ne…) are not supported; a filter is equality"
                )
        return given


class ListStoreNamespaces(_In):
    """``POST /ap/store/namespaces``."""

    prefix: Prefix | None = None
    suffix: Prefix | None = None
    max_depth: (
        Annotated[int, Field(ge=1, le=items.MAX_LABELS), BeforeValidator(not_a_bool)] | None
    ) = None
    limit: Count = Field(default=100, ge=1, le=1_000)
    offset: Count = Field(default=0, ge=0, le=MAX_OFFSET)


class StoreItemOut(BaseModel):
    """An item of the store, as ``langgraph_sdk.schema.Item``."""

    namespace: list[str]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class StoreItemsOut(BaseModel):
    """What a search found, as ``langgraph_sdk.schema.SearchItemsResponse`` (no ``score``:
    there is no ranking)."""

    items: list[StoreItemOut]


class StoreNamespacesOut(BaseModel):
    """Namespaces, as ``langgraph_sdk.schema.ListNamespaceResponse``."""

    namespaces: list[list[str]]


def _out(item: items.Item) -> StoreItemOut:
    return StoreItemOut(
        namespace=list(item.namespace),
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
    )


@router.put("/items", status_code=204, responses=answers(None, status=204, description="Stored"))
async def put_store_item(body: PutStoreItem, services: ServicesDep, tenant: TenantDep) -> Response:
    """Store ``value`` under ``namespace`` and ``key``: a new item, or a new value of the
    item there (its ``created_at`` kept). A new item past the tenant's 10,000, or values
    past its ``HANSA_AP_STORE_MAX_BYTES_PER_TENANT``, is 422 and stores nothing."""
    now = services.clock()
    expires = None if body.ttl is None else now + timedelta(minutes=body.ttl)
    quota = services.settings.ap_store_max_bytes_per_tenant
    await services.db.write(
        lambda conn: items.put(
            conn,
            tenant,
            body.namespace,
            body.key,
            body.value,
            now,
            expires_at=expires,
            max_bytes=quota,
        )
    )
    return Response(status_code=204)


@router.get("/items", responses=answers(StoreItemOut, 404))
async def get_store_item(
    services: ServicesDep,
    tenant: TenantDep,
    namespace: Annotated[
        str,
        Query(
            max_length=JOINED_MAX_CHARS,
            pattern=JOINED_NAMESPACE,
            examples=["users.ada"],
        ),
    ],
    key: Annotated[str, Query(min_length=1, max_length=items.MAX_KEY_CHARS)],
    refresh_ttl: bool | None = None,  # the protocol's; ignored: expiry counts from the put
) -> StoreItemOut:
    """One item; ``namespace`` is its labels joined by ``.``. 404 when there is none, or it
    expired."""
    found = await services.db.read(
        items.get, tenant, namespace.split(items.SEPARATOR), key, services.clock()
    )
    return _out(found)


@router.delete(
    "/items",
    status_code=204,
    responses=answers(None, status=204, description="Deleted, or was not there"),
)
async def delete_store_item(
    body: DeleteStoreItem, services: ServicesDep, tenant: TenantDep
) -> Response:
    """Delete an item. Deleting one that is not there is 204 too, as in LangGraph: the item
    is gone either way (and a retried delete succeeds)."""
    await services.db.write(lambda conn: items.delete(conn, tenant, body.namespace, body.key))
    return Response(status_code=204)


@router.post("/items/search")
async def search_store_items(
    body: SearchStoreItems, services: ServicesDep, tenant: TenantDep
) -> StoreItemsOut:
    """Items whose namespace starts with the labels of ``namespace_prefix`` (whole labels;
    none: every item), most recently updated first, then by key.

    There are no embeddings and no ranking: ``filter`` keeps items whose value has each
    top-level field equal to the value given (JSON equality: ``1`` is ``1.0``, ``true`` is
    no number, objects and lists whole; no ``$gt``-style operators), and ``query`` keeps
    items whose value's JSON text (field names too) holds every word of it as a substring,
    whatever the case.
    """
    found = await services.db.read(
        items.search,
        tenant,
        body.namespace_prefix,
        services.clock(),
        filter=body.filter,
        words=(body.query or "").split(),
        limit=body.limit,
        offset=body.offset,
    )
    return StoreItemsOut(items=[_out(i) for i in found])


@router.post("/namespaces")
async def list_store_namespaces(
    body: ListStoreNamespaces, services: ServicesDep, tenant: TenantDep
) -> StoreNamespacesOut:
    """The namespaces the tenant has items in: those starting with ``prefix`` and ending
    with ``suffix`` (whole labels, matched as given: no ``*`` wildcards), each cut to its
    first ``max_depth`` labels and listed once, in label order."""
    found = await services.db.read(
        items.namespaces,
        tenant,
        services.clock(),
        prefix=body.prefix or (),
        suffix=body.suffix or (),
        max_depth=body.max_depth,
        limit=body.limit,
        offset=body.offset,
    )
    return StoreNamespacesOut(namespaces=[list(n) for n in found])
