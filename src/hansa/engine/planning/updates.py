"""A change of something the project already has (``targets``), found by name first.

Hans looks the named page or product up in the project as the step will (its CMS, Hansa's
workspace shop: ``runs.find_named``) and plans the update of what he found, under the
project's own name for it ("the services page" is the page Services). A name that matches
nothing is never taken as a new thing: Hans says he cannot find it, names what the project
has, and asks which one is meant. A name matching loosely ("contact" for Contact Us) is
taken and said back. Menus and forms, which Hansa cannot read, keep the user's name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hansa.engine import runs
from hansa.engine.planning import protocol
from hansa.engine.planning.request import Asked, Cancelled, Planned, PlanningRequest
from hansa.engine.planning.targets import Target
from hansa.engine.planning.triage import Triage

CHANGE_CHARS = 300
"""How much of the request a change in the user's words keeps."""


async def start(req: PlanningRequest, decision: Triage) -> Asked | Planned | Cancelled:
    """Look the thing up, then plan its update (or ask which one is meant)."""
    assert decision.target is not None and decision.playbook is not None
    changed = decision.target
    name, notes = await _found(req, changed)
    given = _given(decision.playbook.id, changed, name, req.text)
    hans = req.supervisor.display_name
    # the names stay out of the thinking stream: a site's titles are outside text
    if name is None:
        req.think(f"{hans} found no {changed.kind} by that name and is asking which one")
    else:
        req.think(f"{hans} found the {changed.kind} to change in the project")
    return await protocol.start(req, dataclasses.replace(decision, given=given, notes=notes))


async def _found(req: PlanningRequest, changed: Target) -> tuple[str | None, tuple[str, ...]]:
    """The thing's name as the project spells it (None: not found), and what Hans says."""
    project = req.project
    if changed.kind not in ("page", "product") or project.project_id is None:
        # Hansa cannot read menus and forms; with no project in focus, the step looks the
        # name up where the change lands, once the user has said which project it is
        return changed.name, ()
    found = await runs.find_named(req.services, req.tenant_id, project, changed.kind, changed.name)
    if not found.checked:
        return changed.name, ()
    if len(found.names) == 1:
        (name,) = found.names
        if found.loose:
            return name, (f"I took “the {changed.name} {changed.kind}” as {name}.",)
        return name, ()
    where = project.project_name or "this project"
    said = f"“{changed.name}”"
    if found.names:
        listed = ", ".join(found.names)
        return None, (f"Several {changed.kind}s of {where} match {said}: {listed}.",)
    text = f"I can't find a {changed.kind} called {said} in {where}."
    if found.known:
        text += f" Its {changed.kind}s are: {', '.join(found.known)}."
    elif found.listed:
        text += f" It has no {changed.kind}s I can see."
    text += f" I won't make a new {changed.kind} for a change of one that exists."
    return None, (text,)


def _given(
    playbook: str, changed: Target, name: str | None, request: str
) -> Mapping[str, str | None]:
    """The requirements the look-up and the request's parts settle, by playbook."""
    asked = request.strip()[:CHANGE_CHARS]
    if playbook == "add_to_page":
        return {"page": name, "addition": changed.what[:CHANGE_CHARS]}
    if playbook == "update_content":
        return {"page": name, "change": asked}
    thing = (
        f"{changed.kind} {name}" if changed.kind == "product" else f"{changed.name} {changed.kind}"
    )
    return {"thing": thing if name is not None else None, "change": asked}
