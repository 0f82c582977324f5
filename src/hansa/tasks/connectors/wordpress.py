"""WordPress pages over the REST API (``/wp-json/wp/v2/pages``) and an application password.

``WordPressRest`` is the authenticated transport, shared with the WooCommerce
connector because WooCommerce serves its API from the same WordPress site. It
goes through the outbound guard (``outbound.OutboundClient``: vetted addresses,
no redirects, capped bodies; a loopback or private site only when
``HANSA_OUTBOUND_ALLOW`` lists it), sends HTTP Basic credentials over https only
(unless the site is listed there too) and turns every failure into a
``TaskFailed`` a user can read: HTTP 401/403 is ``permission_denied``, 404
``not_found``, any other 4xx ``rejected`` (with a short, cleaned excerpt of
WordPress's ``message``); 429 and 5xx are ``site_error``, no answer in time
``timeout`` and no connection ``connection_failed``, all three retryable; a
redirect is ``connector_config``, a refused target ``outbound_denied`` and a
success that is not JSON ``bad_response``.

Idempotency: WordPress core keeps no idempotency key on a page, so
``WordPressCms.create_page`` uses the slug instead. It first looks the slug up
among pages of any status; when one exists it returns that page (with
``created: False``) instead of creating a duplicate. That makes a retried
creation safe, but it also adopts a page that was on the site before the task:
an undo that deletes only ``created: True`` pages never removes such a page (at
the price of keeping one whose first creation's answer was lost).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from hansa.domain.secrets import mask_text
from hansa.tasks.base import CmsConnector, Result, TaskFailed, page_slug
from hansa.tasks.connectors.outbound import Closing, OutboundClient, OutboundPolicy, Reply

_DETAIL_LIMIT = 120
_UNPRINTABLE = re.compile(r"[^\x20-\x7e\u00a0-\uffff]")


def required_settings(config: Mapping[str, Any], keys: tuple[str, ...], system: str) -> list[str]:
    """The values of ``keys`` in a connector's config, in order.

    Raises:
        TaskFailed: ``connector_config``, naming every key that is missing or empty.
    """
    missing = [k for k in keys if not isinstance(config.get(k), str) or not config[k].strip()]
    if missing:
        raise TaskFailed(
            f"the {system} connection is missing settings: {', '.join(missing)}",
            code="connector_config",
        )
    return [str(config[k]).strip() for k in keys]


def site_problem(base_url: str) -> str | None:
    """What is wrong with a site address, or None when it is ``http(s)://host[:port][/path]``.

    No user info (credentials have settings of their own), no query or fragment, nothing
    a request could be steered with. The address itself is never quoted back.
    """
    text = base_url.strip()
    if any(c.isspace() or not c.isprintable() or c == "\\" for c in text):
        return "must not contain spaces, control characters or backslashes"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (parsing it is the check: a bad port raises)
    except ValueError:
        return "is not a valid address"
    if parts.scheme not in ("http", "https"):
        return "must start with https:// (or http://)"
    if "@" in parts.netloc:
        return "must not carry a user name or password (the connection has settings for them)"
    if "?" in text or "#" in text:
        return "must not carry a query (?…) or a fragment (#…)"
    if not parts.hostname:
        return "names no host"
    if ".." in parts.path.split("/"):
        return "must not climb out of its path (..)"
    return None


def check_id(value: str, thing: str) -> str:
    """``value`` if it is a numeric WordPress id; keeps odd ids out of the URL path."""
    if not value.isdigit():
        raise TaskFailed(f"{value!r} is not a {thing} id on this site", code="not_found")
    return value


class WordPressRest:
    """An authenticated client for one WordPress site's REST API (``<site>/wp-json/``).

    Args:
        base_url: The site's root address, e.g. ``https://example.com``.
        username: The Basic-auth user (a WordPress user name or a WooCommerce consumer key).
        password: The Basic-auth secret (an application password or a consumer secret).
        credentials: What the credentials are called, for messages ("consumer key and secret").
        policy: What the outbound guard admits (by default: public https sites only).
        timeout: Seconds to wait for each request.

    Raises:
        TaskFailed: ``connector_config`` when the address is not a plain site address.
    """

    def __init__(
        self,
        base_url: str,
        username: str,
        password: str,
        *,
        credentials: str,
        policy: OutboundPolicy | None = None,
        timeout: float = 15,
    ) -> None:
        problem = site_problem(base_url)
        if problem is not None:
            raise TaskFailed(f"the site address {problem}", code="connector_config")
        self.base_url = base_url.strip().rstrip("/").removesuffix("/wp-json")
        """The site root, without a trailing slash."""
        self._auth = (username, password)
        self._credentials = credentials
        self._timeout = timeout
        self._client = OutboundClient(policy or OutboundPolicy(), timeout=timeout)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()

    async def fetch_one(self, method: str, route: str, what: str, **kwargs: Any) -> dict[str, Any]:
        """Send a request whose answer is one JSON object (see ``request``)."""
        data = await self.request(method, route, what, **kwargs)
        if not isinstance(data, dict):
            raise self._bad_response()
        return data

    async def fetch_many(self, method: str, route: str, what: str, **kwargs: Any) -> list[Any]:
        """Send a request whose answer is a JSON list (see ``request``)."""
        data = await self.request(method, route, what, **kwargs)
        if not isinstance(data, list):
            raise self._bad_response()
        return data

    async def request(
        self,
        method: str,
        route: str,
        what: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Mapping[str, Any] | None = None,
    ) -> Any:
        """Send ``method`` to ``<site>/wp-json/<route>`` and return the decoded JSON answer.

        Args:
            method: The HTTP method.
            route: The path under ``/wp-json/``, e.g. ``wp/v2/pages/12``.
            what: What the route names, for a 404 message ("page 12").
            params: Query parameters.
            json: A JSON body.

        Raises:
            TaskFailed: With a code listed in this module's docstring.
        """
        url = f"{self.base_url}/wp-json/{route}"
        try:
            response = await self._client.send(
                method, url, params=params, json=json, auth=self._auth
            )
        except httpx.TimeoutException as exc:
            raise TaskFailed(
                f"the site {self.base_url} did not answer within {self._timeout:g} seconds",
                code="timeout",
                retryable=True,
            ) from exc
        except httpx.TransportError as exc:
            raise TaskFailed(
                f"could not reach the site at {self.base_url} ({type(exc).__name__})",
                code="connection_failed",
                retryable=True,
            ) from exc
        if not response.is_success:
            raise self._failure(response, what)
        try:
            return response.json()
        except ValueError as exc:
            raise self._bad_response() from exc

    def _failure(self, response: Reply, what: str) -> TaskFailed:
        status = response.status_code
        detail = _detail(response)
        said = f"; the site said: {detail}" if detail else ""
        if status in (401, 403):
            return TaskFailed(
                f"the site refused the credentials (HTTP {status}); check the "
                f"{self._credentials} and that the account may do this{said}",
                code="permission_denied",
            )
        if status == 404:
            return TaskFailed(f"the site has no {what} (HTTP 404){said}", code="not_found")
        if status == 429 or status >= 500:
            trouble = "is busy" if status == 429 else "had an internal error"
            return TaskFailed(
                f"the site {trouble} (HTTP {status}); try again later{said}",
                code="site_error",
                retryable=True,
            )
        if status < 400:
            return TaskFailed(
                f"the site redirects its API elsewhere (HTTP {status}); "
                "set the connection's address to the site's final address",
                code="connector_config",
            )
        return TaskFailed(f"the site rejected the request (HTTP {status}){said}", code="rejected")

    def _bad_response(self) -> TaskFailed:
        return TaskFailed(
            f"{self.base_url} did not answer like a WordPress REST API; "
            "check that the connection's address is the site's root",
            code="bad_response",
        )


def _detail(response: Reply) -> str:
    """A short excerpt of WordPress's ``message`` field, as plain printable text with any
    credential it names masked; nothing for a non-JSON error page. What a site answers is
    not ours to pass on whole: it ends up in events and in the panel."""
    try:
        message = response.json().get("message")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(message, str):
        return ""
    text = " ".join(_UNPRINTABLE.sub(" ", re.sub(r"<[^>]*>?", " ", message)).split())
    text = text if len(text) <= _DETAIL_LIMIT else f"{text[:_DETAIL_LIMIT]}…"
    return mask_text(text)


def _text(field: Any) -> str:
    """A title/content field: the raw source in ``context=edit`` answers, else the rendering."""
    if isinstance(field, dict):
        return str(field.get("raw", field.get("rendered", "")))
    return "" if field is None else str(field)


def _page(data: dict[str, Any]) -> Result:
    return {
        "pageId": str(data.get("id", "")),
        "title": _text(data.get("title")),
        "slug": str(data.get("slug", "")),
        "html": _text(data.get("content")),
        "status": str(data.get("status", "")),
        "url": str(data.get("link", "")),
    }


class RestConnector(Closing):
    """Lifecycle shared by the connectors built on ``WordPressRest``."""

    _rest: WordPressRest

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._rest.aclose()


class WordPressCms(RestConnector, CmsConnector):
    """Pages of a WordPress site, through its REST API and an application password.

    Args:
        base_url: The site's root address, e.g. ``https://example.com``.
        username: The WordPress user the application password belongs to.
        app_password: The application password (Users → Profile → Application Passwords).
        policy: What the outbound guard admits (by default: public https sites only).
        timeout: Seconds to wait for each request.
    """

    def __init__(
        self,
        base_url: str,
        username: str,
        app_password: str,
        *,
        policy: OutboundPolicy | None = None,
        timeout: float = 15,
    ) -> None:
        self._rest = WordPressRest(
            base_url,
            username,
            app_password,
            credentials="user name and application password",
            policy=policy,
            timeout=timeout,
        )

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], *, policy: OutboundPolicy | None = None
    ) -> WordPressCms:
        """Build from a project's ``{"baseUrl", "username", "appPassword"}`` settings.

        Raises:
            TaskFailed: ``connector_config``, naming the missing settings.
        """
        base_url, username, app_password = required_settings(
            config, ("baseUrl", "username", "appPassword"), "WordPress"
        )
        return cls(base_url, username, app_password, policy=policy)

    async def create_page(
        self, *, title: str, slug: str, html: str, status: str, idempotency_key: str
    ) -> Result:
        """Create a page, or return the page already on ``slug`` (see the module docstring).

        Returns:
            The page (``pageId, title, slug, html, status, url``) and ``created``.
        """
        # WordPress reads commas and spaces in ?slug= as a list of slugs: keep it one slug.
        slug = "-".join(slug.replace(",", " ").lower().split())
        found = await self._rest.fetch_many(
            "GET",
            "wp/v2/pages",
            f"page at /{slug}",
            params={"slug": slug, "status": "any", "context": "edit"},
        )
        if found and isinstance(found[0], dict):
            return {**_page(found[0]), "created": False}
        body = {"title": title, "slug": slug, "content": html, "status": status}
        page = await self._rest.fetch_one("POST", "wp/v2/pages", "pages API", json=body)
        return {**_page(page), "created": True}

    async def get_page(self, page_id: str) -> Result:
        """The page ``{pageId, title, slug, html, status, url}``."""
        route = f"wp/v2/pages/{check_id(page_id, 'page')}"
        page = await self._rest.fetch_one(
            "GET", route, f"page {page_id}", params={"context": "edit"}
        )
        return _page(page)

    async def find_pages(self, name: str) -> list[Result]:
        """Pages at the address ``name`` makes, and pages WordPress finds searching for it whose
        title is ``name`` (ignoring case); any status."""
        found: dict[str, Result] = {}
        queries = ({"slug": page_slug(name)}, {"search": name.strip()[:100]})
        for query in queries:
            if not next(iter(query.values())):
                continue
            pages = await self._rest.fetch_many(
                "GET",
                "wp/v2/pages",
                f"pages matching “{name}”",
                params={**query, "status": "any", "context": "edit"},
            )
            for page in (_page(p) for p in pages if isinstance(p, dict)):
                if "slug" in query or page["title"].casefold() == name.strip().casefold():
                    found.setdefault(page["pageId"], page)
        return list(found.values())

    async def update_page(
        self,
        page_id: str,
        *,
        html: str | None = None,
        title: str | None = None,
        status: str | None = None,
    ) -> Result:
        """Change the given fields of the page; returns the page."""
        changes = {"content": html, "title": title, "status": status}
        body = {key: value for key, value in changes.items() if value is not None}
        if not body:
            return await self.get_page(page_id)
        route = f"wp/v2/pages/{check_id(page_id, 'page')}"
        return _page(await self._rest.fetch_one("POST", route, f"page {page_id}", json=body))

    async def delete_page(self, page_id: str) -> Result:
        """Delete the page for good, skipping the trash; returns ``{pageId, deleted: True}``."""
        route = f"wp/v2/pages/{check_id(page_id, 'page')}"
        await self._rest.fetch_one("DELETE", route, f"page {page_id}", params={"force": "true"})
        return {"pageId": page_id, "deleted": True}
