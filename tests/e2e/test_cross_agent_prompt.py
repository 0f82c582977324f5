"""A conversation that moves between agents keeps every section of the prompt a
conversation with one agent has (issue 34 item 2), over the real server.

Two conversations get the same three messages and the same three answers: one answered by
one agent, the other by three agents in turn. The scripted models check each prompt
(``promptHas``/``promptLacks``), and each turn's ``context_usage`` is compared section by
section: only the agent's own part may differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import Server, new_conversation, running_server, turn

AGENTS = ("growthLead", "creativeLead", "technicalLead")
PERSONAS = {
    "growthLead": "You are Growth Lead Dana",
    "creativeLead": "You are Creative Lead",
    "technicalLead": "You are Technical Lead Theo",
}
RULES = "You are one of a team of AI assistants"
OWN = {"system", "tools"}
"""The sections that are the agent's own: its persona (in the system parts) and its tools."""
QUESTIONS = (
    "What should we tell new customers first?",
    "Which tone fits the bakery best?",
    "How long should the welcome note be?",
)
ANSWERS = ("Tell them about the sourdough.", "Warm and plain.", "Three short sentences.")


def _step(i: int, agent: str) -> dict[str, Any]:
    """The scripted answer to message ``i``, checking the prompt holds the rules, every
    earlier exchange word for word, this agent's persona and no other agent's."""
    earlier = [text for k in range(i) for text in (QUESTIONS[k], ANSWERS[k])]
    return {
        "promptHas": [RULES, *earlier, PERSONAS[agent], QUESTIONS[i]],
        "promptLacks": [PERSONAS[other] for other in AGENTS if other != agent],
        "text": ANSWERS[i],
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp: Path = tmp_path_factory.mktemp("cross-agent-prompt")
    scripts: dict[str, list[dict[str, Any]]] = {agent: [] for agent in AGENTS}
    scripts[AGENTS[0]] += [_step(i, AGENTS[0]) for i in range(len(QUESTIONS))]  # one agent
    for i, agent in enumerate(AGENTS):  # then across agents
        scripts[agent].append(_step(i, agent))
    config = []
    for agent, steps in scripts.items():
        script = tmp / f"{agent}.json"
        script.write_text(json.dumps(steps))
        config.append(f'[agents.{agent}]\nmodel = "scripted:{script}"\n')
    (tmp / "hansa.toml").write_text("\n".join(config))
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as s:
        yield s


def _usages(server: Server, agents: tuple[str, ...]) -> list[dict[str, Any]]:
    """The conversation's three turns, message ``i`` to ``agents[i]``: each turn's
    ``context_usage`` data."""
    usages = []
    with server.client() as client:
        cid = new_conversation(client)
        for question, agent in zip(QUESTIONS, agents, strict=True):
            events = turn(client, cid, question, activeAgentId=agent)
            (done,) = [e for e in events if e["type"] == "done"]
            assert done["data"]["status"] == "completed", events
            answered = [e for e in events if e["type"] == "message" and e["agentId"] == agent]
            assert answered, f"{agent} answered"
            (usage,) = [e["data"] for e in events if e["type"] == "context_usage"]
            usages.append(usage)
    return usages


def test_the_cross_agent_prompt_keeps_every_section_the_single_agent_one_has(
    server: Server,
) -> None:
    single = _usages(server, (AGENTS[0],) * len(QUESTIONS))
    cross = _usages(server, AGENTS)

    for one, moved in zip(single, cross, strict=True):
        assert moved["sections"].keys() == one["sections"].keys()
        assert moved["dropped"] == one["dropped"] == []
        for section, tokens in one["sections"].items():
            if section not in OWN:
                assert moved["sections"][section] == tokens, section
    assert single[-1]["sections"]["history"] > single[0]["sections"]["history"]
