"""Seed 001's graph and rule examples, read from tests/e2e/fixtures/seed001/ where they are
kept byte for byte as the seed prints them (TypeScript object literals, most of them).

:func:`example` reads one as data: ``//`` comments dropped, bare keys quoted, and each
placeholder the seed leaves (``{...}``, or ``...`` closing an object) replaced, in order,
by what the test gives; nothing else is changed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "seed001"


def text(name: str) -> str:
    """The example as the seed prints it."""
    return (FIXTURES / f"{name}.json").read_text()


def example(name: str, *fills: dict[str, Any]) -> Any:
    """The example as data, its placeholders filled by ``fills`` in order."""
    source = re.sub(r"\s*//[^\n]*", "", text(name))
    given = iter(fills)
    source = re.sub(r"\{\.\.\.\}", lambda _: json.dumps(next(given)), source)
    source = re.sub(r",\s*\.\.\.\s*\}", lambda _: ", " + json.dumps(next(given))[1:], source)
    assert next(given, None) is None, "more fills than placeholders"
    source = re.sub(r"([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)(\s*:)", r'\1"\2"\3', source)
    return json.loads(source)
