"""The stages of a turn, in order, and how a failed turn ends."""

from __future__ import annotations

from hansa.engine.stages.context import build_context
from hansa.engine.stages.finalize import fail, finalize
from hansa.engine.stages.plan import plan
from hansa.engine.stages.reply import reply
from hansa.engine.stages.route import route
from hansa.engine.stages.validate import validate
from hansa.engine.turn import Stage

TURN_STAGES: tuple[Stage, ...] = (validate, route, build_context, plan, reply, finalize)

__all__ = ["TURN_STAGES", "fail"]
