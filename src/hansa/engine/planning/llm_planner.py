"""A plan from the model, when no playbook fits: structured output, then the same checks.

The model gets the roster, the task types with their parameter schemas and the
project context, and must answer JSON matching ``DRAFT_SCHEMA``. The result goes
through the same validation as a playbook's plan (``runs.store_run``: the laws).

The answer streams: as the model completes each step, a thinking entry names it
(``drafting``), committed at once, so the user sees the plan take shape while the model
writes. The plan is read from the whole answer only.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from hansa import errors
from hansa.domain.plan import Plan, PlanStage, PlanStep
from hansa.engine import llm
from hansa.engine.llm import CallScope
from hansa.engine.planning import drafting
from hansa.engine.planning.request import PlanningRequest
from hansa.models.base import ChatMessage, ModelSettings, RequestParams


class _Step(BaseModel):
    ref: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
    owner: str
    task_type: str = Field(alias="taskType")
    parameters: dict[str, Any]
    summary: str = Field(min_length=1, max_length=300)


class _Stage(BaseModel):
    group: str = Field(pattern=r"^[A-Z]$")
    title: str
    steps: list[_Step] = Field(min_length=1, max_length=10)


class PlanDraft(BaseModel):
    """What the model must answer."""

    intent: str = Field(min_length=1, max_length=500)
    title: str = Field(min_length=1, max_length=200)
    stages: list[_Stage] = Field(min_length=1, max_length=6)


DRAFT_SCHEMA = PlanDraft.model_json_schema(by_alias=True)
_MODEL_FAILED = (errors.ProviderError, errors.ScriptExhausted, errors.ConfigError)
"""What the model layer raises when no plan comes; an error of the writes made meanwhile
(the turn's lease lost) is not one of them: it ends the turn."""


def _instructions(req: PlanningRequest) -> str:
    types = [
        {"name": t.name, "capability": t.capability, "parameters": t.schema().get("properties", {})}
        for t in req.services.registry.all()
        if not t.graph_node
    ]
    agents = [{"id": a.id, "capabilities": list(a.capabilities)} for a in req.services.roster]
    context = req.project.describe()
    return (
        "Plan the user's request as stages of steps. Stages run in order; steps of a stage run "
        "in parallel. Each step has a ref, an owner agent holding the task type's capability, "
        "a task type and its parameters. A later step may use an earlier result as "
        '"{{ref.field}}". Answer JSON only.\n'
        f"{context}\nAgents: {json.dumps(agents)}\nTask types: {json.dumps(types)}"
    )


async def draft_plan(req: PlanningRequest) -> Plan | None:
    """Ask the model for a plan; None (with a thinking entry) if it gives no usable one."""
    scope = CallScope(
        tenant_id=req.tenant_id,
        conversation_id=req.conversation_id,
        turn_id=req.turn_id,
        node_id="planner",
        agent_id=req.supervisor.id,
    )
    model = req.services.model_for(req.supervisor, req.project)
    prompt = [ChatMessage("system", _instructions(req)), ChatMessage("user", req.text)]
    params = RequestParams(output_schema=DRAFT_SCHEMA, purpose="plan")
    services = req.services
    progress = drafting.Progress()
    hans = req.supervisor.display_name

    async def heard(attempt: int, piece: str) -> None:
        """Each step the model completes is said as it comes."""
        for summary in progress.add(piece, attempt):
            req.think(drafting.entry(hans, len(progress.announced), summary))
            await req.flush()

    await req.flush()  # what the turn decided so far comes before the plan's steps
    try:  # the steps said are not the plan: a call that fails may go again
        answer = await llm.ask(
            model,
            scope,
            prompt,
            ModelSettings(temperature=0, max_tokens=800),
            params,
            clock=services.clock,
            retry=llm.Retry.of(services.settings),
            calls=req.calls,
            observe=services.metrics.called,
            heard=heard,
        )
        draft = PlanDraft.model_validate_json(answer.text)
    except (*_MODEL_FAILED, ValidationError, ValueError):
        return None
    project_id = req.project.project_id
    return Plan(
        intent=draft.intent,
        title=draft.title,
        stages=[
            PlanStage(
                group=s.group,
                title=s.title,
                steps=[
                    PlanStep(
                        ref=st.ref,
                        owner=st.owner,
                        task_type=st.task_type,
                        parameters=st.parameters,
                        summary=st.summary,
                        project_id=project_id,
                    )
                    for st in s.steps
                ],
            )
            for s in draft.stages
        ],
    )
