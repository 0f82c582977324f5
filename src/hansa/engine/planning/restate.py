"""Hans's restatements from templates: a value not given is left out with its words.

A playbook's intent, title, stage titles and step summaries are templates
(``"A campaign for ${project} about ${topic}, on ${channels}, for ${audience}."``).
Said before every value is known, a blank would read "…about water filters, on , for .";
instead the missing value goes with the words that lead into it (a preposition, an article,
a comma, a colon, a dash, a slash, or the parentheses around it), and what is left is tidied:
"A campaign for Aquaverter about water filters." Every pattern here is linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_VAR = re.compile(r"\$\{(\w+)\}")
_LEAD = (
    r"(?:\s*+[,;:—–-])?"  # the comma, colon or dash before the phrase
    r"(?:\s*+\b(?:about|on|for|of|at|to|in|into|with|by|from|and|or|called|named|titled)\b"
    r"(?:\s*+\b(?:the|a|an|our|your|their)\b)?)?"  # its preposition, and the article after it
    r"\s*+/?"  # an address's slash
)
_PHRASE_ENDS = (
    r"(?=\s*+(?:[,.;:!?)—–]|$)|\s++(?:about|on|for|of|at|to|in|into|with|by|from|and|or|that)\b)"
)
"""After the value, its phrase ends (punctuation, the end, the next phrase's preposition);
otherwise it qualifies the next word ("the ${title} page") and goes alone."""
_PARENS = re.compile(r"\s*+\(\s*+\)")
_SPACE_BEFORE = re.compile(r" ++(?=[,.;:!?)])")
_DOUBLE_PUNCT = re.compile(r"\s*+[,;:—–]\s*+(?=[,.;:!?]|$)")
_WHITESPACE = re.compile(r"\s+")


def said(template: str, values: Mapping[str, str]) -> str:
    """``template`` with its ``${name}`` filled from ``values``; a name without a value (or
    with an empty one) is left out with its leading words, never shown blank. A name
    ``values`` does not know stays as written."""
    for name in dict.fromkeys(m.group(1) for m in _VAR.finditer(template)):
        if name in values and not str(values[name]).strip():
            var = re.escape("${" + name + "}")
            template = re.sub(_LEAD + var + _PHRASE_ENDS, "", template)
            template = re.sub(r" ?" + var, "", template)
    text = _VAR.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)
    # one space for every run first: the tidying patterns below start at each space, so a
    # value of 20,000 spaces made them quadratic (seconds on the event loop)
    text = _WHITESPACE.sub(" ", text)
    text = _PARENS.sub("", text)
    text = _SPACE_BEFORE.sub("", text)
    text = _DOUBLE_PUNCT.sub("", text)
    return text.strip()
