"""The Results pages cannot go stale: their data (docs/results/page.json) must come from a run
over the current catalogue, with the default seed and no API entry for an implementation that
has none; make docs fails otherwise (tools/mkdocs_hooks.py), and so does this test."""

from __future__ import annotations

from fixturegen.cases import CATALOGUE
from fixturegen.harness.pagedata import load_page_data
from tools.docpages import REFRESH, RESULTS_DATA, results_stale


def test_the_results_pages_come_from_a_run_over_this_catalogue() -> None:
    assert results_stale() is None


def test_a_stale_page_says_why_and_how_to_refresh() -> None:
    data = load_page_data(RESULTS_DATA)
    fewer = data.model_copy(update={"cases": [c for c in data.cases if c.id != CATALOGUE[0].id]})
    why = results_stale(fewer)
    assert why is not None and "(1 new, 0 gone)" in why and why.endswith(REFRESH)
    seeded = data.model_copy(update={"seed": "another"})
    assert "its seed is 'another', not 'libp2p-fixturegen'" in (results_stale(seeded) or "")
    entry = data.entries[0].model_copy(update={"label": "litep2p", "name": "litep2p"})
    with_api = data.model_copy(update={"entries": [*data.entries, entry]})
    assert "an API entry for litep2p, which has no API mode" in (results_stale(with_api) or "")
