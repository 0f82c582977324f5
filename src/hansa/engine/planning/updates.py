"""A change of something the project already has (``targets``), found by name first.

Hans looks the named page or product up in the project as the step will (``named``) and
plans the update of what he found, under the project's own name for it ("the services
page" is the page Services). A name that matches nothing is never taken as a new thing:
Hans says he cannot find it, names what the project has, and asks which one is meant. A
name matching loosely ("contact" for Contact Us) is taken and said back. Menus and forms,
which Hansa cannot read, keep the user's name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hansa.engine.planning import named, protocol
from hansa.engine.planning.request import Asked, Cancelled, Planned, PlanningRequest
from hansa.engine.planning.targets import Target
from hansa.engine.planning.triage import Triage

CHANGE_CHARS = 300
"""How much of the request a change in the user's words keeps."""


async def start(req: PlanningRequest, decision: Triage) -> Asked | Planned | Cancelled:
    """Look the thing up, then plan its update (or ask which one is meant)."""
    assert decision.target is not None and decision.playbook is not None
    changed = decision.target
    name, notes = await named.find(
        req, changed.kind, changed.name, f"“the {changed.name} {changed.kind}”"
    )
    given = _given(decision.playbook.id, changed, name, req.text)
    hans = req.supervisor.display_name
    # the names stay out of the thinking stream: a site's titles are outside text
    if name is None:
        req.think(f"{hans} found no {changed.kind} by that name and is asking which one")
    else:
        req.think(f"{hans} found the {changed.kind} to change in the project")
    return await protocol.start(req, dataclasses.replace(decision, given=given, notes=notes))


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
