"""``fixturegen harness findings``: one report per divergence class (a rule and an outcome) of
one implementation, with its fixtures as hex and the test that reproduces it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from fixturegen.harness.clock import CLOCK_CASES, LATE_CASES
from fixturegen.harness.findings import where_written

ROOT = Path(__file__).resolve().parents[1]


def fixturegen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def lenient_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of an adapter that accepts everything (with no PeerId) over the corpus."""
    out = tmp_path_factory.mktemp("lenient") / "run"
    done = fixturegen("harness", "run", "--corpus", str(corpus), "--out", str(out),
                      "--no-interop", "--name", "lenient", "--", sys.executable,
                      str(ROOT / "tests/adapters/lenient.py"))
    assert done.returncode == 0, done.stderr
    return out


def test_one_report_per_rule_and_outcome(lenient_run: Path, corpus: Path,
                                         tmp_path: Path) -> None:
    results = json.loads((lenient_run / "results.json").read_text())
    catalogue = {c["id"]: c for c in results["catalogue"]}
    expected: dict[tuple[str, str], set[str]] = defaultdict(set)
    for case in results["implementations"][0]["cases"]:
        if case["outcome"] in ("false_accept", "false_reject", "hang", "crash", "error"):
            expected[catalogue[case["id"]]["rule"], case["outcome"]].add(case["id"])
    assert len(expected) > 20  # invalid cases of many rules, and valid ones as the wrong PeerId
    out = tmp_path / "findings"
    done = fixturegen("harness", "findings", str(lenient_run), "--impl", "lenient",
                      "--out", str(out))
    assert done.returncode == 0, done.stderr
    reports = sorted(out.glob("[0-9]*-*.md"))
    assert len(reports) == len(expected) > 99
    # Numbered with one width (three digits here), so the files sort in report order.
    assert {len(r.name.split("-")[0]) for r in reports} == {3}
    assert [int(r.name.split("-")[0]) for r in reports] == list(range(1, len(reports) + 1))
    seen: dict[tuple[str, str], set[str]] = {}
    for report in reports:
        text = report.read_text()
        rule = re.search(r"^- \*\*Rule\*\*: (.*?)(?: \(\[|$)", text, re.M)
        outcome = re.search(r"^- \*\*Outcome\*\*: `(\w+)`", text, re.M)
        assert rule and outcome, report.name
        ids = set(re.findall(r"^\| `([^`]+)` \|", text, re.M))
        # The rule is Markdown text: backslash escapes removed, it is the catalogue's rule.
        seen[re.sub(r"\\(.)", r"\1", rule.group(1)), outcome.group(1)] = ids
        assert text.startswith("# lenient unknown ")
        # The first fixture of the class, as hex, is the file the corpus holds.
        first = re.search(r"^`([^`]+)` \(`(certs/[^`]+)`\), DER as hex", text, re.M)
        late = {c.id for c in LATE_CASES}
        if ids <= {c.id for c in CLOCK_CASES} | late:  # made by the run: no file of the corpus
            assert first is None, report.name
            if ids - late:
                assert "a certificate the harness made when the entry started" in text

        else:
            assert first is not None, report.name
            der = (corpus / first.group(2)).read_bytes().hex()
            assert f"```\n{der}\n" in text
        assert "fixturegen harness run --impl lenient" in text  # no export for a custom one
    assert seen == expected
    index = (out / "findings.md").read_text()
    assert all(f"]({r.name})" in index for r in reports)
    # Wrong-PeerId accepts of valid cases get their own title.
    assert any("as the wrong PeerId" in r.read_text().splitlines()[0] for r in reports)


def test_rules_link_where_they_are_written() -> None:
    assert where_written("RFC 5280 4.1.2.5.1: UTCTime MUST include seconds") == [
        "[RFC 5280 section 4.1.2.5.1](https://www.rfc-editor.org/rfc/rfc5280#section-4.1.2.5.1)"]
    links = where_written("tls.md: Peer Authentication (RFC 8446 4.4.3)")
    assert links[0].startswith("[tls.md](https://github.com/libp2p/specs/")
    assert links[1].endswith("rfc8446#section-4.4.3)")
    assert where_written("a rule of nowhere") == []


