"""The site's case pages (``tools/casepages.py``): each case's certificate, as the run was sent
it, its expected result, and what every entry of the latest conformance run answered, one click
from the matrix."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest

from fixturegen.cases import CATALOGUE
from fixturegen.harness.pagedata import OUTCOME_OF, PageData, load_page_data
from tools import casepages
from tools.docpages import RESULTS_DATA, results_pages

#: A family of one, a family of eleven (one per certificate scheme) and a chain of two.
FAMILIES = ("acceptable.cost.rsa-host-key-24kib", "invalid.self-signature-corrupted.{scheme}",
            "invalid.two-certificates")
#: What an entry's answer must be for each outcome, when the outcome alone decides it.
ANSWER_OF = {("agree", "valid"): "accepted", ("agree", "invalid"): "rejected",
             ("false_accept", "invalid"): "accepted", ("false_reject", "valid"): "rejected",
             ("wrong_reason", "invalid"): "rejected"}


@pytest.fixture(scope="module")
def data() -> PageData:
    return load_page_data(RESULTS_DATA)


@pytest.fixture(scope="module")
def pages(data: PageData) -> dict[str, str]:
    return casepages.pages(data, FAMILIES)


def _section(page: str, case_id: str) -> str:
    start = page.index(f"## `{case_id}` {{ #{case_id} }}")
    end = page.find("\n## `", start + 1)
    return page[start:end if end > 0 else len(page)]


def _pems(section: str) -> list[bytes]:
    return [base64.b64decode("".join(body.split()))
            for body in re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----",
                                   section, re.S)]


def test_a_case_page_shows_the_certificates_the_run_was_sent(
        pages: dict[str, str], corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    members = [c for c in CATALOGUE if c.family in FAMILIES]
    assert len(members) >= 13
    for c in members:
        page = pages[f"cases/{casepages.page_names()[c.family]}.md"]
        section = _section(page, c.id)
        chain = [(corpus / p).read_bytes() for p in fixtures[c.id]["chain"]]
        assert _pems(section) == chain, c.id  # the generated corpus's files, byte for byte
        assert section.count("decoded</summary>") == len(chain)
        assert f"Expected: **{c.result}**" in section
    two = _section(pages["cases/invalid.two-certificates.md"], "invalid.two-certificates")
    assert "Certificate 2 of 2: PEM" in two


def test_every_entry_answers_what_its_outcome_says(data: PageData,
                                                   pages: dict[str, str]) -> None:
    at = data.case_index()
    checked = 0
    for c in (c for c in CATALOGUE if c.family in FAMILIES):
        rows = [line.split(" | ") for line in _section(
            pages[f"cases/{casepages.page_names()[c.family]}.md"], c.id).splitlines()
            if line.startswith("| ") and not line.startswith(("| entry", "|---"))]
        assert [r[0].lstrip("| ") for r in rows] == [e.label for e in data.entries]
        for row, e in zip(rows, data.entries, strict=True):
            letter = e.outcomes[at[c.id]]
            if letter == "-":
                assert row[1] == "not sent"
                continue
            outcome = OUTCOME_OF[letter]
            assert outcome.replace("_", " ") in row[2]
            if (want := ANSWER_OF.get((outcome, c.result))) is not None:
                assert row[1] == want, (c.id, e.label)
                checked += 1
            if row[1] == "rejected" and e.said[at[c.id]] >= 0:
                assert row[3].rstrip(" |")  # what it said is shown
    assert checked > 100


def test_the_matrix_links_each_case_to_its_page(data: PageData) -> None:
    matrix = results_pages(data)["matrix.md"]
    names = casepages.page_names()
    for c in CATALOGUE:
        assert f'href="cases/{names[c.family]}.html#{c.id}"' in matrix, c.id
    assert len(set(names.values())) == len(names)  # one page per family, none shared


def test_the_index_names_every_family_once() -> None:
    index = casepages.index()
    names = casepages.page_names()
    links = re.findall(r"\(([^()]+)\.md\) \((\d+) cases?\)", index)
    assert sorted(page for page, _ in links) == sorted(names.values())
    assert sum(int(n) for _, n in links) == len(CATALOGUE)
    assert casepages.slug("invalid.fault.host-key.truncated.{host}.{scheme}.{placement}") == \
        "invalid.fault.host-key.truncated"


def test_a_case_with_a_second_right_reason_names_it(data: PageData) -> None:
    page = casepages.pages(data, ("invalid.validity-inverted", "invalid.expired"))
    inverted = _section(page[f"cases/{casepages.page_names()['invalid.validity-inverted']}.md"],
                        "invalid.validity-inverted")
    assert ("(the reference verifier: `not_yet_valid`; also a right reason: `expired`)"
            in inverted)
    expired = _section(page[f"cases/{casepages.page_names()['invalid.expired']}.md"],
                       "invalid.expired")
    assert "(the reference verifier: `expired`)" in expired and "also" not in expired
