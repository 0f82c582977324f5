"""A page or product the user names, looked up in the project before Hans plans with it
(``runs.find_named``, through the project's CMS connector as the step will): the thing a
request changes (``updates``), and the page a user names when Hans asks which one
(``protocol``). Hans plans under the project's own name for it; a name that matches
nothing he says, with what the project has, and asks again — never a new thing.
"""

from __future__ import annotations

from hansa.domain.plan import Plan
from hansa.engine import runs
from hansa.engine.planning.request import PlanningRequest

CHECKED = {"add_to_page": "page", "update_content": "page"}
"""The playbooks whose ``page`` requirement names a page the project has: a page the user
names in an answer is looked up too."""
READ = ("page", "product")
"""The kinds Hansa can look up; menus and forms it cannot read keep the user's words."""


async def find(
    req: PlanningRequest, kind: str, name: str, spoken: str
) -> tuple[str | None, tuple[str, ...]]:
    """The ``kind`` called ``name`` as the project spells it (None: not found, or several),
    and what Hans says about it (``spoken``: how the user named it)."""
    project = req.project
    if kind not in READ or project.project_id is None:
        # with no project in focus, the step looks the name up where the change lands,
        # once the user has said which project it is
        return name, ()
    found = await runs.find_named(req.services, req.tenant_id, project, kind, name)
    if not found.checked:
        return name, ()
    if len(found.names) == 1:
        (exact,) = found.names
        return exact, ((f"I took {spoken} as {exact}.",) if found.loose else ())
    where = project.project_name or "this project"
    said = f"“{name}”"
    if found.names:
        return None, (f"Several {kind}s of {where} match {said}: {', '.join(found.names)}.",)
    text = f"I can't find a {kind} called {said} in {where}."
    if found.known:
        text += f" Its {kind}s are: {', '.join(found.known)}."
    elif found.listed:
        text += f" It has no {kind}s I can see."
    text += f" I won't make a new {kind} for a change of one that exists."
    return None, (text,)


async def recheck(
    req: PlanningRequest, playbook_id: str, before: Plan, after: Plan
) -> tuple[dict[str, str | None], list[str]]:
    """For a plan of an existing page: the page the user's message named, looked up — its
    name as the project spells it, or None to ask again — and what Hans says."""
    requirement = CHECKED.get(playbook_id)
    value = after.value(requirement) if requirement else None
    if requirement is None or value is None or value == before.value(requirement):
        return {}, []
    name, said = await find(req, "page", value, f"“{value}”")
    return ({} if name == value else {requirement: name}), list(said)
