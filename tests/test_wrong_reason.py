"""The outcome ``wrong_reason``: each rejection's error text mapped through a reason table to
the reference's error codes, and an invalid case rejected for another check's reason, in every
report (results.json, summary, JUnit, the HTML page, findings, the known list, diff)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fixturegen.harness.adapters import SHIPPED
from fixturegen.harness.clock import CLOCK_CASES, LATE_CASES
from fixturegen.harness.compare import outcome
from fixturegen.harness.pagedata import LETTERS, groups, page_data
from fixturegen.harness.reasons import load_table, reason_of
from fixturegen.harness.requests import Expectation
from fixturegen.harness.results import load_results, results_schema
from fixturegen.verify.codes import ErrorCode

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"

#: A real process on the harness protocol that rejects every certificate: "bad self-signature"
#: (which the table below reads as certificate_signature_invalid), or, for the duplicate
#: extension cases, a text no row matches.
PICKY = """import json, sys
for line in sys.stdin:
    r = json.loads(line)
    said = 'lost in thought' if 'extension-duplicate' in r['id'] else 'bad self-signature'
    print(json.dumps({'id': r['id'], 'verdict': 'reject', 'peer_id': None, 'error': said}),
          flush=True)
"""
TABLE = [{"pattern": "self-signature", "codes": ["certificate_signature_invalid"]}]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def picky(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> dict[str, Path]:
    """Two real runs of the same adapter: with its reason table, and without one."""
    folder = tmp_path_factory.mktemp("wrong-reason")
    adapter = folder / "picky.py"
    adapter.write_text(PICKY)
    table = folder / "picky.errors.json"
    table.write_text(json.dumps(TABLE))
    runs = {"table": table}
    for key, extra in (("with", ["--reasons", str(table)]), ("without", [])):
        out = folder / key
        p = cli("harness", "run", "--corpus", str(corpus), "--out", str(out),
                "--no-transcripts", "--no-interop", "--name", "picky", *extra, "--",
                sys.executable, str(adapter))
        assert p.returncode == 0, p.stderr
        (out / "stdout.txt").write_text(p.stdout)
        runs[key] = out
    return runs


def cases_of(folder: Path) -> dict[str, dict[str, Any]]:
    results = json.loads((folder / "results.json").read_text())
    return {c["id"]: c for c in results["implementations"][0]["cases"]}


# -- the mapping and the outcome -------------------------------------------------------------

def test_a_rejection_maps_through_the_first_matching_row(tmp_path: Path) -> None:
    path = tmp_path / "t.errors.json"
    path.write_text(json.dumps([
        {"pattern": "duplicate extension", "codes": ["extension_duplicate"]},
        {"pattern": "extension", "codes": ["extension_malformed", "extension_missing"]}]))
    table = load_table(path)
    assert table is not None
    # First row wins, anywhere in the text, case-insensitive; the codes come back sorted.
    assert reason_of(table, "reject", "x509: Duplicate Extension 1.3.6") == [
        "extension_duplicate"]
    assert reason_of(table, "reject", "bad extension") == ["extension_malformed",
                                                           "extension_missing"]
    assert reason_of(table, "reject", "connection reset") is None  # no row: no reason
    assert reason_of(table, "reject", None) is None
    # Only a rejection has a reason: an accept's text, or the driver's text of a failure
    # (verdict None) is never read as one.
    assert reason_of(table, "accept", "bad extension") is None
    assert reason_of(table, None, "bad extension") is None
    assert reason_of(None, "reject", "bad extension") is None  # no table


def test_a_table_with_a_code_that_is_not_a_string_is_refused(tmp_path: Path) -> None:
    from fixturegen.harness.reasons import ReasonTableError

    path = tmp_path / "t.errors.json"
    path.write_text(json.dumps([{"pattern": "x", "codes": [{"not": "a code"}]}]))
    with pytest.raises(ReasonTableError, match="row 1: unknown error codes"):
        load_table(path)


INVALID = Expectation("invalid", None, "extension_missing")
INVERTED = Expectation("invalid", None, "not_yet_valid", ("expired",))


@pytest.mark.parametrize(("expected", "verdict", "failure", "reason", "want"), [
    (INVALID, "reject", None, ["extension_missing"], "agree"),
    (INVALID, "reject", None, ["extension_malformed", "extension_missing"], "agree"),
    (INVALID, "reject", None, ["extension_malformed"], "wrong_reason"),
    (INVALID, "reject", None, ["chain_length", "expired"], "wrong_reason"),
    (INVALID, "reject", None, None, "agree"),  # unknown is not wrong
    (INVALID, "reject", None, [], "agree"),
    (Expectation("invalid", None, None), "reject", None, ["expired"], "agree"),
    # Either verdict is conformant for an acceptable case, whatever the reason.
    (Expectation("acceptable", None, "unsupported_signature_scheme"), "reject", None,
     ["expired"], "acceptable"),
    (Expectation("valid", None, None), "reject", None, ["expired"], "false_reject"),
    (INVALID, "accept", None, ["expired"], "false_accept"),
    (INVALID, None, "hang", ["expired"], "hang"),
    # a case with other right reasons (expected.also): any of them is the right reason
    (INVERTED, "reject", None, ["expired"], "agree"),
    (INVERTED, "reject", None, ["not_yet_valid"], "agree"),
    (INVERTED, "reject", None, ["peer_id_mismatch"], "wrong_reason"),
])
def test_wrong_reason_outcome(expected: Expectation, verdict: str | None, failure: str | None,
                              reason: list[str] | None, want: str) -> None:
    assert outcome(expected, verdict, None, failure, reason) == want


def test_every_shipped_adapter_with_an_api_check_has_a_reviewed_table() -> None:
    codes = {code.value for code in ErrorCode}
    for adapter in SHIPPED:
        table = adapter.reasons(ADAPTERS)
        if not adapter.api:
            continue  # litep2p: handshakes only
        assert table is not None, f"{adapter.name} has no reason table"
        assert table.rows and all(row_codes <= codes for _, row_codes in table.rows)
        assert adapter.target(ADAPTERS).reasons == table


# -- the reports -----------------------------------------------------------------------------

def test_results_record_the_reason_and_the_outcome(picky: dict[str, Path]) -> None:
    results = json.loads((picky["with"] / "results.json").read_text())
    jsonschema.validate(results, results_schema())
    cases = cases_of(picky["with"])
    right = cases["invalid.self-signature-corrupted.ed25519"]
    assert right["reason"] == ["certificate_signature_invalid"] and right["outcome"] == "agree"
    wrong = cases["invalid.extension-missing"]
    assert wrong["reason"] == ["certificate_signature_invalid"]
    assert wrong["outcome"] == "wrong_reason"
    unknown = cases["invalid.extension-duplicate.same"]
    assert unknown["reason"] is None and unknown["outcome"] == "agree"
    valid = cases["matrix.ed25519.ed25519.fixed"]
    assert valid["reason"] == ["certificate_signature_invalid"]
    assert valid["outcome"] == "false_reject"
    # An acceptable case whose reference code is another: still acceptable.
    assert cases["acceptable.rsa-1024"]["outcome"] == "acceptable"
    manifest = {f["id"]: f for f in json.loads(
        (Path(results["corpus"]) / "manifest.json").read_text())["fixtures"]}
    expected_wrong = {i for i, f in manifest.items() if f["expected"]["result"] == "invalid"
                      and "extension-duplicate" not in i
                      and f["expected"]["error"] != "certificate_signature_invalid"} | {
        c.id for c in CLOCK_CASES if c.result == "invalid"} | {  # made by the run, expired
        c.id for c in LATE_CASES if c.result == "invalid"}
    assert {i for i, c in cases.items() if c["outcome"] == "wrong_reason"} == expected_wrong
    [impl] = results["implementations"]
    assert impl["counts"]["wrong_reason"] == len(expected_wrong)
    assert f"wrong_reason {len(expected_wrong)}," in (picky["with"] / "stdout.txt").read_text()
    # Without a table: no reason anywhere, and those cases agree.
    without = cases_of(picky["without"])
    assert all(c["reason"] is None for c in without.values())
    assert without["invalid.extension-missing"]["outcome"] == "agree"


def test_summary_and_junit_show_wrong_reason(picky: dict[str, Path]) -> None:
    cases = cases_of(picky["with"])
    wrong = sorted(i for i, c in cases.items() if c["outcome"] == "wrong_reason")
    md = (picky["with"] / "summary.md").read_text()
    head = next(line for line in md.splitlines() if line.startswith("| implementation"))
    row = next(line for line in md.splitlines() if line.startswith("| picky"))
    columns = [c.strip() for c in head.split("|")]
    assert row.split("|")[columns.index("wrong reason")].strip() == str(len(wrong))
    plain = re.sub(r"\\([_\[\]])", r"\1", md)
    assert ("**wrong_reason** `invalid.extension-missing`" in plain
            and "(read as certificate_signature_invalid, not extension_missing)" in plain)
    suite = ET.parse(picky["with"] / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    failures = {c.get("name"): c.find("failure") for c in suite.iter("testcase")}
    typed = sorted(str(name) for name, f in failures.items()
                   if f is not None and f.get("type") == "wrong_reason")
    assert typed == wrong
    message = failures["invalid.extension-missing"]
    assert message is not None and "expected invalid (extension_missing)" in str(
        message.get("message")) and "reason certificate_signature_invalid" in str(
        message.get("message"))


def test_the_page_marks_wrong_reason_cells_and_findings(picky: dict[str, Path]) -> None:
    cases = cases_of(picky["with"])
    wrong = {i for i, c in cases.items() if c["outcome"] == "wrong_reason"}
    d = page_data(load_results(picky["with"] / "results.json"))
    [entry] = d.entries
    assert entry.outcomes.count(LETTERS["wrong_reason"]) == len(wrong)
    assert entry.counts["wrong_reason"] == len(wrong)
    [found] = d.findings
    classes = [c for c in found.classes if c.outcome == "wrong_reason"]
    assert {case.id for c in classes for case in c.cases} == wrong
    texts = {d.texts[s.text] for c in classes for case in c.cases for s in case.said}
    assert texts == {"(read as certificate_signature_invalid) bad self-signature"}
    assert "for another reason than this rule" in classes[0].title
    # The matrix counts a wrong_reason row as divergent and links its cell to the finding.
    divergent = sum(g.divergent for g in groups(d))
    assert divergent == sum(1 for c in cases.values() if c["outcome"] != "agree"
                            and c["outcome"] != "acceptable")
    page = (picky["with"] / "index.html").read_text()
    assert len(re.findall(r'<td class=w><a href="#f0\.\d+">', page)) == len(wrong)
    assert "<th>wrong reason</th>" in page and "WR wrong reason" in page


def test_the_page_data_keeps_every_answer_and_what_was_said(picky: dict[str, Path]) -> None:
    """What the site's case pages show for every case, divergent or not."""
    cases = cases_of(picky["with"])
    d = page_data(load_results(picky["with"] / "results.json"))
    [entry] = d.entries
    assert len(entry.verdicts) == len(entry.said) == len(d.cases)
    for at, case in enumerate(d.cases):
        sent = cases.get(case.id)
        if sent is None:
            assert (entry.verdicts[at], entry.said[at]) == ("-", -1)
            continue
        assert entry.verdicts[at] == {"reject": "R", "accept": "A"}[sent["verdict"]]
        said = "lost in thought" if "extension-duplicate" in case.id else "bad self-signature"
        assert d.texts[entry.said[at]] == said


