"""The panel's first render of a long conversation, in real Chromium (target: the 200th
message painted within 1 s of navigation start).

Starts ``hansa serve`` (scripted model, fresh SQLite file, local mode), makes a conversation
of 100 turns (200 messages), then opens the panel on it in fresh browser contexts (no cache):
one warm-up load, then N measured loads. A script installed before the panel's own records
the time at the frame after the 200th message is in the document.

    python bench/panel_first_render.py [--loads 5] [--record]

Chromium: Debian's (``apt-get install chromium``) or ``HANSA_CHROMIUM``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import Browser, sync_playwright

from _server import hansa_server, record

TARGET_MS = 1000.0
TURNS = 100
CHROMIUM = os.environ.get("HANSA_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
WATCH = f"""
window.__firstRender = null;
new MutationObserver((_, observer) => {{
    if (document.querySelectorAll('.msg[data-id]').length >= {2 * TURNS}) {{
        observer.disconnect();
        requestAnimationFrame(() => {{
            window.__firstRender = performance.now();
            document.documentElement.dataset.firstRender = "done";
        }});
    }}
}}).observe(document, {{childList: true, subtree: true}});
"""


def long_conversation(url: str) -> str:
    """A conversation of ``TURNS`` answered notes."""
    with httpx.Client(base_url=url, timeout=30) as client:
        cid = str(client.post("/api/conversations", json={}).json()["id"])
        for i in range(TURNS):
            posted = client.post(
                f"/api/conversations/{cid}/messages", json={"content": f"Note {i + 1}"}
            )
            posted.raise_for_status()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            shown = client.get(f"/api/conversations/{cid}/messages").json()
            if sum(m["kind"] in ("user", "assistant") for m in shown) >= 2 * TURNS:
                return cid
            time.sleep(0.25)
    raise RuntimeError("the conversation's turns did not finish")


def first_render(browser: Browser, url: str) -> float:
    """Milliseconds from navigation start to the 200th message painted, in a fresh context."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = context.new_page()
        page.add_init_script(WATCH)
        page.goto(url)
        page.wait_for_selector("html[data-first-render]", state="attached", timeout=30_000)
        return float(page.evaluate("window.__firstRender"))
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=5, help="measured loads (default 5)")
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        hansa_server(Path(tmp), "--model", "scripted") as url,
    ):
        cid = long_conversation(url)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page_url = f"{url}/#c={cid}"
                warm = first_render(browser, page_url)
                times = [first_render(browser, page_url) for _ in range(args.loads)]
            finally:
                browser.close()
    median = statistics.median(times)
    verdict = "met" if median <= TARGET_MS else "not met"
    report = "\n".join(
        [
            f"## The panel's first render of {2 * TURNS} messages (its page-load budget)",
            "",
            f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, "
            f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
            f"Chromium, fresh context per load (no cache).",
            "",
            "| | ms |",
            "|---|---|",
            f"| warm-up load | {warm:.0f} |",
            f"| {args.loads} loads: median | {median:.0f} |",
            f"| {args.loads} loads: slowest | {max(times):.0f} |",
            f"| target | ≤ {TARGET_MS:.0f} ({verdict}) |",
            "",
            "Reproduce: `.venv/bin/python bench/panel_first_render.py --record`.",
        ]
    )
    print(report)
    if args.record:
        record("panel_first_render", report)


if __name__ == "__main__":
    main()
