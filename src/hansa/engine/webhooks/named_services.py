"""Store, change and forget a tenant's named services (``/api/services``).

The base URL is checked as a site address (``http(s)://host[:port][/path]``, no user info,
query or fragment) and by the outbound guard's own rules (a private or loopback address only
when ``HANSA_OUTBOUND_ALLOW`` lists it). Headers are sealed at rest like every stored secret
(``HANSA_SECRET_KEY``) and shown masked; a header sent back as ``***`` keeps its stored
value. Every refusal is 422 naming its field, and writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import secrets
from hansa.domain.base import new_id
from hansa.domain.service import MAX_HEADERS, Method, Service
from hansa.engine import runs
from hansa.engine.runtime.services import Services
from hansa.engine.webhooks import targets
from hansa.store import services as rows
from hansa.tasks.connectors.wordpress import site_problem

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}")


async def _checked_url(services: Services, base_url: str) -> str:
    url = base_url.strip()
    problem = site_problem(url)
    if problem is not None:
        raise errors.InvalidInput(f"baseUrl {problem}", details={"field": "baseUrl"})
    try:
        await targets.check(runs.outbound_policy(services), url)
    except errors.InvalidInput as exc:
        why = exc.message.split(": ", 1)[-1]
        raise errors.InvalidInput(f"baseUrl refused: {why}", details={"field": "baseUrl"}) from None
    return url


def _checked_headers(headers: Mapping[str, str], kept: Mapping[str, str]) -> dict[str, str]:
    """``headers`` to store: each name a header name, no line breaks in a value; a value
    sent back as ``***`` keeps the one stored (``kept``), and is refused if none is."""
    if len(headers) > MAX_HEADERS:
        raise errors.InvalidInput(
            f"a service sends at most {MAX_HEADERS} headers", details={"field": "headers"}
        )
    out: dict[str, str] = {}
    for name, value in headers.items():
        field = f"headers.{name}"
        if not _HEADER_NAME.fullmatch(name):
            raise errors.InvalidInput(f"{field!r} is not a header name", details={"field": field})
        if "\r" in value or "\n" in value:
            raise errors.InvalidInput(f"{field} holds a line break", details={"field": field})
        if value == secrets.MASK:
            if name not in kept:
                raise errors.InvalidInput(
                    f"{field} is {secrets.MASK}, which keeps a stored value, and none is stored",
                    details={"field": field},
                )
            value = kept[name]
        out[name] = value
    return out


def _sealed(services: Services, headers: dict[str, str]) -> dict[str, str]:
    sealed: dict[str, str] = runs.secret_box(services).seal({"headers": headers})["headers"]
    return sealed


def _credentials(headers: Mapping[str, str]) -> list[str]:
    """The names of the headers that hold a credential (shown masked)."""
    masked = secrets.mask({"headers": dict(headers)})["headers"]
    return [k for k, v in masked.items() if v == secrets.MASK and headers[k] != secrets.MASK]


def shown(service: Service) -> Service:
    """``service`` as the API shows it: credentials in its headers masked."""
    return service.model_copy(
        update={"headers": secrets.mask({"headers": service.headers})["headers"]}
    )


async def create(
    services: Services,
    tenant_id: str,
    name: str,
    base_url: str,
    headers: Mapping[str, str],
    unattended_methods: Sequence[Method],
) -> Service:
    """Store a new service (409 when the tenant has one of that name)."""
    url = await _checked_url(services, base_url)
    now = services.clock()
    made = Service(
        id=new_id(),
        tenant_id=tenant_id,
        name=name,
        base_url=url,
        headers=_sealed(services, _checked_headers(headers, {})),
        unattended_methods=list(dict.fromkeys(unattended_methods)),
        created_at=now,
        updated_at=now,
    )
    limit = services.settings.max_services_per_tenant

    def store(conn: Connection) -> None:
        if rows.count(conn, tenant_id) >= limit:
            setting = "HANSA_MAX_SERVICES_PER_TENANT"
            raise errors.InvalidInput.past_limit(limit, "services", setting, "name")
        rows.create(conn, made)

    await services.db.write(store)
    return made


async def change(
    services: Services, tenant_id: str, name: str, patch: Mapping[str, Any]
) -> Service:
    """Change what ``patch`` gives of ``baseUrl``, ``headers`` (the whole set, ``***``
    keeping a stored value) and ``unattendedMethods``. Stored credentials never follow a
    new ``baseUrl``: with one, they must be sent again (422 ``headers``), so that whoever
    may change a service cannot send its credentials to an address of their choosing."""
    for key, field in (("base_url", "baseUrl"), ("headers", "headers")):
        if key in patch and patch[key] is None:
            raise errors.InvalidInput(
                f"{field} cannot be null: leave it out to keep it", details={"field": field}
            )
    current = await services.db.read(lambda conn: rows.get(conn, tenant_id, name))
    update: dict[str, Any] = {"updated_at": services.clock()}
    moved = False
    if "base_url" in patch:
        update["base_url"] = await _checked_url(services, patch["base_url"])
        moved = update["base_url"] != current.base_url
    credentials = _credentials(current.headers)
    if moved and credentials and "headers" not in patch:
        raise errors.InvalidInput(
            f"headers: the stored credentials ({', '.join(credentials)}) do not follow a new "
            "baseUrl; send them again with it",
            details={"field": "headers"},
        )
    if "headers" in patch:
        opened = runs.secret_box(services).open({"headers": current.headers})["headers"]
        kept = {k: v for k, v in opened.items() if not moved or k not in credentials}
        update["headers"] = _sealed(services, _checked_headers(patch["headers"], kept))
    if "unattended_methods" in patch:
        update["unattended_methods"] = list(dict.fromkeys(patch["unattended_methods"]))
    changed = current.model_copy(update=update)
    await services.db.write(lambda conn: rows.replace(conn, changed))
    return changed


async def delete(services: Services, tenant_id: str, name: str) -> None:
    """Forget a service: graphs and rules naming it fail ``unknown_service`` from now on."""
    await services.db.write(lambda conn: rows.delete(conn, tenant_id, name))