@pytest.mark.slow
def test_findings_report_wrong_reason_without_an_export(picky: dict[str, Path],
                                                        tmp_path: Path, corpus: Path) -> None:
    # Under a shipped adapter's name, its false rejects get a go export; a wrong_reason class
    # gets none (an export checks the verdict, which is right there).
    results = json.loads((picky["with"] / "results.json").read_text())
    results["implementations"][0]["name"] = "go-libp2p"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    out = tmp_path / "findings"
    p = cli("harness", "findings", str(path), "--impl", "go-libp2p", "--out", str(out),
            "--corpus", str(corpus))
    assert p.returncode == 0, p.stderr
    wrong = sorted(out.glob("*-wrong-reason-*.md"))
    assert wrong, sorted(x.name for x in out.iterdir())
    text = wrong[0].read_text()
    assert "rejects" in text and "for another reason than this rule" in text
    assert "Why it matters" in text and "read as certificate\\_signature\\_invalid" in text
    assert "Attached:" not in text and "--mode api --corpus CORPUS" in text
    assert not list(out.glob("finding_*_wrong_reason_*"))
    assert list(out.glob("finding_*_false_reject_*_test.go"))  # the others do export
    index = (out / "findings.md").read_text()
    assert index.count("| wrong\\_reason |") == len(wrong)


