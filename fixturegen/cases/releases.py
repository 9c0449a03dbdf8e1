"""Which cases each fixturegen release carries: ``fixturegen/data/releases.json``.

One entry per version, newest last: its catalogue version and its case ids. The entry of the
version being made (``released`` null) follows the catalogue: ``make generated`` rewrites it.
An entry with a release date is frozen: ``make generated`` keeps it as it is. So the file (and
the page made from it, ``docs/reference/releases.md``) says which cases each release added and
removed, and a maintainer who sees a new divergence can tell whether its case is new.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fixturegen import __version__
from fixturegen.cases.model import CATALOGUE, catalogue_version

PATH = Path(__file__).resolve().parent.parent / "data" / "releases.json"


@dataclass(frozen=True)
class Release:
    version: str
    released: str | None  # the release's date (YYYY-MM-DD); None while it is being made
    catalogue: str
    cases: tuple[str, ...]


def load(path: Path = PATH) -> list[Release]:
    """The releases of the file, oldest first (none when it is missing)."""
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Release(r["version"], r.get("released"), r["catalogue"], tuple(r["cases"]))
            for r in data["releases"]]


def current() -> Release:
    """This version's entry, as the catalogue stands."""
    return Release(__version__, None, catalogue_version(),
                   tuple(sorted(c.id for c in CATALOGUE)))


def updated(releases: list[Release]) -> list[Release]:
    """``releases`` with this version's entry made from the catalogue, unless it is released
    (then it stays as it is)."""
    kept = [r for r in releases if r.version != __version__ or r.released is not None]
    if any(r.version == __version__ for r in kept):
        return kept
    return [*kept, current()]


def text(releases: list[Release]) -> str:
    """The file's JSON."""
    data = {"releases": [{"version": r.version, "released": r.released,
                          "catalogue": r.catalogue, "cases": list(r.cases)}
                         for r in releases]}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def changes(releases: list[Release]) -> list[tuple[Release, list[str], list[str]]]:
    """Each release with the case ids it added and removed since the one before."""
    out = []
    before: set[str] = set()
    for r in releases:
        now = set(r.cases)
        out.append((r, sorted(now - before), sorted(before - now)))
        before = now
    return out
