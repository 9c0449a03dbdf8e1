"""Render ``out/README.md`` from the Jinja2 template in ``templates/``."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from fixturegen.model.manifest import Manifest

#: Package data (``fixturegen/data/templates``; in a checkout a link to ``templates/``).
TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "templates"


def environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render_readme(manifest: Manifest, *, imported: bool = False) -> str:
    """The corpus README (``imported``: a corpus ``fixturegen import`` made)."""
    return environment().get_template("corpus-README.md.j2").render(m=manifest,
                                                                    imported=imported)
