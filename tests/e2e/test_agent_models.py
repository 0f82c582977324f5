"""Models per agent: an agent's ``model`` and ``instructions`` from hansa.toml are used."""

from __future__ import annotations

import json
from pathlib import Path

from harness import new_conversation, running_server, turn

ANSWER = "Growth Lead here: the scripted plan."


def test_two_agents_on_two_models(tmp_path: Path) -> None:
    script = tmp_path / "growth.json"
    script.write_text(json.dumps([{"text": ANSWER}]))
    config = tmp_path / "hansa.toml"
    config.write_text(
        f'[agents.growthLead]\nmodel = "scripted:{script}"\n'
        'instructions = "Always name the channel first."\n'
    )
    with running_server(tmp_path, extra_args=("--config", str(config))) as server:
        with server.client() as client:
            seo = turn(client, new_conversation(client), "Please improve our SEO traffic")
            # a question (a change would be Hans's to plan): the Web Engineer answers it
            web = turn(client, new_conversation(client), "What makes a good page layout?")
            calls = client.get("/api/llm-calls").json()

    said = [
        e["data"]["content"] for e in seo if e["type"] == "message" and e["agentId"] == "growthLead"
    ]
    assert said == [ANSWER]
    by_agent = {c["agentId"]: c["model"] for c in calls}
    assert by_agent["growthLead"] == "scripted-script"
    assert by_agent["webEngineer"] == "scripted"
    assert any(e["type"] == "message" and e["agentId"] == "webEngineer" for e in web)
