"""Fire a trigger: the facts of the moment, the tenant's rules, their firings and actions.

The rules are evaluated first, off the event loop and within the evaluation budget
(:func:`evaluated`, ``HANSA_RULE_EVALUATION_BUDGET_MS``); :func:`fire` then records the
firings and applies their actions, inside the caller's transaction when it has one (so no
pattern ever runs while the loop, or SQLite's one writer, waits)."""

from __future__ import annotations

import dataclasses
from typing import Any

from hansa.domain.conversation import Conversation
from hansa.domain.rules import Firing, Rule, Trigger
from hansa.engine.rules.evaluate import evaluate_off_loop
from hansa.engine.runtime.services import Services
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
        "user": dict(convo.user or {}),
        "project": {"id": convo.project_id} if convo.project_id else {},
        **more,
    }


async def evaluated(
    services: Services, rules: list[Rule], trigger: Trigger, facts: dict[str, Any]
) -> list[Firing]:
    """``rules``' firings for ``trigger``, evaluated on a worker thread within the budget."""
    if not rules:
        return []
    budget = services.settings.rule_evaluation_budget_ms / 1000
    return await evaluate_off_loop([rules], trigger, facts, budget)


def fire(
    scene: actions.Scene,
    rules: list[Rule],
    trigger: Trigger,
    facts: dict[str, Any],
    firings: list[Firing],
) -> tuple[list[Firing], actions.Applied]:
    """Record the evaluation of ``rules`` (``firings``, from :func:`evaluated`) and apply
    the actions in ``scene``'s batch; nothing at all when there are no rules."""
    if not rules:
        return [], actions.Applied()
    actions.record(scene, trigger, firings)
    return firings, actions.apply(dataclasses.replace(scene, facts=facts), firings)
