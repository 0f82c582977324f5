"""Context packs (seed 002 §4) and fitting a prompt to the window, section by section."""

from __future__ import annotations

from datetime import UTC, datetime

from hansa.domain.agent import AgentDefinition
from hansa.domain.context_digest import (
    DocumentOutline,
    EntityChange,
    ProjectBrief,
    ProjectDigest,
    TenantOverview,
)
from hansa.domain.project import ProjectContext
from hansa.domain.workspace import WorkspaceEdge, WorkspaceEntity
from hansa.engine import context_budget, context_packs, prompts
from hansa.engine.context_budget import PromptParts, SummaryText, fit
from hansa.engine.context_packs import estimate_tokens
from hansa.engine.roster import default_roster
from hansa.models.base import ChatMessage

ROSTER = default_roster()
NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
PROJECT = ProjectContext(
    project_id="p1",
    project_name="Aquaverter",
    project_domain="aquaverter.ca",
    cms_platform="wordpress",
    allowed_task_types=("create_page", "run_audit"),
)


def _doc(i: str, name: str, parent: str | None = None, position: int = 0) -> WorkspaceEntity:
    return WorkspaceEntity(
        id=i,
        tenant_id="t",
        project_id="p1",
        kind="document",
        name=name,
        parent_id=parent,
        position=position,
        data={"body": "never in the prompt"},
        idempotency_key=None,
        created_at=NOW,
        updated_at=NOW,
        deleted_at=None,
    )


def _agent(agent_id: str) -> AgentDefinition:
    return next(a for a in ROSTER if a.id == agent_id)


def test_the_project_pack_holds_the_facts_and_the_document_tree_in_order_without_content() -> None:
    docs = [  # as the store lists them: by parent, then position
        _doc("d1", "Research", position=1),
        _doc("d0", "Brand book", position=0),
        _doc("d3", "Competitors", parent="d1", position=1),
        _doc("d2", "Interviews", parent="d1", position=0),
    ]
    text = context_packs.project_pack(PROJECT, docs).render()

    assert "Project: Aquaverter, id p1, domain aquaverter.ca, CMS wordpress." in text
    assert "Allowed task types: create_page, run_audit." in text
    tree = [line for line in text.splitlines() if line.lstrip().startswith("- ")]
    assert tree == [
        "- Brand book [d0]",
        "- Research [d1]",
        "  - Interviews [d2]",
        "  - Competitors [d3]",
    ]
    assert "never in the prompt" not in text


def test_the_entity_pack_holds_the_payload_and_the_linked_entities() -> None:
    goal = _doc("g1", "Launch the spring sale").model_copy(
        update={"kind": "goal", "data": {"deadline": "2026-04-01", "owner": "Dana"}}
    )
    plan = _doc("p9", "Sale plan").model_copy(update={"kind": "plan"})
    edge = WorkspaceEdge(id="e1", from_id="p9", to_id="g1", relation="supports")

    text = context_packs.entity_pack("g1", goal, [(edge, plan)]).render()
    gone = context_packs.entity_pack("g2", None, []).render()

    assert "In focus: the goal “Launch the spring sale” [g1]." in text
    assert "- deadline: 2026-04-01" in text and "- owner: Dana" in text
    assert "- ← supports plan “Sale plan” [p9]" in text
    assert "g2, which no longer exists" in gone


def test_the_global_pack_names_the_date_and_every_visible_agent() -> None:
    text = context_packs.global_pack(NOW, ROSTER).render()

    assert "Today is Monday, 02 March 2026 (UTC)." in text
    visible = [a for a in ROSTER if a.visible]
    assert all(f"({a.id})" in text for a in visible), "the same for every agent (issue 34)"
    assert all(f"({a.id})" not in text for a in ROSTER if not a.visible)


def _parts(window: int, **kwargs: object) -> PromptParts:
    values: dict[str, object] = {
        "window": window,
        "reply": 100,
        "system": "You are Hans.",
        "tools": 50,
        "message": "What next?",
        **kwargs,
    }
    return PromptParts(**values)  # type: ignore[arg-type]


def test_everything_fits_a_large_window_and_sections_add_up() -> None:
    history = (ChatMessage("user", "hello"), ChatMessage("assistant", "hi there"))
    packs = (context_packs.project_pack(PROJECT, [_doc("d0", "Brand book")]),)

    fitted = fit(_parts(8_000, packs=packs, history=history))

    assert fitted.dropped == []
    assert [m.role for m in fitted.prompt] == ["system", "user", "assistant", "user"]
    assert "Brand book [d0]" in fitted.prompt[0].content
    assert fitted.sections["reply"] == 100 and fitted.sections["tools"] == 50
    assert fitted.sections["history"] == sum(estimate_tokens(m.content) + 4 for m in history)
    assert fitted.window == 8_000 and not fitted.history_overflow


