"""docs/architecture.md names only modules that exist: every `path.py` (and `path.py:Name`)
it cites, and every module listed in its package map, is in the source tree."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "hansa"
DOC = ROOT / "docs" / "architecture.md"
BASES = (SOURCE, SOURCE / "engine", ROOT)
"""Where a cited path may start: the package, its engine, or the repository."""

_CITED = re.compile(r"`([\w./]+\.py)(?::(\w+))?")
_DEFINED = r"^\s*(?:async def|def|class)\s+{name}\b|^\s*{name}\s*[:=]"


def _resolve(path: str) -> Path | None:
    return next((base / path for base in BASES if (base / path).is_file()), None)


def _cited() -> list[tuple[str, str | None]]:
    return [(m[1], m[2]) for m in _CITED.finditer(DOC.read_text())]


def _mapped() -> list[str]:
    """The package map: a line that starts with a package (``engine/turns/``) lists that
    package's modules (``pipeline.py``) and subpackages (``stages/``)."""
    fence = DOC.read_text().split("```")[1]
    found = []
    for line in fence.splitlines():
        words = re.findall(r"[\w./]+", line)
        if not words or not words[0].endswith("/") or not (SOURCE / words[0]).is_dir():
            continue
        found += [words[0] + w for w in words[1:] if w.endswith((".py", "/"))]
    return found


def test_the_doc_cites_modules_and_has_a_package_map() -> None:
    assert len(_cited()) > 40 and len(_mapped()) > 200


def test_every_cited_module_exists() -> None:
    missing = []
    for path, name in set(_cited()):
        found = _resolve(path)
        pattern = re.compile(_DEFINED.format(name=re.escape(name or "")), re.MULTILINE)
        if found is None or (name is not None and not pattern.search(found.read_text())):
            missing.append(f"{path}:{name}" if name else path)
    assert not sorted(missing), "docs/architecture.md cites what does not exist"


def test_every_module_of_the_package_map_exists() -> None:
    missing = [
        p
        for p in _mapped()
        if not ((SOURCE / p).is_dir() if p.endswith("/") else (SOURCE / p).is_file())
    ]
    assert not missing


def test_the_package_map_lists_every_module_of_its_packages() -> None:
    mapped = set(_mapped())
    packages = {p.rsplit("/", 1)[0] for p in mapped if p.endswith(".py")}
    modules = {
        f"{package}/{f.name}"
        for package in packages
        for f in (SOURCE / package).glob("*.py")
        if f.name != "__init__.py"
    }
    assert not sorted(modules - mapped), "modules the package map does not name"
