"""The seed's Services scenario (seed 000 §16.3) answered in plain words through the panel
(issue 30, gap 1): the values in the order Hans asked them, separated by commas, no labels.
The conversation is written to the artifacts as a transcript (what the user typed, what
Hans answered)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

SERVICES = "Please create a new webpage called Services"
PLAIN = "English, homeowners in Ontario, water filtration, B"


def test_the_services_page_answered_in_plain_words(
    page: Page, panel, api, aquaverter, artifacts: Path
) -> None:
    panel.open()
    project = page.get_by_role("combobox", name="Project")
    project.select_option(label=f"{aquaverter['name']} ({aquaverter['domain']})")
    panel.send(SERVICES)
    questions = panel.answer("Before I plan this I need a few details")
    expect(questions.locator("ol li")).to_have_count(4)

    panel.send(PLAIN)
    understood = panel.answer("I understood")
    expect(understood).to_contain_text(
        "I understood: Language “English”; Audience “homeowners in Ontario”; "
        "SEO angle “water filtration”; Layout B: Services by category."
    )
    plan = page.locator(".plan-card")
    expect(plan).to_be_visible()
    expect(plan.locator(".card-title")).to_have_text("Create the Services page")
    expect(plan.locator(".pill")).to_have_text("Waiting for your approval")

    cid = panel.conversation_id()
    stored = api.get(f"/api/conversations/{cid}")["metadata"]["planning"]["plan"]
    values = {r["name"]: (r["value"], r["source"]) for r in stored["requirements"]}
    assert values == {
        "title": ("Services", "request"),
        "slug": ("services", "derived"),
        "language": ("English", "user"),
        "audience": ("homeowners in Ontario", "user"),
        "seo_angle": ("water filtration", "user"),
        "layout": ("B", "user"),
    }

    panel.send("yes, proceed")
    expect(panel.answer("Done: Create the Services page")).to_be_visible(timeout=60_000)
    messages = api.get(f"/api/conversations/{cid}/messages")
    lines = []
    for m in messages:
        if m["kind"] == "user":
            lines.append(f"USER: {m['content']}")
        elif m["kind"] == "assistant":
            lines.append(f"HANS ({m['agentId']}): {m['content']}")
    (artifacts / "services_plain_words_transcript.txt").write_text("\n\n".join(lines) + "\n")
    assert any("I understood" in line for line in lines)
