"""Render ``out/README.md`` from the Jinja2 template in ``templates/``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from fixturegen.markdown import code, md
from fixturegen.model.manifest import Fixture, Manifest

#: Package data (``fixturegen/data/templates``; in a checkout a link to ``templates/``).
TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "templates"


def environment() -> Environment:
    """The Markdown templates' environment: input text goes through its ``code`` and ``md``
    filters (``fixturegen.markdown``), never raw."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["code"] = code
    env.filters["md"] = md
    return env


@dataclass(frozen=True)
class Group:
    """One row of the README's table: a case declared alone, or a family (its id template,
    its parameters' names and its fixtures, in manifest order)."""

    id: str
    parameters: tuple[str, ...]
    fixtures: tuple[Fixture, ...]

    @property
    def anchor(self) -> str:
        """The README's link target of a family: from its id, so that it stays put."""
        return "family-" + re.sub(r"[^a-z0-9]+", "-", self.id.lower()).strip("-")

    @property
    def host_key_types(self) -> list[str]:
        return list(dict.fromkeys(f.host_key.type if f.host_key else "none"
                                  for f in self.fixtures))


def groups(fixtures: list[Fixture]) -> list[Group]:
    """The manifest's fixtures by family, each family where its first fixture is."""
    members: dict[str, list[Fixture]] = {}
    for f in fixtures:
        members.setdefault(f.family.id if f.family else f.id, []).append(f)
    out = []
    for key, fs in members.items():
        family = fs[0].family
        out.append(Group(key, tuple(family.parameters) if family else (), tuple(fs)))
    return out


def render_readme(manifest: Manifest, *, imported: bool = False) -> str:
    """The corpus README (``imported``: a corpus ``fixturegen import`` made)."""
    return environment().get_template("corpus-README.md.j2").render(
        m=manifest, imported=imported, groups=groups(manifest.fixtures))
