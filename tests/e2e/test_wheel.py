"""The wheel is the product: built from the source, installed (not editable, without the
``local`` extra) into a fresh virtual environment, it serves a plain turn and the
Services page's plan through to the stored page. A data file the wheel forgot (the
playbooks, the migrations, the panel) fails this test, as it would fail a user."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import (
    Server,
    events_until,
    hans_says,
    new_conversation,
    run_done,
    running_server,
    turn,
    wordpress_project,
)

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"


@dataclass(frozen=True)
class Installed:
    wheel: Path
    bin: Path
    """The fresh environment's ``bin`` directory."""
    home: Path
    """A directory outside the source tree to run from."""


ALONE = {"PYTHONPATH": ""}
"""Nothing but the environment's own packages: not the source tree, not a checkout."""


def _run(*args: str | Path, cwd: Path | None = None) -> str:
    env = {**os.environ, **ALONE}
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, timeout=240
    )
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("wheel")
    # build from a copy: the checkout's own build/ may hold files since removed
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=junk)
    pip = (sys.executable, "-m", "pip")
    _run(*pip, "wheel", "--quiet", "--no-deps", "--wheel-dir", tmp / "dist", source)
    (wheel,) = (tmp / "dist").glob("hansa-*.whl")

    venv = tmp / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    # this environment's pip installs into the new one; the pins keep the resolver quick
    _run(*pip, "--python", venv / "bin" / "python", "install", "--quiet", "-c",
         ROOT / "constraints.txt", wheel)  # fmt: skip
    home = tmp / "home"
    home.mkdir()
    return Installed(wheel, venv / "bin", home)


@pytest.fixture(scope="module")
def server(installed: Installed) -> Iterator[Server]:
    hansa = (str(installed.bin / "hansa"),)
    with running_server(installed.home, hansa=hansa, cwd=installed.home, env=ALONE) as s:
        yield s


def test_the_wheel_carries_its_data_types_and_license(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert "hansa/py.typed" in names
    assert "hansa/engine/planning/playbooks.toml" in names
    assert "hansa/web/static/index.html" in names
    assert any(n.startswith("hansa/store/migrations/versions/0001") for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(installed.wheel).read(metadata).decode()
    assert "License-Expression: Apache-2.0" in text
    assert "Requires-Dist: fastapi<1,>=0.163" in text, "ranges, not pins"


def test_the_installed_command_knows_its_version_and_runs_from_the_wheel(
    installed: Installed,
) -> None:
    version = _run(installed.bin / "hansa", "--version", cwd=installed.home)
    assert version.strip() == f"hansa {installed.wheel.name.split('-')[1]}"
    where = _run(
        installed.bin / "python", "-c", "import hansa; print(hansa.__file__)", cwd=installed.home
    )
    assert Path(where.strip()).is_relative_to(installed.bin.parent), "not the source tree"
    probe = "import importlib.util as u; print(u.find_spec('llama_cpp'))"
    assert _run(installed.bin / "python", "-c", probe).strip() == "None", "no local extra"


def test_a_plain_turn_completes(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        events = turn(client, cid, "Hello, who are you?")
    assert events[-1]["type"] == "done" and events[-1]["data"]["status"] == "completed"
    assert hans_says(events), "an answer"


def test_the_services_page_plan_runs_to_a_stored_page(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        questions = hans_says(turn(client, cid, "Please create a new webpage called Services"))
        second = turn(client, cid, ANSWERS)
        run_id = next(e for e in second if e["type"] == "plan")["data"]["runId"]
        third = turn(client, cid, "yes, proceed")
        finished = events_until(client, cid, run_done(run_id), after=third[-1]["seq"])
        card = client.get(f"/api/runs/{run_id}").json()
        page = client.get(card["groups"][1]["tasks"][0]["result"]["url"])
    assert "Goal: A new Services page for Aquaverter" in questions[0]
    assert card["status"] == "completed"
    assert [t["status"] for g in card["groups"] for t in g["tasks"]] == ["completed"] * 4
    assert page.status_code == 200 and "<title>Services</title>" in page.text
    assert hans_says(finished)[-1].startswith("Done: Create the Services page")
