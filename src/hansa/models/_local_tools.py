"""Tools for a model with no native tool calling: one JSON answer, constrained by a grammar.

The embedded model is asked to answer with one JSON object, either
``{"text": "..."}`` (a reply) or ``{"tool": "<name>", "arguments": {...}}`` (one
call), and llama.cpp constrains its sampling with a grammar made from the schema
below, so the answer always parses and the arguments always follow the tool's
parameter schema. Whether a small model picks the right tool is another matter:
the grammar guarantees the form, not the judgement. At most one call per answer.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hansa import errors
from hansa.models.base import ChatMessage, RequestParams, ToolDefinition, UseTool


def answer_schema(params: RequestParams) -> dict[str, Any]:
    """The JSON schema of an answer to a call that offers ``params.tools``."""
    choice = params.tool_choice
    alternatives: list[dict[str, Any]] = []
    if choice == "auto":
        text = params.output_schema or {"type": "string", "minLength": 1}
        alternatives.append(_object({"text": text}))
    defs: dict[str, Any] = {}
    for index, tool in enumerate(params.tools):
        if isinstance(choice, UseTool) and tool.name != choice.name:
            continue
        arguments = _hoisted(tool.parameters, f"tool{index}_", defs)
        alternatives.append(_object({"tool": {"const": tool.name}, "arguments": arguments}))
    schema = alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}
    if defs:
        schema = {**schema, "$defs": defs}
    return schema


def prompt(messages: list[ChatMessage], params: RequestParams) -> list[dict[str, str]]:
    """``messages`` for a chat template that knows no tools, told how to call them.

    An assistant's calls become the JSON it would have answered; a tool's result
    becomes a user message naming the tool.
    """
    called = {c.id: c.name for m in messages for c in m.tool_calls}
    rendered: list[dict[str, str]] = []
    for message in messages:
        if message.role == "tool":
            name = called.get(message.tool_call_id or "", "a tool")
            said = "failed" if message.is_error else "answered"
            content = f"The tool {name} {said}: {message.content}"
            rendered.append({"role": "user", "content": content})
        elif message.tool_calls:
            lines = [message.content] if message.content else []
            lines += [
                json.dumps({"tool": c.name, "arguments": c.arguments}) for c in message.tool_calls
            ]
            rendered.append({"role": "assistant", "content": "\n".join(lines)})
        else:
            rendered.append({"role": message.role, "content": message.content})
    if params.offers_tools:
        instructions = _instructions(params)
        if rendered and rendered[0]["role"] == "system":
            first = rendered[0]["content"]
            rendered[0] = {"role": "system", "content": f"{first}\n\n{instructions}"}
        else:
            rendered.insert(0, {"role": "system", "content": instructions})
    return rendered


def parsed(answer: str) -> tuple[str, tuple[str, dict[str, Any]] | None]:
    """The text of an answer, and the ``(tool, arguments)`` it calls, if it calls one.

    Raises:
        errors.ProviderError: The answer is not the JSON the grammar allows (cut short).
    """
    try:
        value = json.loads(answer, strict=False)  # the grammar lets raw newlines into strings
    except ValueError as exc:
        raise errors.ProviderError(
            f"the local model's tool answer is not JSON (max_tokens too low?): {answer!r}"
        ) from exc
    if isinstance(value, dict) and isinstance(value.get("tool"), str):
        arguments = value.get("arguments")
        return "", (value["tool"], arguments if isinstance(arguments, dict) else {})
    if isinstance(value, dict) and "text" in value:
        text = value["text"]
        return (text if isinstance(text, str) else json.dumps(text)), None
    raise errors.ProviderError(f"the local model's tool answer has an unknown form: {answer!r}")


def _instructions(params: RequestParams) -> str:
    tools = "\n".join(f"- {_signature(t)}: {t.description}" for t in params.tools)
    if isinstance(params.tool_choice, UseTool):
        how = f'Call the tool {params.tool_choice.name}: {{"tool": "...", "arguments": {{...}}}}.'
    elif params.tool_choice == "required":
        how = 'Call one tool: {"tool": "<name>", "arguments": {...}}.'
    else:
        how = (
            'Answer in JSON: {"text": "..."} to reply in words, or'
            ' {"tool": "<name>", "arguments": {...}} to use a tool.'
        )
    return f"You can use these tools:\n{tools}\n{how}"


def _signature(tool: ToolDefinition) -> str:
    properties = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or ())
    names = [name if name in required else f"{name}?" for name in properties]
    return f"{tool.name}({', '.join(names)})"


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _hoisted(schema: dict[str, Any], prefix: str, defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``$defs``, which move to ``defs`` renamed, refs rewritten.

    A tool's schema refers to its own root (``#/$defs/Page``); inside the answer's
    schema that root is the answer's, which holds every tool's definitions.
    """
    own = copy.deepcopy(schema)
    local = own.pop("$defs", {})

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                node = {**node, "$ref": f"#/$defs/{prefix}{ref.removeprefix('#/$defs/')}"}
            return {key: rewrite(value) for key, value in node.items()}
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    for name, definition in local.items():
        defs[f"{prefix}{name}"] = rewrite(definition)
    rewritten: dict[str, Any] = rewrite(own)
    return rewritten
