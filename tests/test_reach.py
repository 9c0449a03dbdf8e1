"""Reachability of the generated faults (fixturegen/harness/reach.py): on constructed results,
then on a real run of an adapter that masks faults as js-libp2p does, in every report."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from fixturegen.cases.faults import FAULTS, TWIN_FAMILY
from fixturegen.harness.findings import write as write_findings
from fixturegen.harness.pagedata import html, page_data
from fixturegen.harness.reach import entry_reach, reach_findings, reach_markdown, reachability
from fixturegen.harness.report import markdown
from fixturegen.harness.results import (
    CaseResult,
    CatalogueEntry,
    Implementation,
    ResultsFile,
    load_results,
    results_schema,
)
from fixturegen.model.manifest import Family

ROOT = Path(__file__).resolve().parents[1]
FAULT = "invalid.fault.x.{name}.{{host}}.{{scheme}}.{{placement}}"


def _entry(case_id: str, expected: str, family: str, host: str, placement: str
           ) -> CatalogueEntry:
    return CatalogueEntry(
        id=case_id, kind="certificate", expected=expected,  # type: ignore[arg-type]
        expected_error="extension_malformed" if expected == "invalid" else None,
        expected_peer_id=None, rule="r", description="d", importance=None,
        path=f"certs/{case_id}.der",
        family=Family(id=family, parameters={"host": host, "scheme": "ed25519",
                                             "placement": placement}))


def _twin(host: str, placement: str) -> CatalogueEntry:
    return _entry(TWIN_FAMILY.format(host=host, scheme="ed25519", placement=placement),
                  "valid", TWIN_FAMILY, host, placement)


def _fault(name: str, host: str, placement: str) -> CatalogueEntry:
    family = FAULT.format(name=name)
    return _entry(family.format(host=host, scheme="ed25519", placement=placement), "invalid",
                  family, host, placement)


def _result(case_id: str, verdict: str, error: str | None = None) -> CaseResult:
    return CaseResult(id=case_id, verdict=verdict, peer_id=None,  # type: ignore[arg-type]
                      error=error, outcome="agree", seconds=0.0)


# A verifier that reads only the first extension and supports no RSA host key.
TWINS = {("ed25519", "noncritical-first"): ("accept", None),
         ("ed25519", "noncritical-last"): ("reject", "no libp2p extension"),
         ("secp256k1", "noncritical-first"): ("accept", None),
         ("secp256k1", "noncritical-last"): ("reject", "no libp2p extension"),
         ("rsa", "noncritical-first"): ("reject", "unsupported key type")}
FAULTS_MADE = {
    "reached": [("ed25519", "noncritical-first"), ("secp256k1", "noncritical-first")],
    "masked": [("ed25519", "noncritical-last"), ("secp256k1", "noncritical-last")],
    "unreachable": [("rsa", "noncritical-first")],
    "partly": [("ed25519", "noncritical-first"), ("secp256k1", "noncritical-last"),
               ("rsa", "noncritical-first")],
    "skipped": [("ed25519", "noncritical-first")],
}


def _results() -> ResultsFile:
    catalogue = [_twin(h, p) for h, p in TWINS]
    catalogue += [_fault(name, h, p) for name, contexts in FAULTS_MADE.items()
                  for h, p in contexts]
    answers = [_result(_twin(h, p).id, *said) for (h, p), said in TWINS.items()]
    answers += [_result(_fault(name, h, p).id, "skip" if name == "skipped" else "reject",
                        "bad extension") for name, contexts in FAULTS_MADE.items()
                for h, p in contexts]
    impl = Implementation(name="masky", package="p", version="1", verifier="v", command=[],
                          seconds=0.0, counts=dict(Counter(a.outcome for a in answers)),
                          cases=answers)
    # An entry that answered no generated fault (only the twins) has no reachability.
    twins = answers[:len(TWINS)]
    twins_only = impl.model_copy(update={"name": "twinsonly", "cases": twins,
                                         "counts": dict(Counter(a.outcome for a in twins))})
    return ResultsFile(schema_version=2, generator="g", corpus="c", seed=None,
                       catalogue=catalogue, implementations=[impl, twins_only],
                       reachability=reachability(catalogue, [impl, twins_only]))


def test_reachability_of_reached_masked_partly_and_unreachable_faults() -> None:
    results = _results()
    assert results.reachability is not None
    [reach] = results.reachability
    assert reach.label == "masky"
    got = {f.fault.split(".")[3]: f for f in reach.faults}
    # the skipped fault's only case was not answered: nothing of it was tested
    assert set(got) == {"reached", "masked", "unreachable", "partly"}
    reached = got["reached"]
    assert (reached.status, reached.cases, reached.masked_hosts, reached.reason) == (
        "reached", 2, [], None)
    assert reached.reached == [_fault("reached", "ed25519", "noncritical-first").id,
                               _fault("reached", "secp256k1", "noncritical-first").id]
    masked = got["masked"]
    assert (masked.status, masked.reached, masked.masked_hosts) == (
        "masked", [], ["ed25519", "secp256k1"])
    assert masked.reason == ("rejects the valid twins of its 2 context(s) under ed25519, "
                             "secp256k1: reject: no libp2p extension (x2)")
    unreachable = got["unreachable"]
    assert (unreachable.status, unreachable.masked_hosts) == ("unreachable", [])
    assert unreachable.reason is not None
    assert unreachable.reason.startswith("accepts no valid twin with a rsa host key (it cannot "
                                         "verify that key type in any context)")
    assert unreachable.reason.endswith(": reject: unsupported key type")
    partly = got["partly"]
    # reached under ed25519; masked under secp256k1, which it verifies; rsa it cannot verify
    assert (partly.status, partly.hosts, partly.masked_hosts) == (
        "reached", ["ed25519", "secp256k1", "rsa"], ["secp256k1"])
    assert partly.reason is not None and "no libp2p extension" in partly.reason
    assert (reach.count("reached"), reach.count("masked"), reach.count("unreachable"),
            reach.partly) == (2, 1, 1, 1)
    # the host key type it accepts no twin with, and what it said on those twins
    assert reach.unverified == {"rsa": "reject: unsupported key type"}


def test_a_fault_case_without_a_twin_in_the_corpus_is_not_reached() -> None:
    results = _results()
    catalogue = [e for e in results.catalogue if e.id != _twin("ed25519", "noncritical-first").id]
    reach = entry_reach(catalogue, results.implementations[0])
    got = {f.fault.split(".")[3]: f for f in reach.faults}
    assert got["reached"].reached == [_fault("reached", "secp256k1", "noncritical-first").id]
    # ed25519 is no longer verified anywhere (its only accepted twin is gone): explained
    assert got["masked"].masked_hosts == ["secp256k1"]
    assert got["masked"].reason is not None
    assert "no valid twin in the corpus" not in got["masked"].reason


def test_reachability_in_results_json_and_every_report(tmp_path: Path) -> None:
    results = _results()
    path = tmp_path / "results.json"
    path.write_text(results.model_dump_json())
    jsonschema.validate(json.loads(path.read_text()), results_schema())
    assert load_results(path).reachability == results.reachability
    summary = markdown(results)
    assert "| masky | 4 | 2 | 1 | 1 | 1 |" in summary
    assert "twinsonly" not in summary.split("## Reachability")[1]
    assert re.search(r"- \*\*masked\*\* under ed25519, secp256k1 `invalid\.fault\.x\.masked\.",
                     summary)
    assert re.search(r"- \*\*unreachable\*\* `invalid\.fault\.x\.unreachable\..*cannot verify "
                     r"that key type", summary)
    assert "- **partly masked** under secp256k1 `invalid.fault.x.partly." in summary
    assert ("- **cannot verify** rsa host keys (no fault is tested under them): reject: "
            "unsupported key type") in summary
    data = page_data(results)
    [row] = data.reach
    assert (row.label, row.faults, row.reached, row.masked, row.partly, row.unreachable) == (
        "masky", 4, 2, 1, 1, 1)
    assert [f.status for f in row.not_reached] == ["masked", "reached", "unreachable"]
    page = html(data)
    assert '<h2 id="reach">' in page and '<a href="#reach">' in page
    assert "<b>partly masked</b> under secp256k1 <code>invalid.fault.x.partly." in page
    assert "<b>cannot verify</b> rsa host keys" in page
    index = "\n".join(reach_findings(results, "masky"))
    assert "- `masky`: 4 faults, 2 reached, 1 masked, 1 partly masked, 1 unreachable" in index
    assert reach_findings(results, "twinsonly") == []
    # a file written before the field: computed from its catalogue
    older = results.model_copy(update={"reachability": None})
    assert reach_markdown(older) == reach_markdown(results)


@pytest.fixture(scope="module")
def masking_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("masking") / "run"
    done = subprocess.run(
        [sys.executable, "-m", "fixturegen", "harness", "run", "--corpus", str(corpus),
         "--out", str(out), "--no-interop", "--no-transcripts", "--name", "firstonly", "--",
         sys.executable, str(ROOT / "tests/adapters/first_only.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def test_a_real_run_of_a_masking_verifier_reaches_every_fault_it_can(
        masking_run: Path, corpus: Path, tmp_path: Path) -> None:
    """The adapter reads only the first extension and supports no RSA host key: the catalogue
    still reaches every fault under every other host key type (with the extension first), and
    the faults only RSA host keys have are unreachable, with that reason."""
    results = load_results(masking_run / "results.json")
    assert results.reachability is not None
    [reach] = results.reachability
    assert list(reach.unverified) == ["rsa"]
    assert reach.unverified["rsa"].startswith("reject: RSA host keys are not supported (x")
    by_fault = {f.fault: f for f in reach.faults}
    assert set(by_fault) == {f.family for f in FAULTS}
    rsa_only = {f.family for f in FAULTS if f.hosts == ("RSA",)}
    assert rsa_only and {f.fault for f in reach.faults if f.status == "unreachable"} == rsa_only
    for fault in reach.faults:
        assert fault.status != "masked" and fault.masked_hosts == [], fault
        assert all(i.endswith("-first") and ".rsa." not in i for i in fault.reached), fault
        if fault.status == "unreachable":
            assert fault.reason is not None and "rsa host key" in fault.reason
            assert "RSA host keys are not supported" in fault.reason
        else:
            hosts = {i.split(".")[4] for i in fault.reached}
            assert hosts == set(fault.hosts) - {"rsa"}, fault
    summary = (masking_run / "summary.md").read_text()
    n = len(FAULTS)
    assert f"| firstonly | {n} | {n - len(rsa_only)} | 0 | 0 | {len(rsa_only)} |" in summary
    assert '<h2 id="reach">' in (masking_run / "index.html").read_text()
    # the twins it rejects for their context are its false rejects, and its findings say
    # which faults it could not be tested on
    write_findings(results, "firstonly", tmp_path / "findings", corpus)
    index = (tmp_path / "findings" / "findings.md").read_text()
    assert "## Faults this run could not test" in index
    assert f"{len(rsa_only)} unreachable" in index


def test_the_twins_and_the_faults_share_the_context_parameters() -> None:
    from fixturegen.cases.model import template_values
    from fixturegen.harness.reach import CONTEXT

    assert [n for n, _ in template_values(TWIN_FAMILY, dict.fromkeys(CONTEXT, "x"))] == list(
        CONTEXT)
    assert {tuple(n for n, _ in template_values(f.family, dict.fromkeys(CONTEXT, "x")))
            for f in FAULTS} == {tuple(CONTEXT)}