@pytest.mark.slow
def test_known_list_accepts_a_listed_wrong_reason_and_refuses_an_unlisted_one(
        picky: dict[str, Path], tmp_path: Path) -> None:
    known = picky["with"] / "known-divergences.txt"
    lines = known.read_text().splitlines()
    wrong = [line for line in lines if line.endswith(" wrong_reason")]
    assert "picky invalid.extension-missing wrong_reason" in wrong
    results = str(picky["with"] / "results.json")
    out = tmp_path / "again"
    p = cli("harness", "report", results, "--out", str(out), "--known", str(known))
    assert p.returncode == 0, p.stderr
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    shorter = tmp_path / "known.txt"
    shorter.write_text("\n".join(line for line in lines if line != wrong[0]) + "\n")
    p = cli("harness", "report", results, "--out", str(out), "--known", str(shorter))
    assert p.returncode == 1 and "1 divergences not in" in p.stderr
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"


def test_diff_shows_a_change_to_and_from_wrong_reason(picky: dict[str, Path]) -> None:
    without, with_ = str(picky["without"] / "results.json"), str(picky["with"] / "results.json")
    wrong = sorted(i for i, c in cases_of(picky["with"]).items()
                   if c["outcome"] == "wrong_reason")
    p = cli("harness", "diff", without, with_)
    assert p.returncode == 1
    changed = [line for line in p.stdout.splitlines() if line.startswith("~ picky ")]
    assert len(changed) == len(wrong)
    assert ("~ picky invalid.extension-missing: agree -> wrong_reason "
            "(certificate_signature_invalid)") in changed
    p = cli("harness", "diff", with_, without)
    assert p.returncode == 1 and ("~ picky invalid.extension-missing: wrong_reason "
                                  "(certificate_signature_invalid) -> agree") in p.stdout


