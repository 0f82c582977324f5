"""Where a step's changes land (issue 30, gap 2): the project's live site through its
connection, or Hansa's workspace, as a draft when the project's site is elsewhere, with the
reason. One answer for the plan ("Where the changes land", ``engine/planning/where.py``),
the connector a step runs through (``engine/runs/connectors.py``), the step's result
(``target``: ``POST /api/assistant/execute``'s ``details``) and Hans's summary of it.

A task type names the connector its changes go through (``TaskType.lands_via``: ``cms``,
``shop``); this module says where that connector lands for a project. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hansa.domain.project import ProjectContext

CONNECTIONS = {"cms": ("wordpress", "pages"), "shop": ("woocommerce", "products")}
"""Per connector: the project config section that connects it to the live site (its
``baseUrl`` and credentials), and what it holds."""
BUILT_IN = frozenset({"", "hansa", "workspace", "none"})
"""``cmsPlatform`` values that mean Hansa's own workspace is the project's site."""
WORKSPACE_DRAFTS = "workspaceDrafts"
"""A project's config key: true means its changes land in Hansa's workspace until its
site is connected, without asking each time."""


@dataclass(frozen=True)
class Target:
    """Where a connector's changes land for one project."""

    where: Literal["site", "workspace"]
    said: str
    """In words: "the live WordPress site at aquaverter.ca", "Hansa's workspace, as a draft
    for Aquaverter (not on its live site)"."""
    draft: bool = False
    """A stand-in for a change the project's live site does not get."""
    reason: str | None = None
    """Why it lands in the workspace, where it is a draft."""
    missing: str | None = None
    """What of the project's outside platform is not connected (``WordPress site``)."""

    def details(self) -> dict[str, Any]:
        """As a step's result shows it (``details.target`` of the execute API)."""
        shown: dict[str, Any] = {"where": self.where, "draft": self.draft, "said": self.said}
        return {**shown, "reason": self.reason} if self.reason else shown

    def sentence(self) -> str:
        """``said``, with the reason: what Hans tells the user."""
        return f"{self.said} ({self.reason})" if self.reason else self.said


def target(project: ProjectContext, connector: str, *, workspace: bool = False) -> Target:
    """Where ``connector`` (``cms``, ``shop``) lands for ``project``; ``workspace``: the user
    chose to draft in the workspace."""
    section, things = CONNECTIONS[connector]
    name = project.project_name or "the project"
    platform = (project.cms_platform or "").strip()
    connected = isinstance(project.config.get(section), dict)
    if connected and not workspace:
        what = "WordPress site" if section == "wordpress" else "WooCommerce shop"
        return Target("site", f"the live {what} at {project.project_domain or name}")
    if project.project_id is None and not project.project_name:
        return Target(
            "workspace",
            "Hansa's workspace, outside any project",
            draft=True,
            reason="no project is in focus",
        )
    if platform.lower() in BUILT_IN:
        return Target("workspace", f"Hansa's workspace, where {name}'s {things} live")
    missing = None if connected else _outside(platform, section)
    reasons = [f"{name}'s {missing} is not connected to Hansa"] if missing else []
    if missing and project.config.get(WORKSPACE_DRAFTS) is True:
        reasons.append("the project drafts its changes here until it is")
    elif workspace:
        reasons.append("you chose to draft it here")
    reason = "; ".join(reasons)
    said = f"Hansa's workspace, as a draft for {name} (not on its live site)"
    return Target("workspace", said, draft=True, reason=reason, missing=missing)


def _outside(platform: str, section: str) -> str:
    """What of an outside platform a connector needs: its site, or its shop."""
    if section == "wordpress":
        return "WordPress site" if platform.lower() == "wordpress" else f"{platform} site"
    return "shop"