@pytest.mark.slow
def test_bad_findings_options_are_one_line_and_keep_the_folder(lenient_run: Path,
                                                               tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    missing = tmp_path / "nothing.json"
    for args in (["--impl", "go-libp2p", "--out", str(tmp_path / "a")],  # not in this run
                 ["--impl", "lenient", "--out", str(other)],  # a folder of other files
                 ["--impl", "lenient", "--out", str(tmp_path / "b"), "--corpus",
                  str(tmp_path)]):  # no corpus there
        done = fixturegen("harness", "findings", str(lenient_run), *args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, args
        assert "Traceback" not in done.stderr
    done = fixturegen("harness", "findings", str(missing), "--impl", "x", "--out",
                      str(tmp_path / "c"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    assert not any((tmp_path / n).exists() for n in ("a", "b", "c"))


def test_findings_replace_earlier_findings_whole(lenient_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "f"
    assert fixturegen("harness", "findings", str(lenient_run / "results.json"), "--impl",
                      "lenient", "--out", str(out)).returncode == 0
    first = sorted(p.name for p in out.iterdir())
    # A report an earlier run wrote (its marker lists it) goes; a file of the user's stays.
    (out / "99-stale.md").write_text("from an older run")
    marker = json.loads((out / ".fixturegen-owner.json").read_text())
    marker["files"].append("99-stale.md")
    (out / ".fixturegen-owner.json").write_text(json.dumps(marker))
    (out / "findings.md.orig").write_text("the user's")
    assert fixturegen("harness", "findings", str(lenient_run), "--impl", "lenient",
                      "--out", str(out)).returncode == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([*first, "findings.md.orig"])
    assert (out / "findings.md.orig").read_text() == "the user's"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left


def _go_findings(tmp_path: Path) -> Path:
    """go-libp2p's findings from the latest conformance run, in a folder of the test's."""
    conformance = Path(os.environ.get("FIXTUREGEN_CONFORMANCE", ROOT / "out/conformance"))
    out = tmp_path / "findings"
    done = fixturegen("harness", "findings", str(conformance), "--impl", "go-libp2p",
                      "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.conformance
def test_a_go_finding_reproduces_against_go_libp2p(tmp_path: Path) -> None:
    """From the latest conformance run: go-libp2p's class that accepts certificates with a
    corrupted self-signature, and its exported Go test, which fails on the pinned go-libp2p."""
    out = _go_findings(tmp_path)
    report = next(p for p in out.glob("*.md")
                  if "abort if the self-signature is invalid" in p.read_text().splitlines()[0]
                  and "certificates" in p.read_text().splitlines()[0])
    text = report.read_text()
    assert "`go-libp2p@tcp-dial`" in text and "accepted (PeerId 12D3KooW" in text
    test = next(out.glob(f"finding_{report.name.split('-')[0]}_*_test.go"))
    module = tmp_path / "module"
    shutil.copytree(ROOT / "adapters/go-libp2p", module, ignore=shutil.ignore_patterns("adapter"))
    (module / "fixturegen").mkdir()
    shutil.copy(test, module / "fixturegen" / test.name)
    run = subprocess.run(["go", "test", "-mod=readonly", "./fixturegen/"], cwd=module,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 1 and "want reject, got accept" in run.stdout, run.stdout[-2000:]
    # Every fixture the test embeds fails: each is a case of the class.
    cases = set(re.findall(r"^\| `([^`]+)` \|", text, re.M))
    embedded = set(re.findall(r'^\t\tid: "([^"]+)"', test.read_text(), re.M))
    failed = set(re.findall(r"--- FAIL: TestFixturegenCertificates/(\S+)", run.stdout))
    assert embedded and failed == embedded and embedded <= cases


def test_a_clock_case_made_after_the_adapter_started_says_so(corpus: Path,
                                                             tmp_path: Path) -> None:
    """An adapter whose clock stopped at its start refuses ``clock.valid-since-start`` alone
    (its class has that one case); its report says when the harness made the certificate."""
    out = tmp_path / "run"
    done = fixturegen("harness", "run", "--corpus", str(corpus), "--out", str(out),
                      "--no-interop", "--no-transcripts", "--name", "frozen", "--",
                      sys.executable, str(ROOT / "tests/adapters/frozen_clock.py"))
    assert done.returncode == 0, done.stderr
    findings = tmp_path / "findings"
    done = fixturegen("harness", "findings", str(out), "--impl", "frozen", "--out",
                      str(findings))
    assert done.returncode == 0, done.stderr
    reports = [r.read_text() for r in findings.glob("[0-9]*-*.md")]
    [text] = [r for r in reports if "`clock.valid-since-start`" in r]
    assert "- **Outcome**: `false_reject`" in text
    assert set(re.findall(r"^\| `([^`]+)` \|", text, re.M)) == {"clock.valid-since-start"}
    assert ("`clock.valid-since-start`: a certificate the harness made just before sending "
            "it, after the adapter process first answered") in text
    assert [r for r in reports if "`clock.expired-since-start`" in r]


@pytest.mark.conformance
def test_a_message_level_finding_names_the_peer_that_broke_the_rule(tmp_path: Path) -> None:
    """From the latest conformance run: go-libp2p's false accept of a CertificateEntry that
    carries supported_groups is one class, whose report says the message-level peer broke
    the rule, in both TCP directions."""
    out = _go_findings(tmp_path)
    report = next(p for p in out.glob("[0-9]*.md")
                  if "a CertificateEntry carries only extensions" in p.read_text())
    text = report.read_text()
    assert "`rule.certificate-entry-extension.server`" in text
    assert "`rule.certificate-entry-extension.client`" in text
    assert "the message-level peer broke a rule of the handshake" in text
    assert "`adapters/message-peer/peer.py`" in text
    assert "rules.go" not in text
