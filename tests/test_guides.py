"""Guides hold how-tos; output is tested or dated (issue 40). Every block of command output in
a guide or the README is produced by the docs check: a ``text`` block follows an
``<!-- output -->`` marker, which follows a runnable example (``make docs-check`` runs it and
compares). Output nothing re-runs belongs on a dated results page (docs/results/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guides").glob("*.md"))]
FENCE = re.compile(r"^(`{3,})(\w*)(.*)$")


def hand_kept(text: str) -> list[int]:
    """The lines of ``text`` that open an output block no runnable example produces."""
    lines = text.splitlines()
    found: list[int] = []
    runnable = False  # the last fenced block opened was a runnable example
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        before = [x.strip() for x in lines[max(0, i - 3):i] if x.strip()]
        marker = before[-1] if before else ""
        if marker.startswith("<!-- runnable") and "title=" in match.group(3):
            runnable = False  # a file the docs check writes before it runs the examples
        elif match.group(2) in ("text", "console", "output", ""):
            if not (marker.startswith("<!-- output") and runnable):
                found.append(i + 1)
            runnable = False
        else:
            runnable = marker.startswith("<!-- runnable")
        fence = match.group(1)
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            i += 1
        i += 1
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_output_in_a_guide_is_produced_by_the_docs_check(page: Path) -> None:
    assert hand_kept(page.read_text()) == []


def test_the_scan_finds_hand_kept_output() -> None:
    kept = "Run it:\n\n```sh\nfixturegen list\n```\n\n```text\n699 cases\n```\n"
    tested = ("<!-- runnable -->\n```sh\nfixturegen list\n```\n\n<!-- output -->\n```text\n"
              "...\n```\n")
    marker_only = "<!-- output -->\n```text\nnot after a runnable block\n```\n"
    assert hand_kept(kept) == [7]
    assert hand_kept(tested) == []
    assert hand_kept(marker_only) == [2]
