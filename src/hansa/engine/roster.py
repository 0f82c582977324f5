"""The default roster: seed 000's fourteen agents, overridable from ``hansa.toml``."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hansa import errors
from hansa.domain.agent import AgentDefinition, Category

_C = Category

_DEFAULTS: tuple[tuple[str, str, str, Category, str, tuple[str, ...], str, str], ...] = (
    (
        "chief",
        "Hans",
        "Chief AI Officer",
        _C.SUPERVISOR,
        "Routes every request, plans multi-agent runs and validates results before answering.",
        ("plan", "route", "validate", "review", "audit", "wait", "workspace", "tickets"),
        "#1d4ed8",
        "Plan the launch of our new product line",
    ),
    (
        "deliveryLead",
        "Delivery Lead Ada",
        "Delivery Lead",
        _C.LEAD,
        "Owns delivery plans, timelines and milestones across projects.",
        ("plan", "milestones", "tickets", "workspace"),
        "#0f766e",
        "When is the redesign delivered?",
    ),
    (
        "clientSuccess",
        "Client Success Lead Lena",
        "Client Success Lead",
        _C.LEAD,
        "Handles client communication, accounts and satisfaction.",
        ("tickets", "client_messages", "workspace", "review"),
        "#be185d",
        "Draft an update for the client about the account",
    ),
    (
        "creativeLead",
        "Creative Lead Mak",
        "Creative Lead",
        _C.LEAD,
        "Shapes brand, visual direction and creative content.",
        ("content", "brand", "layout", "workspace"),
        "#c2410c",
        "Suggest a visual direction for our brand refresh",
    ),
    (
        "growthLead",
        "Growth Lead Dana",
        "Growth Lead",
        _C.LEAD,
        "Drives SEO, traffic, ads and campaigns.",
        ("seo", "audit", "campaigns", "content", "workspace", "review"),
        "#15803d",
        "Please improve our SEO traffic",
    ),
    (
        "technicalLead",
        "Technical Lead Theo",
        "Technical Lead",
        _C.LEAD,
        "Owns hosting, servers, SSL, DNS and integrations; reviews risky changes.",
        ("hosting", "integrations", "webhooks", "tickets", "review"),
        "#4338ca",
        "Is our SSL set up correctly?",
    ),
    (
        "webEngineer",
        "Web Engineer Nico",
        "Web Engineer",
        _C.EXECUTION,
        "Builds pages, posts, templates and layouts in the CMS.",
        ("cms_pages", "layout", "content", "audit"),
        "#0369a1",
        "Create a new page called Services",
    ),
    (
        "seoSpecialist",
        "SEO Specialist Sami",
        "SEO Specialist",
        _C.EXECUTION,
        "Runs SEO audits and fixes on-page issues.",
        ("seo", "audit", "content", "cms_pages"),
        "#65a30d",
        "Audit the SEO of our home page",
    ),
    (
        "ecommerceSpecialist",
        "E-commerce Specialist Eva",
        "E-commerce Specialist",
        _C.EXECUTION,
        "Manages products, catalogues and shop settings.",
        ("products", "cms_pages"),
        "#a16207",
        "Add a new product to the shop",
    ),
    (
        "sportsMedia",
        "Sports Media Producer Max",
        "Sports Media Producer",
        _C.EXECUTION,
        "Produces sports media content: match reports, schedules and highlights.",
        ("content", "media", "cms_pages"),
        "#b91c1c",
        "Write a match report for Saturday's game",
    ),
    (
        "notificationAgent",
        "Notification Agent Nora",
        "Notification Agent",
        _C.UTILITY,
        "Sends notifications and calls webhooks.",
        ("notifications", "webhooks", "wait"),
        "#7c3aed",
        "Notify the team when the page is live",
    ),
    (
        "researchAgent",
        "Research Agent Rui",
        "Research Agent",
        _C.UTILITY,
        "Researches topics, competitors and sources.",
        ("research", "workspace"),
        "#0e7490",
        "Research our top three competitors",
    ),
    (
        "schedulerAgent",
        "Scheduler Agent Sol",
        "Scheduler Agent",
        _C.UTILITY,
        "Schedules work, reminders and waits.",
        ("schedule", "wait", "tickets"),
        "#475569",
        "Remind me to review the plan on Friday",
    ),
    (
        "fileAgent",
        "File Agent Finn",
        "File Agent",
        _C.UTILITY,
        "Stores, organises and retrieves workspace documents.",
        ("documents", "workspace"),
        "#78716c",
        "Organise the brand documents into one folder",
    ),
)


def default_roster() -> list[AgentDefinition]:
    """Seed 000's fourteen agents, Hans first."""
    return [
        AgentDefinition(
            id=agent_id,
            display_name=name,
            role=role,
            role_summary=summary,
            category=category,
            capabilities=caps,
            example_prompts=(example,),
            color=color,
            ordering=i,
        )
        for i, (agent_id, name, role, category, summary, caps, color, example) in enumerate(
            _DEFAULTS
        )
    ]


def load_config(path: Path | None) -> dict[str, Any]:
    """Read ``hansa.toml``; an empty dict when no file is given."""
    if path is None:
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise errors.ConfigError(f"cannot read config {path}: {exc}") from exc


def roster_from_config(config: dict[str, Any]) -> list[AgentDefinition]:
    """The default roster with ``[agents.<id>]`` tables of the config applied.

    A table for a known id overrides its fields; a table for a new id adds an agent
    (it then needs every required field).
    """
    agents = {a.id: a for a in default_roster()}
    overrides = config.get("agents", {})
    if not isinstance(overrides, dict):
        raise errors.ConfigError("[agents] in the config must be a table of agent tables")
    for agent_id, fields in overrides.items():
        base: dict[str, Any] = (
            agents[agent_id].model_dump() if agent_id in agents else {"ordering": len(agents)}
        )
        try:
            given = dict(fields)
            if "model" in given:  # shorthand: [agents.x] model = "provider:model"
                settings = {**base.get("model_settings", {}), "model": given.pop("model")}
                given["model_settings"] = {**settings, **given.get("model_settings", {})}
            agents[agent_id] = AgentDefinition.model_validate({**base, **given, "id": agent_id})
        except ValidationError as exc:
            raise errors.ConfigError(f"agent {agent_id!r} in the config is invalid: {exc}") from exc
    if "chief" not in agents:
        raise errors.ConfigError("the roster needs the supervisor 'chief'")
    return sorted(agents.values(), key=lambda a: a.ordering)
