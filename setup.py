"""The wheel carries the shipped adapters (everything else is in pyproject.toml).

``build_py`` copies ``adapters/`` into the package as ``fixturegen/shipped/adapters``, less what
``adapters/.gitignore`` names (the build outputs: a checkout where ``make adapters`` ran builds
the same wheel as a fresh clone), so that an installed fixturegen can build and run every
shipped adapter (``fixturegen.harness.adapters.installed_adapters``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ADAPTERS = HERE / "adapters"
#: Never shipped wherever they are (caches of the tools run in the folder).
ALWAYS_LEFT_OUT = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


def left_out(folder: Path) -> set[str]:
    """The paths under ``folder`` its .gitignore names (plain paths, a folder's with '/')."""
    ignore = folder / ".gitignore"
    if not ignore.is_file():
        return set()
    lines = ignore.read_text(encoding="utf-8").splitlines()
    return {line.strip().rstrip("/") for line in lines if line.strip()
            and not line.startswith("#")}


def shipped_files(folder: Path) -> list[Path]:
    """The adapters' files, as relative paths, in a fixed order."""
    skip = left_out(folder)
    found: list[Path] = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        parts = rel.parts
        if any(p in ALWAYS_LEFT_OUT for p in parts):
            continue
        if any("/".join(parts[:n]) in skip for n in range(1, len(parts) + 1)):
            continue
        if path.is_file():
            found.append(rel)
    return found


class BuildPyWithAdapters(build_py):
    def run(self) -> None:
        super().run()
        if not ADAPTERS.is_dir():  # an sdist without them cannot make a complete wheel
            raise SystemExit("setup.py: no adapters/ folder beside setup.py")
        dest = Path(self.build_lib) / "fixturegen" / "shipped" / "adapters"
        if dest.exists():
            shutil.rmtree(dest)
        for rel in shipped_files(ADAPTERS):
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ADAPTERS / rel, target)


setup(cmdclass={"build_py": BuildPyWithAdapters})
