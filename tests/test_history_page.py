"""The historical record (docs/results/history.md, issue 38) says which fixturegen run shows
each released bug. These checks keep the page honest where it can go stale without a run: every
test it names is a ``make builds-check`` test that exists, every case id it cites is a case of
the latest conformance run (docs/results/page.json, which ``make docs`` checks is a run over
this catalogue), and its summary counts the rows below it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results" / "history.md"
CASE = re.compile(r"`((?:valid|invalid|acceptable|matrix|fault-twin|ps|rule|clock|boundary)"
                  r"\.[A-Za-z0-9._-]+)`")


def _sections(text: str) -> dict[str, list[str]]:
    """Each ``## NAME`` section's table rows (without the header and its rule)."""
    out: dict[str, list[str]] = {}
    name = None
    for line in text.splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            out[name] = []
        elif name is not None and line.startswith("| ") and not line.startswith("|---"):
            out[name].append(line)
    return {k: rows[1:] for k, rows in out.items()}  # the first row is the header


def test_every_test_the_history_names_is_a_builds_check_test() -> None:
    text = PAGE.read_text()
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", text))
    tree = ast.parse((ROOT / "tests" / "test_real_builds.py").read_text())
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    marked = any(isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "pytestmark"
                 and "builds" in ast.unparse(node.value) for node in tree.body)
    assert marked  # the module is make builds-check's
    assert len(named) >= 5
    assert named <= defined, sorted(named - defined)


def test_every_case_the_history_cites_is_a_case_of_the_latest_run() -> None:
    cited = set(CASE.findall(PAGE.read_text()))
    run = json.loads((ROOT / "docs" / "results" / "page.json").read_text())
    cases = {c["id"] for c in run["cases"]}
    assert len(cited) >= 10  # the pattern finds them
    assert cited <= cases, sorted(cited - cases)


def test_the_summary_counts_the_rows() -> None:
    sections = _sections(PAGE.read_text())
    summary = {row.split("|")[1].strip(): row for row in sections["Summary"]}
    total = shown = 0
    for name in ("go-libp2p", "rust-libp2p", "js-libp2p", "py-libp2p", "litep2p"):
        rows = sections[name]
        yes = sum("**Shown" in row for row in rows)
        cells = [c.strip() for c in summary[name].split("|")[1:-1]]
        assert int(cells[1].split()[0]) == len(rows), name
        assert (int(cells[2]), int(cells[3])) == (yes, len(rows) - yes), name
        total, shown = total + len(rows), shown + yes
    others = len(sections["Without an adapter"])
    cells = [c.strip(" *") for c in summary["**all**"].split("|")[1:-1]]
    assert (int(cells[1]), int(cells[2])) == (total + others, shown)
