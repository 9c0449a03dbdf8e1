"""The pages that say which implementations fixturegen runs name every shipped adapter and
count them right (the count once drifted: four on the home page, five in the notes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixturegen.harness.adapters import SHIPPED

ROOT = Path(__file__).resolve().parents[1]
WORDS = {4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


@pytest.mark.parametrize("page", ["README.md", "docs/index.md", "docs/guides/validate.md",
                                  "docs/results/notes.md"])
def test_the_page_counts_every_shipped_adapter(page: str) -> None:
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    count = WORDS[len(SHIPPED)]
    said = re.search(rf"\b{count}\b[^.]*?(implementations|adapters)", text, re.I)
    assert said is not None, f"{page} does not say {count} implementations"
    if page != "docs/results/notes.md":
        for adapter in SHIPPED:
            assert adapter.name in text, f"{page} does not name {adapter.name}"