def test_a_short_budget_drops_the_lowest_priority_first_and_says_so() -> None:
    docs = [_doc(f"d{i:02}", f"Document number {i}", position=i) for i in range(60)]
    packs = (
        context_packs.global_pack(NOW, ROSTER),
        context_packs.project_pack(PROJECT, docs),
    )

    fitted = fit(_parts(2_000, packs=packs))  # packs get at most 500 tokens
    system = fitted.prompt[0].content
    dropped = {(d.section, d.what.split(":")[0]) for d in fitted.dropped}

    assert ("global", "agents") in dropped, "the roster goes before the document tree"
    assert "Today is Monday" in system and "Allowed task types" in system
    assert "Document number 0 " in system, "the tree keeps its first titles"
    tree = next(d for d in fitted.dropped if d.what.startswith("document tree"))
    assert tree.section == "project" and tree.tokens > 0
    kept = sum(1 for line in system.splitlines() if line.startswith("- Document number"))
    assert 0 < kept < 60
    assert tree.what == f"document tree: {60 - kept} of 61 lines", "the heading line stays"
    assert "Document number 59" not in system, "a tree is cut at its end, never holed"
    assert fitted.sections["global"] + fitted.sections["project"] <= fitted.budgets["packs"]
    order = [d.section for d in fitted.dropped]
    assert order.index("global") < order.index("project"), "lowest priority reported first"


