"""JSON schemas as the embedded model's grammars: the grammar, and the longest answer it
allows (so ``max_tokens`` never cuts a structured answer off half-way)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hansa import errors

if TYPE_CHECKING:
    from llama_cpp.llama_grammar import LlamaGrammar


def longest(schema: dict[str, Any]) -> int | None:
    """The most characters a JSON text of ``schema`` can take as the grammar writes it
    (every character one token at most: enum values are ASCII-escaped, and a free
    character of a string is at most six: ``\\uXXXX``); None when it is unbounded."""
    if "enum" in schema:
        return max((len(json.dumps(v)) for v in schema["enum"]), default=0)
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            bounds = [longest(s) for s in schema[key]]
            return None if None in bounds else max(b for b in bounds if b is not None)
    kind = schema.get("type")
    if kind == "boolean":
        return 5
    if kind == "null":
        return 4
    most = schema.get("maxLength")
    if kind == "string" and isinstance(most, int):
        return 2 + 6 * most
    if kind == "object" and schema.get("additionalProperties") is False:
        total = 2
        for key, value in schema.get("properties", {}).items():
            inner = longest(value)
            if inner is None:
                return None
            total += len(json.dumps(key)) + inner + 4  # the colon, a comma, their spaces
        return total
    items = schema.get("maxItems")
    if kind == "array" and isinstance(items, int):
        inner = longest(schema.get("items", {}))
        return None if inner is None else 2 + items * (inner + 2)
    return None


def grammar(schema: dict[str, Any]) -> LlamaGrammar:
    """The llama.cpp grammar of ``schema``.

    Raises:
        errors.ConfigError: The schema cannot be turned into a grammar.
    """
    # Built here, not through response_format, which falls back to any JSON at all
    # when the schema cannot be converted.
    from llama_cpp.llama_grammar import LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except Exception as exc:  # the converter raises plain exceptions of several kinds
        raise errors.ConfigError(
            f"the local model cannot turn the answer's JSON schema into a grammar: {exc}"
        ) from exc
