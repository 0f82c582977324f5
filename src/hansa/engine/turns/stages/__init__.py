"""The stages of a turn, in order; how it ends (``finalize``) and how a failed turn ends."""

from __future__ import annotations

from hansa.engine.turns.pipeline import Stage
from hansa.engine.turns.stages.context import build_context
from hansa.engine.turns.stages.finalize import fail, finalize
from hansa.engine.turns.stages.plan import plan
from hansa.engine.turns.stages.reply import reply
from hansa.engine.turns.stages.route import route
from hansa.engine.turns.stages.rules import rules
from hansa.engine.turns.stages.validate import validate

TURN_STAGES: tuple[Stage, ...] = (validate, rules, route, build_context, plan, reply)

__all__ = ["TURN_STAGES", "fail", "finalize"]
