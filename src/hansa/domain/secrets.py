"""Which values are secrets, and how every surface shows them: as ``***``, never in clear.

Secrets are write-only. One rule serves the API, events, thinking entries, logs and the
command line:

- a value is secret when its key names a credential: ``appPassword``, ``consumerKey``,
  ``consumerSecret``, ``Authorization``, ``Cookie``, ``X-Api-Key``, ``access_token``… (see
  :func:`is_secret_name`), at any depth of a project's config or a task's parameters, and
  the ``value`` of a ``{"name": …, "value": …}`` pair with such a name (shown masked only:
  such a pair is not sealed at rest);
- a header's value is secret unless the header is a plain one (``Content-Type``,
  ``Accept``, ``User-Agent``…: :func:`is_secret_header`): under a ``headers`` key, in a
  mapping or a list of ``{"name", "value"}`` pairs. Services name their credential headers
  freely (``X-Auth-Key``, ``Ocp-Apim-Subscription-Key``…), so no list of names keeps up;
- in a URL, the user info (``https://user:pass@host``) and the values of query or fragment
  parameters with such names (``?api_key=…``, ``&sig=…``, and ``?code=…``, which Azure
  Functions and OAuth use) are secret;
- in free text, ``name=value`` pairs with such names, ``Bearer``/``Basic`` credentials and
  the URLs it holds are masked the same way.

A secret inside a URL's path (some services put one there) cannot be told apart from a
page's address and is not masked.

Pure functions: no I/O and no cryptography (sealing at rest is ``store/secrets.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote_plus

from hansa import errors

MASK = "***"
"""What a secret looks like on every surface; sent back unchanged, it keeps the stored one."""

_EXACT = frozenset(
    {
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "jwt",
        "key",
        "pass",
        "passwd",
        "pwd",
        "sig",
        "setcookie",
    }
)
_SUFFIXES = (
    "accesskey",
    "apikey",
    "authentication",
    "authkey",
    "authorization",
    "consumerkey",
    "cookie",
    "credential",
    "credentials",
    "passwd",
    "password",
    "privatekey",
    "secret",
    "sessionid",  # a web session's (phpSessionId, ASP.NET_SessionId); not Hansa's own: _IDS
    "signature",
    "subscriptionkey",
    "functionskey",
    "token",
)
_IDS = frozenset({"sessionid"})
"""Names of Hansa's own ids that a suffix above would take for credentials: ``sessionId`` is
an agent session's (a step's message metadata, events), shown as written."""
_QUERY_EXACT = frozenset({"code", "sessionid"})
"""Names that are credentials in a URL's query only (elsewhere ``code`` is a status, say, and
``sessionId`` an agent session's id; ``?sessionid=…`` is a web session's)."""
PLAIN_HEADERS = frozenset(
    {
        "accept",
        "acceptcharset",
        "acceptencoding",
        "acceptlanguage",
        "cachecontrol",
        "contentencoding",
        "contentlanguage",
        "contenttype",
        "date",
        "idempotencykey",
        "ifmatch",
        "ifmodifiedsince",
        "ifnonematch",
        "ifunmodifiedsince",
        "pragma",
        "prefer",
        "range",
        "useragent",
        "xcorrelationid",
        "xrequestid",
    }
)
"""Headers whose values are shown and stored as written (``-``, ``_`` and case aside); every
other header's value is a secret."""
_HEADERS = "headers"
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{0,15}://[^\s\"'<>`]+", re.IGNORECASE)
_AUTHORITY = re.compile(r"([a-z][a-z0-9+.-]{0,15}://)([^/?#]*)(.*)", re.IGNORECASE | re.DOTALL)
_URL_PAIR = re.compile(r"([?&#;])([^=&#;]{1,128})=([^&#;]*)")
_TEXT_PAIR = re.compile(r"\b([A-Za-z][A-Za-z0-9_.-]{0,63})=([^\s&;,\"'<>]+)")
_SCHEME = re.compile(r"\b(Bearer|Basic|Digest|Token)\s+[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE)
_ADDRESS_KEY = re.compile(r"(url|uri|host|endpoint|domain)$")


def is_secret_name(name: str) -> bool:
    """Whether a key, header or query parameter called ``name`` holds a credential.

    Case, ``-`` and ``_`` do not matter: ``X-Api-Key``, ``api_key`` and ``apiKey`` are one name.
    """
    flat = _flat(name)
    return flat in _EXACT or (flat.endswith(_SUFFIXES) and flat not in _IDS)


def is_secret_header(name: str) -> bool:
    """Whether a request header called ``name`` may carry a credential: every one but
    :data:`PLAIN_HEADERS`."""
    return _flat(name) not in PLAIN_HEADERS


def _flat(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _secret_key(key: Any, within: str | None) -> bool:
    """Whether the value under ``key`` is a secret; ``within`` is ``headers`` for the keys
    of a headers mapping."""
    return is_secret_name(str(key)) or (within == _HEADERS and is_secret_header(str(key)))


def _within(key: Any) -> str | None:
    """``headers`` when the value under ``key`` holds headers: a mapping, or a list of
    ``{"name", "value"}`` pairs (those are masked when shown, not sealed)."""
    return _HEADERS if _flat(str(key)) == _HEADERS else None


def mask_url(url: str) -> str:
    """``url`` with its user info and credential-like query values masked, the rest as written."""
    parts = _AUTHORITY.fullmatch(url)
    if parts is None:
        return _URL_PAIR.sub(_pair, url)
    scheme, authority, rest = parts.groups()
    if "@" in authority:
        authority = f"{MASK}@{authority.rpartition('@')[2]}"
    return scheme + authority + _URL_PAIR.sub(_pair, rest)


def _pair(match: re.Match[str]) -> str:
    lead, name, _ = match.groups()
    plain = unquote_plus(name)
    secret = is_secret_name(plain) or _flat(plain) in _QUERY_EXACT
    return f"{lead}{name}={MASK}" if secret else match.group(0)


def _text_pair(match: re.Match[str]) -> str:
    name = match.group(1)
    return f"{name}={MASK}" if is_secret_name(name) else match.group(0)


def mask_text(text: str) -> str:
    """``text`` (a summary, an error, a log line) with the credentials it carries masked."""
    if not text:
        return text
    text = _SCHEME.sub(lambda m: f"{m.group(1)} {MASK}", text)
    if "://" in text:  # what a URL needs: most strings skip its search
        text = _URL.sub(lambda m: mask_url(m.group(0)), text)
    return _TEXT_PAIR.sub(_text_pair, text) if "=" in text else text


def mask(value: Any) -> Any:
    """``value`` (a config, parameters, a result) as it may be shown: every secret masked.

    Values under a secret key become :data:`MASK` (an empty or missing one stays as it is, so
    a reader can tell a secret is set), and so does the ``value`` of a ``{"name", "value"}``
    pair whose name is a secret's (a list of headers, a plan's requirement); every other
    string goes through :func:`mask_text`.
    """
    return _mask(value, secret=False, within=None)


def _mask(value: Any, *, secret: bool, within: str | None) -> Any:
    if isinstance(value, Mapping):
        named = _names_a_secret(value, within)
        return {
            k: _mask(
                v,
                secret=secret or _secret_key(k, within) or (named and k == "value"),
                within=_within(k),
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask(v, secret=secret, within=_pairs(within)) for v in value]
    if secret:
        return value if value is None or value == "" else MASK
    if isinstance(value, str):
        return mask_text(value)
    return value


def _pairs(within: str | None) -> str | None:
    """What the items of a list ``within`` are: a headers list's are ``{"name", "value"}``
    pairs, whose own keys are no headers."""
    return _HEADER_PAIR if within == _HEADERS else None


_HEADER_PAIR = "header pair"


def _names_a_secret(pair: Mapping[Any, Any], within: str | None = None) -> bool:
    # {"name": "Authorization", "value": "…"}: a header list, a plan's requirement
    name = pair.get("name")
    if "value" not in pair or not isinstance(name, str):
        return False
    return is_secret_name(name) or (within == _HEADER_PAIR and is_secret_header(name))


def map_secrets(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string held under a secret key (a
    header's value included, :func:`is_secret_header`)."""
    return _map(value, change, secret=False, within=None)


def _map(value: Any, change: Callable[[str], str], *, secret: bool, within: str | None) -> Any:
    if isinstance(value, Mapping):
        return {
            k: _map(v, change, secret=secret or _secret_key(k, within), within=_within(k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_map(v, change, secret=secret, within=None) for v in value]
    if secret and isinstance(value, str) and value:
        return change(value)
    return value


def keep_secrets(
    new: Mapping[str, Any], stored: Mapping[str, Any], where: str, *, partial: bool = False
) -> dict[str, Any]:
    """``new`` with each secret it masks (``***``) or leaves out taken from ``stored``.

    That is how a config or a step's parameters are changed without sending the secrets
    again. A secret is never carried over to a new address: when a ``…Url`` (or host,
    endpoint, domain) changes, the secrets beside it and below it must be sent again.

    Args:
        new: What the caller sent.
        stored: What is stored now (secrets possibly sealed: they are copied, never read).
        where: The field's name for messages (``config``, ``parameters``).
        partial: ``new`` changes only the top-level keys it names; the others stay.

    Raises:
        errors.InvalidInput: A masked or omitted secret would follow a changed address.
    """
    merged = _keep(new, stored, where, [], None)
    if partial:
        moved = _moved(new, stored, where)
        for key in stored.keys() - new.keys():
            if moved and (is_secret_name(key) or map_secrets(stored[key], _flag) != stored[key]):
                _refuse_moved(moved, f"{where}.{key}")
            merged[key] = stored[key]
    return merged


def _flag(text: str) -> str:
    return text + "\0"  # any change tells map_secrets found a secret


def _moved(new: Mapping[str, Any], stored: Mapping[str, Any], where: str) -> list[str]:
    return [
        f"{where}.{k}"
        for k, v in new.items()
        if _ADDRESS_KEY.search(k.lower()) and k in stored and stored[k] != v
    ]


def _keep(
    new: Mapping[str, Any],
    stored: Mapping[str, Any],
    where: str,
    moved: list[str],
    within: str | None,
) -> dict[str, Any]:
    moved = moved + _moved(new, stored, where)
    merged: dict[str, Any] = {}
    for key, value in new.items():
        old = stored.get(key)
        if _secret_key(key, within) and value == MASK:
            if old not in (None, "", MASK):
                _refuse_moved(moved, f"{where}.{key}")
                merged[key] = old
        elif isinstance(value, Mapping):
            before = old if isinstance(old, Mapping) else {}
            merged[key] = _keep(value, before, f"{where}.{key}", moved, _within(key))
        else:
            merged[key] = value
    for key, old in stored.items():
        if key not in new and _secret_key(key, within) and old not in (None, ""):
            _refuse_moved(moved, f"{where}.{key}")
            merged[key] = old
    return merged


def _refuse_moved(moved: list[str], field: str) -> None:
    if moved:
        raise errors.InvalidInput(
            f"{field} must be sent again because {', '.join(moved)} changed: a stored secret "
            "never follows a new address",
            details={"field": field},
        )
