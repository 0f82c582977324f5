"""Finding a thing of a project by the name a user gave it, while Hans plans a change of it.

Pages are looked up through the project's CMS connector, as the step that changes them will
(``tasks/builtin/page_ref.resolve``): Hansa's workspace, or the connected WordPress site;
products in Hansa's workspace shop. What Hansa cannot read (a connected shop's catalogue,
a site's menus and forms) is not looked up, and the answer says so (``checked`` False).
"""

from __future__ import annotations

from dataclasses import dataclass

from hansa import errors
from hansa.domain.project import ProjectContext
from hansa.engine.runs.connectors import connectors_for
from hansa.engine.runs.store_workspace import StoreWorkspace
from hansa.engine.runtime.services import Services
from hansa.tasks.connectors.workspace_cms import WorkspaceCms, WorkspaceShop

LISTED = 20
"""How many of a project's pages or products a failed look-up names at most."""


@dataclass(frozen=True)
class Found:
    """What a look-up by name found."""

    names: tuple[str, ...] = ()
    """The names of the things that match, as the project spells them."""
    known: tuple[str, ...] = ()
    """When nothing matched exactly: what the project has of that kind (at most ``LISTED``)."""
    checked: bool = True
    """False when Hansa could not look (a site or shop it cannot read, or it failed)."""
    listed: bool = True
    """False when what the project has of that kind cannot be listed (a WordPress site:
    its connector searches, it does not list)."""
    loose: bool = False
    """True when the one match is a name holding every word the user said ("contact" for
    "Contact Us"), not the name itself."""


async def find_named(
    services: Services, tenant_id: str, project: ProjectContext, kind: str, name: str
) -> Found:
    """The ``kind`` (``page``, ``product``…) of ``project`` called ``name`` (its title or
    address, ignoring case)."""
    try:
        async with connectors_for(services, tenant_id, project) as found:
            if kind == "page":
                cms = found["cms"]
                pages = await cms.find_pages(name)
                if pages:
                    return Found(tuple(dict.fromkeys(str(p["title"]) for p in pages)))
                if not isinstance(cms, WorkspaceCms):
                    return Found(listed=False)  # WordPress: found nothing; it lists none
            elif kind == "product" and isinstance(found["shop"], WorkspaceShop):
                ws = StoreWorkspace(services, tenant_id)
                named = await ws.named("product", name, project_id=project.project_id)
                if named:
                    return Found(tuple(dict.fromkeys(e.name for e in named)))
            else:
                return Found(checked=False)
            ws = StoreWorkspace(services, tenant_id)
            listed, _ = await ws.list_kind(kind, project_id=project.project_id, limit=LISTED)
    except errors.HansaError:
        return Found(checked=False)
    known = tuple(dict.fromkeys(e.name for e in listed))
    words = set(name.casefold().split())
    close = [k for k in known if words <= set(k.casefold().split())]
    if len(close) == 1:
        return Found((close[0],), known, loose=True)
    return Found((), known)