def test_the_oldest_history_goes_first_and_the_overflow_is_reported() -> None:
    history = tuple(
        ChatMessage("user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * 400)
        for i in range(20)
    )

    fitted = fit(_parts(1_200, history=history, unread=3))
    kept = fitted.prompt[1:-1]

    assert kept and kept == list(history[-len(kept) :]), "the newest messages stay"
    assert fitted.history_overflow
    whats = [d.what for d in fitted.dropped if d.section == "history"]
    assert whats == [
        "3 older messages not read (past the read limit)",
        f"{20 - len(kept)} oldest messages after the summary",
    ]
    assert fitted.sections["history"] <= fitted.budgets["history"]


def test_a_long_summary_keeps_its_facts_and_cuts_its_prose() -> None:
    summary = SummaryText(
        3, "## Earlier\nIds mentioned: 01ABC\nDecisions:\n- use blue", "y" * 9_000
    )

    fitted = fit(_parts(4_000, summary=summary))
    system = fitted.prompt[0].content

    assert "Ids mentioned: 01ABC" in system and "- use blue" in system
    assert fitted.sections["summary"] <= fitted.budgets["summary"] <= context_budget.SUMMARY_MAX
    (cut,) = fitted.dropped
    assert cut.section == "summary" and cut.what == "summary v3: the end of its prose"
    assert cut.tokens > 0


def test_the_window_is_shared_reply_first() -> None:
    fitted = fit(_parts(300, reply=250, history=(ChatMessage("user", "z" * 400),)))

    assert fitted.budgets["history"] == 0
    assert fitted.prompt[-1].content == "What next?"
    assert [d.what for d in fitted.dropped] == ["1 oldest message after the summary"]


def test_the_user_pack_names_the_user_then_their_attributes() -> None:
    user = {"id": "u-1", "displayName": "Ada", "email": "a@vip.example", "tier": "vip", "n": 2}
    pack = context_packs.user_pack(user)
    assert pack.scope == "user"
    assert pack.render() == (
        "## User\nYou are talking with Ada (id u-1, a@vip.example).\n- tier: vip\n- n: 2"
    )
    essential, *attributes = pack.items
    assert essential.priority < min(a.priority for a in attributes), "attributes go first"
    bare = context_packs.user_pack({"id": "u-2"})
    assert bare.render() == "## User\nYou are talking with a user (id u-2)."


def test_a_message_the_summary_keeps_goes_in_before_the_history_and_is_named_when_cut() -> None:
    paste = ChatMessage("user", "contract " + "y" * 2_000)
    history = tuple(ChatMessage("user", f"chat {i} " + "x" * 400) for i in range(10))

    fitted = fit(_parts(1_600, kept=(paste,), history=history))
    tight = fit(_parts(400, kept=(paste,), history=history[-1:]))

    assert fitted.prompt[1] == paste, "the paste first, ahead of any message after the summary"
    assert fitted.sections["kept"] == estimate_tokens(paste.content) + context_packs.MESSAGE_TOKENS
    assert fitted.history_overflow, "the history gave way, not the paste"
    assert paste not in tight.prompt
    assert [d.section for d in tight.dropped] == ["kept"]
    assert tight.dropped[0].what == "a message the summary keeps word for word (2009 chars)"


def _outline(i: str, name: str, parent: str | None = None, position: int = 0, chars: int = 2):
    return DocumentOutline(
        id=i, name=name, parent_id=parent, position=position, created_at=NOW, chars=chars
    )


OUTLINE = (
    _outline("d1", "Research", position=0, chars=40),
    _outline("d2", "Interviews", parent="d1", position=0, chars=2_400),
    _outline("d3", "Competitors", parent="d1", position=1),
    _outline("d4", "Brand book", position=1),
)


def test_the_project_pack_summarizes_the_workspace_and_sizes_its_documents() -> None:
    later = NOW.replace(day=5)
    digest = ProjectDigest(
        documents=OUTLINE,
        counts={"document": 4, "task": 1, "goal": 2},
        recent=(
            EntityChange(id="t1", kind="task", name="Renew SSL", created_at=NOW, updated_at=later),
            EntityChange(
                id="d4", kind="document", name="Brand book", created_at=NOW, updated_at=NOW
            ),
        ),
    )
    text = context_packs.project_pack(PROJECT, OUTLINE, digest).render()

    assert "Workspace: 4 documents, 2 goals, 1 task." in text
    assert "- 05 Mar 2026: updated task “Renew SSL” [t1]" in text
    assert "- 02 Mar 2026: created document “Brand book” [d4]" in text
    assert "- Research [d1] (40 chars)\n  - Interviews [d2] (2.4k chars)" in text
    assert "  - Competitors [d3]\n- Brand book [d4]" in text, "no size for an empty document"


def test_the_global_pack_lists_the_projects_only_when_given_an_overview() -> None:
    overview = TenantOverview(
        projects=(
            ProjectBrief(
                id="p2",
                name="Bakery",
                domain="bakery.example",
                counts={"document": 2},
                top_documents=("Menu", "Prices"),
            ),
            ProjectBrief(id="p1", name="Aquaverter", domain=None, counts={}, top_documents=()),
        ),
        total=3,
    )
    text = context_packs.global_pack(NOW, ROSTER, overview).render()
    none = context_packs.global_pack(NOW, ROSTER, TenantOverview(projects=(), total=0)).render()

    assert "Projects (3, the newest 2 of 3):" in text
    assert "- Bakery [p2], bakery.example: 2 documents; documents “Menu”, “Prices”" in text
    assert "- Aquaverter [p1]: no entities yet" in text
    assert "Projects: none yet." in none
    assert "Projects" not in context_packs.global_pack(NOW, ROSTER).render()


def test_a_focused_document_shows_its_path_and_the_documents_around_it() -> None:
    doc = _doc("d2", "Interviews", parent="d1").model_copy(update={"data": {"body": "Q&A"}})
    goal = _doc("g1", "Know the buyers").model_copy(update={"kind": "goal", "data": {}})
    edge = WorkspaceEdge(id="e1", from_id="d2", to_id="g1", relation="supports")

    text = context_packs.entity_pack("d2", doc, [(edge, goal)], OUTLINE).render()
    linked_doc = context_packs.entity_pack("g1", goal, [(edge, doc)], OUTLINE).render()

    assert "In focus: the document “Interviews” [d2].\nPath: Research / Interviews" in text
    assert "- body: Q&A" in text, "its full payload"
    assert "- supports → goal “Know the buyers” [g1]" in text
    assert "Related documents:\n- parent: “Research” [d1]\n- sibling: “Competitors” [d3]" in text
    assert "- ← supports document “Interviews” [d2] at Research / Interviews" in linked_doc
    assert "Path:" not in linked_doc and "Related documents" not in linked_doc


def test_the_rules_pack_says_the_scope_and_is_the_same_for_every_agent() -> None:
    cross = ProjectContext()
    goal = _doc("g1", "Launch").model_copy(update={"kind": "goal"})

    project = prompts.rules_pack(PROJECT).render()
    everywhere = prompts.rules_pack(cross).render()
    focused = prompts.rules_pack(PROJECT, "g1", goal).render()

    assert "Scope: the project Aquaverter" in project and prompts.DOCUMENT_FIRST in project
    assert "Scope: global" in everywhere and prompts.DOCUMENT_FIRST not in everywhere
    assert "Scope: the goal “Launch” of the project Aquaverter" in focused
    assert all(prompts.SAFETY in t and prompts.MODES in t for t in (project, everywhere, focused))
    lead = _agent("chief")
    assert prompts.TOOL_RULES in prompts.persona(_agent("seoSpecialist"), lead=lead, tools=True)
    assert prompts.TOOL_RULES not in prompts.persona(_agent("seoSpecialist"), lead=lead)


def test_a_small_window_drops_the_document_guidance_before_the_scope_and_safety() -> None:
    packs = (prompts.rules_pack(PROJECT), context_packs.project_pack(PROJECT, OUTLINE))
    rules_cost = sum(i.tokens for i in packs[0].items)
    window = int((rules_cost - 30) / context_budget.PACKS_SHARE) + 1

    fitted = fit(_parts(window + 2_000, packs=packs))
    small = fit(_parts(window, reply=10, tools=0, packs=packs))

    assert prompts.DOCUMENT_FIRST in fitted.prompt[0].content
    system = small.prompt[0].content
    assert prompts.SAFETY in system and "Scope: the project Aquaverter" in system
    assert prompts.DOCUMENT_FIRST not in system
    assert ("rules", "document guidance: 1 of 1 lines") in [
        (d.section, d.what) for d in small.dropped
    ]