def test_reasons_option_errors_are_one_line(tmp_path: Path, corpus: Path,
                                            picky: dict[str, Path]) -> None:
    bad = tmp_path / "bad.errors.json"
    bad.write_text(json.dumps([{"pattern": "x", "codes": ["no_such_code"]}]))
    for table, said in ((tmp_path / "missing.json", "no such file"),
                        (bad, "unknown error codes")):
        p = cli("harness", "run", "--corpus", str(corpus), "--out", str(tmp_path / "o"),
                "--reasons", str(table), "--", sys.executable, "-V")
        assert p.returncode == 2 and said in p.stderr and len(p.stderr.splitlines()) == 1
        assert "Traceback" not in p.stderr
    p = cli("harness", "run", "--impl", "go-libp2p", "--corpus", str(corpus), "--out",
            str(tmp_path / "o"), "--reasons", str(picky["table"]))
    assert p.returncode == 2 and "goes with your own adapter" in p.stderr


def test_the_manifest_names_other_right_reasons_only_where_a_case_has_them(
        corpus: Path) -> None:
    """``expected.also`` is in the manifest for the inverted validity window (expired and not
    yet valid at once) and the EC keys that name no curve (malformed, and no scheme applies),
    and nowhere empty; the harness reads it into the expectation."""
    from fixturegen.harness.requests import load_corpus
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    also = {f["id"]: f["expected"]["also"] for f in manifest["fixtures"]
            if "also" in f["expected"]}
    scheme = ["unsupported_signature_scheme"]
    assert also == {"invalid.validity-inverted": ["expired"],
                    "invalid.certificate-key.ec-parameters-absent": scheme,
                    "invalid.certificate-key.ec-parameters-null": scheme}
    loaded = {c.request.id: c.expected for c in load_corpus(corpus).cases}
    assert loaded["invalid.validity-inverted"].also == ("expired",)
    assert loaded["invalid.expired"].also == ()
