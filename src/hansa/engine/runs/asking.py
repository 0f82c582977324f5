"""Model calls of executors (``TaskContext.generate`` and ``complete``): each recorded, under
the step's run and node, for the run job to store with the step's outcome.

An executor's prompt is scoped as a turn's is (seed 002 §10.4): the base rules, the rules
pack of its project's scope (document-first guidance, the safety block), the date and the
project's pack (facts, summary, document tree; a line of each project without one), then
the agent's own part (its persona and the step's instructions) and the material, fitted to
the model's window by ``context_budget.fit``. No tool rules: these calls offer the model no
tools. A ``complete`` call with a system prompt of its own (a graph's ``llm.invoke``) is
the exception: its author wrote the whole prompt, sent as written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.engine import llm, prompts
from hansa.engine.llm import CallScope
from hansa.engine.runtime.services import Services
from hansa.models.base import ChatMessage, Model, ModelSettings, RequestParams
from hansa.tasks.base import Complete, TaskFailed


@dataclass(frozen=True)
class Doer:
    """Whom one execution acts for: what its reports and model calls are recorded under."""

    conversation_id: str
    agent_id: str
    run_id: str | None = None
    task_id: str | None = None
    """The stored task; None for a tool call of a turn (it has no task row)."""
    node_id: str | None = None
    """The graph node the task stands for: its model calls are recorded under it."""


def generator(
    services: Services,
    tenant_id: str,
    doer: Doer,
    calls: list[LlmCall],
    project: ProjectContext | None = None,
) -> Any:
    """``generate(instructions, material)``: a short draft by the acting agent's model,
    in the scope of ``project`` (none: global)."""

    async def generate(instructions: str, material: str) -> str:
        agent = await _acting(services, tenant_id, doer)
        settings = ModelSettings(temperature=agent.model_settings.temperature, max_tokens=400)
        model = services.model_for(agent)
        own = f"{prompts.persona(agent)} {instructions}"
        prompt = await _scoped(services, tenant_id, project, model, own, material, settings)
        return await _ask(services, tenant_id, doer, model, prompt, settings, "draft", calls)

    return generate


def completer(
    services: Services,
    tenant_id: str,
    doer: Doer,
    calls: list[LlmCall],
    project: ProjectContext | None = None,
) -> Complete:
    """``complete(prompt, system=, model=, temperature=, max_tokens=)``: the caller's own
    prompt, by the model named (a ``provider:model`` spec) or the acting agent's, at the
    agent's settings where the caller gives none. A caller's ``system`` prompt is sent as
    written (seed 001: a graph's ``llm.invoke`` node says its whole prompt); without one,
    the agent's persona is scoped as ``generate``'s prompt is."""

    async def complete(
        prompt: str,
        *,
        system: str | None = None,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str:
        agent = await _acting(services, tenant_id, doer)
        own = agent.model_settings
        settings = ModelSettings(
            temperature=own.temperature if temperature is None else temperature,
            max_tokens=own.max_tokens if max_tokens is None else max_tokens,
        )
        if model is not None and not services.may_name_model(model):
            raise TaskFailed(
                f"the model {model!r} is not one this server offers: name an openai: or "
                "anthropic: model, or one the operator configured",
                code="model_not_allowed",
            )
        chosen = services.model_for(agent, None, model)
        if system is not None:  # the graph's author wrote the whole prompt: sent as written
            messages = [ChatMessage("system", system), ChatMessage("user", prompt)]
        else:
            persona = prompts.persona(agent)
            messages = await _scoped(
                services, tenant_id, project, chosen, persona, prompt, settings
            )
        return await _ask(
            services, tenant_id, doer, chosen, messages, settings, "graph_node", calls
        )

    return complete


async def _scoped(
    services: Services,
    tenant_id: str,
    project: ProjectContext | None,
    model: Model,
    own: str,
    material: str,
    settings: ModelSettings,
) -> list[ChatMessage]:
    return await services.scoped_prompt(
        tenant_id, project, model, settings.max_tokens or 0, own, material
    )


async def _acting(services: Services, tenant_id: str, doer: Doer) -> AgentDefinition:
    agent = await services.agents.find(tenant_id, doer.agent_id)
    if agent is None:  # a registered agent removed while its task ran
        raise TaskFailed(f"agent {doer.agent_id} no longer exists", code="unknown_agent")
    return agent


async def _ask(
    services: Services,
    tenant_id: str,
    doer: Doer,
    model: Model,
    prompt: list[ChatMessage],
    settings: ModelSettings,
    purpose: str,
    calls: list[LlmCall],
) -> str:
    scope = CallScope(
        tenant_id=tenant_id,
        conversation_id=doer.conversation_id,
        run_id=doer.run_id,
        node_id=doer.node_id or doer.task_id,
        agent_id=doer.agent_id,
    )
    try:
        answer = await llm.ask(
            model,
            scope,
            prompt,
            settings,
            RequestParams(purpose=purpose),
            clock=services.clock,
            retry=llm.Retry.of(services.settings),
            calls=calls,
            observe=services.metrics.called,
        )
    except errors.HansaError as exc:
        raise TaskFailed(
            f"the language model did not answer ({exc.code})",
            code="model_failed",
            retryable=True,
        ) from exc
    return answer.text
