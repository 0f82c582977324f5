"""A request that changes something the project already has (seed 000 §16.1): "add a FAQ
section to the About page", "put our opening hours on the contact page", "update the
services page", "change the price of the Softener XL product".

Read by grammar, not by a list of requests: an action on a definite noun phrase that names
a page, product, menu or form ("the services page", "our main menu", "the page called
Pricing") is a change of that thing — as the verb's object, or as the place something is
put into or taken from ("to", "on", "in", "from"). A thing to be made ("a new page", "a
product called …") is left to the playbooks that create. Whether the named thing exists is
the planning stage's look-up (``updates``); this module only reads the words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["page", "product", "menu", "form"]

READ_CHARS = 600
"""How much of a request is read for a named thing (the start says what is asked)."""

_STOP = (
    r"and|or|but|the|a|an|to|on|onto|in|into|of|from|at|for|with|plus|our|my|your|this|that|"
    r"its|it|new|so|then|also|page|pages|menu|menus|form|forms|product|products|section"
)
_WORD = rf"(?!(?:{_STOP})\b)[\w&'’.-]++"
_NAME = rf"{_WORD}(?:\s++{_WORD}){{0,3}}"
_KIND = r"web\s?page|page|menu|navigation|form|product"
_DET = r"the|our|my|your|this|that"
_NAMED = re.compile(
    # "the services page", "our main menu", "the Softener XL product", "the homepage"
    rf"\b(?:{_DET})\s++(?:(?P<name>{_NAME})\s++(?P<kind>{_KIND})|(?P<home>home\s?page))\b"
    # "the page called Pricing", "the product named Softener XL"
    rf"|\b(?:{_DET})\s++(?P<kind2>{_KIND})\s++(?:called|named|titled)\s++[\"“]?(?P<name2>{_NAME})",
    re.I,
)
_PLACE = re.compile(r"\b(?:to|on|onto|in|into|from|of|at)\s*+$", re.I)
"""What comes right before a thing something is put into or taken from."""
_LINK = re.compile(r"\b(?:link|links|button|redirect|pointer)\s++(?:to|from)\s*+$", re.I)
""""a link to the services page": the page is where the link points, not what changes."""
_CHANGES = (
    r"update|change|edit|rewrite|refresh|rework|redo|revise|improve|tweak|fix|rename|reorder|"
    r"reorgani[sz]e|shorten|extend|expand|restructure|translate|adjust|correct|modify|replace"
)
"""Verbs whose object is the thing changed."""
_ADDS = r"add|put|insert|include|append|place|embed|show|display|list|mention|feature|post"
"""Verbs that put something into the thing."""
_CHANGE = re.compile(rf"\b(?:{_CHANGES})\s++$", re.I)
"""A changing verb just before the thing: the thing is its object."""
_ADD = re.compile(rf"\b(?:{_ADDS})\b", re.I)
_ANY_ACTION = re.compile(rf"\b(?:{_ADDS}|{_CHANGES}|remove|take|drop|move|swap)\b", re.I)
_READS = re.compile(r"\b(audit|review|check|analy[sz]e|inspect|look at|read)\b", re.I)
"""A request that only reads the thing (an audit) changes nothing in it."""
_LEAD = re.compile(
    r"^\W*+(?:(?:please|pls|kindly|can you|could you|would you|will you|i want you to|"
    r"i'd like you to|i would like you to|we need you to|let's|hans)\W++){0,3}",
    re.I,
)
_ARTICLE = re.compile(r"^(?:(?:a|an|the|some|our|my|your)\s++)+", re.I)
_TAIL = 40
"""How many characters before a named thing say its role."""
_KIND_OF = {"navigation": "menu", "webpage": "page", "web page": "page"}
_NEW = {
    kind: re.compile(rf"\b(?:a|an|new|another)\s++(?:{_WORD}\s++){{0,3}}?(?:{nouns})\b", re.I)
    for kind, nouns in (("page", r"web\s?page|page"), ("product", "product"))
}
"""A thing of a kind to be made: "a new page", "an About Us page", "a product called …"."""


@dataclass(frozen=True)
class Target:
    """The existing thing a request changes, as the user named it."""

    kind: Kind
    name: str
    """Its name in the user's words ("services", "main", "Softener XL"; "home")."""
    adds: bool
    """Whether the request puts something into it ("add a FAQ section to …")."""
    what: str
    """What is put in or changed, in the user's words ("a FAQ section", "our opening
    hours"); the whole request when it does not say apart."""


def target(text: str) -> Target | None:
    """The existing page, product, menu or form ``text`` asks to change, or None."""
    head = text[:READ_CHARS]
    if _READS.search(head) or not _ANY_ACTION.search(head):
        return None
    found: list[tuple[re.Match[str], str]] = []
    named = set()
    for m in _NAMED.finditer(head):
        before = _before(head, m)
        if _LINK.search(before):
            continue
        named.add(m.group(0).casefold())
        if _PLACE.search(before):
            found.append((m, "place"))
        elif _CHANGE.search(before):
            found.append((m, "object"))
    if not found or len(named) > 1:  # several things change: not one thing's update
        return None
    if any(p.search(head) for p in _NEW.values()):  # "add a new page and link it from …"
        return None
    # the last place named is where the change lands ("a link to X in the main menu")
    places = [f for f in found if f[1] == "place"]
    match, role = places[-1] if places else found[0]
    kind = _kind(match)
    name = (match.group("name") or match.group("name2") or "home").strip(" .,'’\"”")
    action = _LEAD.sub("", head[: match.start()]).strip()
    adds = role == "place" and _ADD.match(action) is not None
    return Target(kind, name, adds, _what(action) if role == "place" else head.strip())


def only_changed(text: str, kind: Kind) -> bool:
    """Whether ``text`` names no ``kind`` to be made, and one it has as the place something
    goes ("add our hours to the contact page and a FAQ to the about page"): then nothing of
    that kind is made, whatever a playbook's trigger matched."""
    head = text[:READ_CHARS]
    return _NEW[kind].search(head) is None and any(
        _kind(m) == kind and _PLACE.search(_before(head, m)) and not _LINK.search(_before(head, m))
        for m in _NAMED.finditer(head)
    )


def _before(head: str, match: re.Match[str]) -> str:
    """The words just before ``match`` that say its role (a verb, a preposition): its
    patterns are anchored at the end, so a short tail is all they read."""
    return head[max(0, match.start() - _TAIL) : match.start()]


def _kind(match: re.Match[str]) -> Kind:
    if match.group("home"):
        return "page"
    word = re.sub(r"\s+", " ", (match.group("kind") or match.group("kind2")).lower())
    kind = _KIND_OF.get(word, word)
    assert kind in ("page", "product", "menu", "form")
    return kind  # type: ignore[return-value]


def _what(action: str) -> str:
    """What an action puts in: "add a FAQ section to" -> "a FAQ section"."""
    body = re.sub(r"^\S+\s*", "", action)  # the verb
    body = _ARTICLE.sub("", _PLACE.sub("", body).strip(" ,"))
    return body or action
