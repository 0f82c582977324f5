"""Fire a trigger: the facts of the moment, the tenant's rules, their firings and actions."""

from __future__ import annotations

import dataclasses
from typing import Any

from hansa.domain.conditions import Evaluator
from hansa.domain.conversation import Conversation
from hansa.domain.rules import Firing, Rule, Trigger
from hansa.engine.rules.evaluate import evaluate
from hansa.engine.triggers import actions


def facts_of(convo: Conversation, **more: Any) -> dict[str, Any]:
    """What rules may test: the conversation, its context, its user, its project, and the
    trigger's own facts (``message``, ``handoff``, ``timer``)."""
    return {
        "conversation": {
            "id": convo.id,
            "state": convo.state.value,
            "currentAgent": convo.current_agent,
            "projectId": convo.project_id,
            "title": convo.title,
        },
        "context": convo.context,
        "user": dict(convo.metadata.get("user") or {}),
        "project": {"id": convo.project_id} if convo.project_id else {},
        **more,
    }


def fire(
    scene: actions.Scene, rules: list[Rule], trigger: Trigger, facts: dict[str, Any]
) -> tuple[list[Firing], actions.Applied]:
    """Evaluate ``rules`` for ``trigger``, record the evaluation and apply the actions in
    ``scene``'s batch; nothing at all when there are no rules."""
    if not rules:
        return [], actions.Applied()
    firings = evaluate(rules, trigger, facts, Evaluator())
    actions.record(scene, trigger, firings)
    return firings, actions.apply(dataclasses.replace(scene, facts=facts), firings)
