"""mkdocs hooks (mkdocs.yml ``hooks:``): the build fails while a generated page is stale or
the Results pages' data is not a run over the current catalogue, the Results pages are rendered
from ``docs/results/page.json``, and the shipped JSON schemas are
published beside the pages (``schemas/NAME.schema.json``) so that the format pages link to
them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files, InclusionLevel

ROOT = Path(__file__).resolve().parents[1]


def _importable() -> None:
    """mkdocs loads this file by its path: make the checkout's ``tools`` importable."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def on_pre_build(config: Any) -> None:
    _importable()
    from tools.docpages import results_stale
    from tools.generated import orphans, stale

    problems = [f"stale: {p.relative_to(ROOT)}" for p in stale()]
    problems += [f"orphan: {p.relative_to(ROOT)}" for p in orphans()]
    if problems:
        raise PluginError("generated pages are out of date (run 'make generated'): "
                          + "; ".join(problems))
    if (why := results_stale()) is not None:
        raise PluginError(why)


def on_files(files: Files, config: Any) -> Files:
    _importable()
    from tools.docpages import results

    for name, text in results().items():  # a case page is reached from the matrix, not the nav
        hidden = name.startswith("cases/") and name != "cases/index.md"
        files.append(File.generated(config, f"results/{name}", content=text,
                                    inclusion=InclusionLevel.NOT_IN_NAV if hidden
                                    else InclusionLevel.UNDEFINED))
    for schema in sorted((ROOT / "fixturegen" / "schemas").glob("*.schema.json")):
        files.append(File.generated(config, f"schemas/{schema.name}",
                                    abs_src_path=str(schema)))
    return files
