"""What a template may build (issue 28): a node's filled parameters are capped as a whole
(H2: one large value named a thousand times), a conversation's context too, and a list
index no list can reach names nothing (L4: ``int()`` refused 5,000 digits)."""

from __future__ import annotations

import pytest

from hansa.engine import templates
from hansa.engine.templates import MissingVariable, ParamsTooLarge, Scope, render_value

BIG = "x" * 65_000
SCOPE = Scope(results={"a": {"text": BIG, "items": [1, 2]}})


def test_a_value_named_a_thousand_times_counts_a_thousand_times() -> None:
    params = {"set": {"k": ["{{a.result.text}}"] * 1000}}
    with pytest.raises(ParamsTooLarge) as refused:
        render_value(params, SCOPE, max_bytes=256 * 1024)
    assert refused.value.code == "template_too_large"
    assert "HANSA_MAX_NODE_PARAMS_BYTES" in refused.value.message


def test_under_the_cap_a_whole_reference_keeps_its_value() -> None:
    params = {"set": {"k": ["{{a.result.text}}"] * 3}}
    assert render_value(params, SCOPE, max_bytes=256 * 1024) == {"set": {"k": [BIG] * 3}}
    assert render_value({"k": ["{{a.result.text}}"] * 100}, SCOPE)["k"][99] is BIG  # no cap


def test_a_huge_list_index_names_nothing() -> None:
    for index in ("9" * 5000, "19" * 10, "2"):
        with pytest.raises(MissingVariable):
            render_value({"t": "x {{a.result.items." + index + "}}"}, SCOPE)
    found: dict[str, object] = render_value({"t": "{{a.result.items.1}}"}, SCOPE)
    assert found == {"t": 2}


def test_a_context_past_its_cap_is_refused() -> None:
    assert templates.context_too_large({"k": "x" * 100}, 1024) is None
    why = templates.context_too_large({"k": "x" * 2000}, 1024)
    assert why is not None and "HANSA_MAX_CONVERSATION_CONTEXT_BYTES" in why
