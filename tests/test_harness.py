"""The conformance harness: driver failure handling, outcomes, reports, known lists, diff."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fixturegen.harness import driver
from fixturegen.harness.adapters import BY_NAME
from fixturegen.harness.clock import CLOCK_CASES, LATE_CASES
from fixturegen.harness.compare import outcome
from fixturegen.harness.protocol import Request, reply_schema, request_schema
from fixturegen.harness.requests import Expectation, load_cases
from fixturegen.harness.results import results_schema

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"
MISBEHAVE = [sys.executable, str(ROOT / "tests/adapters/misbehave.py")]
REFERENCE = [sys.executable, str(ADAPTERS / "reference/adapter.py")]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def req(case: str) -> Request:
    return Request(id=case, certificates=[])


def test_driver_survives_hang_crash_and_garbage(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    ids = ["ok.A", "hang.x", "ok.B", "crash.x", "reject.y", "garbage.x", "ok.C", "wrongid.x",
           "ok.D", "badverdict.x", "skip.z"]
    answers = driver.run([*MISBEHAVE, str(starts)], [req(i) for i in ids], timeout=2.0,
                         startup=10.0, stderr_path=tmp_path / "stderr.log")
    got = {a.id: (a.verdict, a.failure) for a in answers}
    assert [a.id for a in answers] == ids
    assert got["ok.A"] == ("accept", None) and answers[0].peer_id == "A"
    assert got["hang.x"] == (None, "hang")
    assert got["ok.B"] == ("accept", None)  # served by a restarted process
    assert got["crash.x"] == (None, "crash") and "status 3" in (answers[3].error or "")
    assert got["reject.y"] == ("reject", None) and answers[4].error == "nope: y"
    assert got["garbage.x"] == (None, "error") and "not json" in (answers[5].error or "")
    assert got["ok.C"] == ("accept", None)
    assert got["wrongid.x"] == (None, "error") and "someone-else" in (answers[7].error or "")
    assert got["ok.D"] == ("accept", None)
    assert got["badverdict.x"] == (None, "error")
    assert got["skip.z"] == ("skip", None)
    # One start, one after the hang, one after the crash, one after the wrong id.
    assert starts.read_text().count("start") == 4


def test_driver_reports_a_command_that_cannot_start(tmp_path: Path) -> None:
    with pytest.raises(driver.AdapterStartError, match="cannot start"):
        driver.run([str(tmp_path / "missing-adapter")], [req("ok.A")])


E_VALID = Expectation("valid", "12D3KooWA", None)
E_INVALID = Expectation("invalid", None, "x")
E_ACCEPTABLE = Expectation("acceptable", "12D3KooWA", None)


@pytest.mark.parametrize(("expected", "verdict", "peer", "failure", "want"), [
    (E_VALID, "accept", "12D3KooWA", None, "agree"),
    (E_VALID, "accept", "12D3KooWB", None, "false_accept"),
    (E_VALID, "reject", None, None, "false_reject"),
    (E_INVALID, "accept", "12D3KooWA", None, "false_accept"),
    (E_INVALID, "reject", None, None, "agree"),
    (E_ACCEPTABLE, "accept", "12D3KooWA", None, "acceptable"),
    (E_ACCEPTABLE, "accept", "12D3KooWB", None, "false_accept"),
    (E_ACCEPTABLE, "reject", None, None, "acceptable"),
    (E_VALID, "skip", None, None, "skip"),
    (E_INVALID, None, None, "hang", "hang"),
    (E_INVALID, None, None, "crash", "crash"),
    (E_VALID, None, None, "error", "error"),
])
def test_outcomes(expected: Expectation, verdict: str | None, peer: str | None,
                  failure: str | None, want: str) -> None:
    assert outcome(expected, verdict, peer, failure) == want


@pytest.mark.parametrize(("name", "schema"), [
    ("harness-request", request_schema), ("harness-reply", reply_schema),
    ("conformance-results", results_schema)])
def test_shipped_schemas_are_generated(name: str, schema: Any) -> None:
    shipped = json.loads((ROOT / f"fixturegen/schemas/{name}.schema.json").read_text())
    assert shipped == schema()
    jsonschema.Draft202012Validator.check_schema(shipped)


def test_requests_cover_the_corpus_and_validate(corpus: Path, manifest: dict[str, Any]) -> None:
    cases = load_cases(corpus)
    transcripts = json.loads((corpus / "transcripts.json").read_text())["vectors"]
    assert len(cases) == len(manifest["fixtures"]) + len(transcripts)
    validator = jsonschema.Draft202012Validator(request_schema())
    for case in cases[:: max(1, len(cases) // 40)]:
        validator.validate(json.loads(case.request.model_dump_json()))
    two = next(c for c in cases if c.id == "invalid.two-certificates")
    assert len(two.request.certificates) == 2


@pytest.fixture(scope="module")
def reference_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("conformance")
    p = cli("harness", "run", "--corpus", str(corpus), "--out", str(out), "--name", "reference",
            "--version", "self", "--", *REFERENCE)
    assert p.returncode == 0, p.stderr
    return out


def test_a_run_that_fails_on_the_way_leaves_every_report_of_what_finished(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interop stage cannot keep its certificates (a one-line error, exit 2) after an
    entry finished: all five reports hold that entry, not only results.json."""
    from typer.testing import CliRunner

    from fixturegen.cli import app
    from fixturegen.harness import commands

    def unwritable(*args: object, **kwargs: object) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(commands, "run_interop", unwritable)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["harness", "run", "--corpus", str(corpus), "--out",
                                      str(out), "--name", "reference", "--no-transcripts",
                                      "--", *REFERENCE])
    assert result.exit_code == 2 and "interop: cannot keep the certificates" in result.stderr
    [impl] = json.loads((out / "results.json").read_text())["implementations"]
    suites = ET.parse(out / "junit.xml").getroot().findall("testsuite")
    assert [(s.get("name"), s.get("tests")) for s in suites] == [
        ("reference", str(len(impl["cases"])))]
    assert "| reference |" in (out / "summary.md").read_text()
    assert "invalid.two-certificates" in (out / "index.html").read_text()


def test_reference_adapter_agrees_everywhere_and_reports_are_written(
        reference_run: Path, corpus: Path) -> None:
    results = json.loads((reference_run / "results.json").read_text())
    jsonschema.validate(results, results_schema())
    [impl] = results["implementations"]
    assert impl["name"] == "reference" and impl["version"] == "self"
    outcomes = {c["outcome"] for c in impl["cases"]}
    assert outcomes <= {"agree", "acceptable"}, outcomes
    # The clock cases the run made first (fixturegen/harness/clock.py), then every case of the
    # corpus, then the clock cases made after the adapter first answered.
    assert [c["id"] for c in impl["cases"]] == [c.id for c in CLOCK_CASES] + [
        c.id for c in load_cases(corpus)] + [c.id for c in LATE_CASES]
    suites = ET.parse(reference_run / "junit.xml").getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["reference"] and suites[0].get("failures") == "0"
    assert "| reference | self |" in (reference_run / "summary.md").read_text()
    page = (reference_run / "index.html").read_text()
    assert '<h2 id="matrix">Matrix</h2>' in page and "invalid.two-certificates" in page


@pytest.mark.slow
def test_custom_adapter_findings_known_list_and_diff(tmp_path: Path, corpus: Path,
                                                     reference_run: Path) -> None:
    # An adapter that accepts everything: every invalid case is a false accept.
    lax = tmp_path / "lax.py"
    lax.write_text("import json, sys\n"
                   "for line in sys.stdin:\n"
                   "    r = json.loads(line)\n"
                   "    print(json.dumps({'id': r['id'], 'verdict': 'accept', 'peer_id': None,"
                   " 'error': None}), flush=True)\n")
    out = tmp_path / "lax"
    p = cli("harness", "run", "--corpus", str(corpus), "--out", str(out), "--no-transcripts",
            "--name", "lax", "--", sys.executable, str(lax))
    assert p.returncode == 0, p.stderr
    results = json.loads((out / "results.json").read_text())
    cases = {c["id"]: c for c in results["implementations"][0]["cases"]}
    assert cases["invalid.extension-signature.other-host-key"]["outcome"] == "false_accept"
    # No PeerId given for a valid case: not the expected one, so a false accept too.
    assert cases["matrix.ed25519.ed25519.fixed"]["outcome"] == "false_accept"
    md = (out / "summary.md").read_text()
    section = md.split("## lax")[1]
    section = re.sub(r"\\([_\[\]])", r"\1", section)  # Markdown escapes removed
    first = re.search(r"\*\*(\w+)\*\* `([^`]+)` \[(\w+)\]", section)
    assert first is not None and first.group(1) == "false_accept"
    assert first.group(3) == "critical"  # ranked by importance
    junit = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert junit is not None and int(junit.get("failures", "0")) > 0
    # The page: every divergent cell of the matrix links to its finding, on the page; each
    # finding names its case and what the adapter said, and the case's details are one click
    # from it (description, rule, expected, fixture file).
    page = (out / "index.html").read_text()
    ids = set(re.findall(r'id="([^"]+)"', page))
    links = re.findall(r'href="#([^"]+)"', page)
    assert links and all(link in ids for link in links)
    cells = re.findall(r'<td class=A><a href="#(f[^"]+)"', page)
    assert len(cells) == sum(1 for c in cases.values() if c["outcome"] == "false_accept")
    anchor = re.search(r'<code id="([^"]+)"><a href="#c-invalid.extension-signature.other-host-'
                       r'key">', page)
    assert anchor is not None and f'href="#{anchor.group(1)}"' in page
    assert ('<div id="c-invalid.extension-signature.other-host-key"><dt>'
            'invalid.extension-signature.other-host-key</dt>') in page
    assert "certs/invalid.extension-signature.other-host-key.der" in page
    assert len(page) < 1_600 * len(cases), len(page)  # one adapter: light

    known = out / "known-divergences.txt"
    assert cli("harness", "report", str(out / "results.json"), "--known", str(known)
               ).returncode == 0
    lines = known.read_text().splitlines()
    shorter = tmp_path / "known.txt"
    shorter.write_text("\n".join(lines[:-1]) + "\n")
    p = cli("harness", "report", str(out / "results.json"), "--known", str(shorter))
    assert p.returncode == 1 and "1 divergences not in" in p.stderr
    assert "entries of" not in p.stderr  # every entry still stands
    # Entries that no longer stand are named (they fail nothing): a case the corpus does not
    # have, a case that now agrees; an implementation that did not run is left alone.
    reference = json.loads((reference_run / "results.json").read_text())
    agreed = next(c["id"] for c in reference["implementations"][0]["cases"]
                  if c["outcome"] == "agree")
    stale = tmp_path / "stale.txt"
    stale.write_text(f"reference invalid.no-such-case\nreference {agreed}\n"
                     "other-impl invalid.no-such-case\n")
    p = cli("harness", "report", str(reference_run / "results.json"), "--known", str(stale),
            "--out", str(tmp_path / "stale-report"))
    assert p.returncode == 0, p.stderr
    assert (f"harness: 1 entries of {stale} name cases this corpus does not have: "
            "reference invalid.no-such-case\n") in p.stderr
    assert f"harness: 1 entries of {stale} no longer diverge: reference {agreed}\n" in p.stderr

    p = cli("harness", "run", "--corpus", str(corpus), "--out", str(tmp_path / "again"),
            "--no-transcripts", "--name", "lax", "--known", str(shorter), "--",
            sys.executable, str(lax))
    assert p.returncode == 1 and "1 divergences not in" in p.stderr
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    flagged = [c for c in again["implementations"][0]["cases"] if c["outcome"] in
               ("false_accept", "false_reject") and not c["known"]]
    assert len(flagged) == 1 and flagged[0]["id"] == lines[-1].split()[1]

    p = cli("harness", "diff", str(reference_run / "results.json"), str(out / "results.json"))
    assert p.returncode == 1 and "+ lax" in p.stdout and "- reference" in p.stdout
    p = cli("harness", "diff", str(out / "results.json"), str(out / "results.json"))
    assert p.returncode == 0 and "no change" in p.stdout


@pytest.mark.slow
def test_bad_input_gets_a_message_and_an_exit_code(tmp_path: Path, corpus: Path) -> None:
    runs: list[subprocess.CompletedProcess[str]] = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        runs.append(cli(*args))
        return runs[-1]

    p = run("harness", "run", "--impl", "nosuch", "--corpus", str(corpus))
    assert p.returncode == 2 and "no shipped adapter 'nosuch'" in p.stderr
    p = run("harness", "run", "--corpus", str(tmp_path / "none"), "--", sys.executable, "-V")
    assert p.returncode == 2 and "build the corpus" in p.stderr
    p = run("harness", "run", "--corpus", str(corpus))
    assert p.returncode == 2 and "nothing to run" in p.stderr
    out = tmp_path / "c"
    p = run("harness", "run", "--corpus", str(corpus), "--out", str(out), "--no-transcripts",
            "--", str(tmp_path / "no-such-adapter"))
    assert p.returncode == 3 and "cannot start" in p.stderr
    assert (out / "results.json").exists()  # always written, even when empty
    p = run("harness", "run", "--corpus", str(corpus), "--out", str(out), "--no-transcripts",
            "--timeout", "30", "--startup", "0", "--", sys.executable, "-c",
            "import sys; sys.exit(4)")
    assert p.returncode == 3 and "answered no case" in p.stderr
    crashed = json.loads((out / "results.json").read_text())["implementations"][0]["cases"]
    assert {c["outcome"] for c in crashed} == {"crash"}
    broken = tmp_path / "broken.json"
    broken.write_text('{"implementations": 3}')
    p = run("harness", "report", str(broken))
    assert p.returncode == 2 and "not a results file" in p.stderr
    bad_known = tmp_path / "known"
    bad_known.write_text("just-one-word\n")
    p = run("harness", "report", str(out / "results.json"), "--known", str(bad_known))
    assert p.returncode == 2 and "expected 'IMPLEMENTATION CASE-ID'" in p.stderr
    assert not [q.args for q in runs if "Traceback" in q.stderr]


def _lock_version(adapter: str) -> str:
    folder = ADAPTERS / BY_NAME[adapter].folder
    if adapter == "rust-libp2p":
        lock = tomllib.loads((folder / "Cargo.lock").read_text())
        return next(p["version"] for p in lock["package"] if p["name"] == "libp2p-tls")
    if adapter == "litep2p":
        lock = tomllib.loads((folder / "Cargo.lock").read_text())
        return next(p["version"] for p in lock["package"] if p["name"] == "litep2p")
    if adapter == "go-libp2p":
        m = re.search(r"github.com/libp2p/go-libp2p (v[\d.]+)\n", (folder / "go.mod").read_text())
        assert m is not None
        return m.group(1)
    if adapter == "js-libp2p":
        lock = json.loads((folder / "package-lock.json").read_text())
        return str(lock["packages"]["node_modules/@libp2p/tls"]["version"])
    m = re.search(r"^libp2p==(\S+)$", (folder / "requirements.txt").read_text(), re.M)
    assert m is not None
    return m.group(1)


@pytest.mark.parametrize("adapter", sorted(BY_NAME))
def test_recorded_versions_are_the_pinned_ones(adapter: str) -> None:
    assert BY_NAME[adapter].version == _lock_version(adapter)


def test_the_shipped_adapters_folder_is_found_or_named(tmp_path: Path) -> None:
    """From elsewhere, this checkout's fixturegen (an editable install) finds the checkout's
    adapters; a folder that is not one is named in one line (an installed wheel's own copy:
    tests/test_installed.py, tests/test_package.py)."""
    env = {k: v for k, v in os.environ.items() if k != "FIXTUREGEN_ADAPTERS"}
    run = partial(subprocess.run, capture_output=True, text=True, timeout=120)
    away = run([sys.executable, "-m", "fixturegen", "harness", "list"], cwd=tmp_path, env=env)
    assert away.returncode == 0, away.stderr
    assert away.stdout == run([sys.executable, "-m", "fixturegen", "harness", "list"],
                              cwd=ROOT, env=env).stdout
    wrong = run([sys.executable, "-m", "fixturegen", "harness", "list"], cwd=tmp_path,
                env={**env, "FIXTUREGEN_ADAPTERS": str(tmp_path)})
    assert wrong.returncode == 2 and wrong.stdout == ""
    lines = wrong.stderr.splitlines()
    assert len(lines) == 1 and "--adapters DIR" in lines[0] and "FIXTUREGEN_ADAPTERS" in lines[0]
    given = run([sys.executable, "-m", "fixturegen", "harness", "list", "--adapters",
                 str(ADAPTERS)], cwd=tmp_path, env=env)
    from_env = run([sys.executable, "-m", "fixturegen", "harness", "list"], cwd=tmp_path,
                   env={**env, "FIXTUREGEN_ADAPTERS": str(ADAPTERS)})
    here = run([sys.executable, "-m", "fixturegen", "harness", "list"], cwd=ROOT, env=env)
    assert given.returncode == from_env.returncode == here.returncode == 0
    assert given.stdout == from_env.stdout == here.stdout
    assert [line.split()[0] for line in here.stdout.splitlines()] == list(BY_NAME)
    bad = run([sys.executable, "-m", "fixturegen", "harness", "run", "--impl", "go-libp2p",
               "--adapters", str(tmp_path), "--corpus", str(tmp_path)], cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "not a fixturegen adapters folder" in bad.stderr
    assert len(bad.stderr.splitlines()) == 1


def test_every_shipped_adapter_has_a_build_script_that_names_it() -> None:
    """A new adapter is its folder (with its own build script) and its entry in adapters.py:
    adapters/build finds it by the script's `# adapters:` line."""
    from fixturegen.harness.adapters import PEER, SHIPPED
    from fixturegen.harness.handshake import MESSAGE_PEER

    named: dict[str, str] = {}
    for script in sorted((ROOT / "adapters").glob("*/build")):
        assert os.access(script, os.X_OK), script
        line = next(x for x in script.read_text().splitlines() if x.startswith("# adapters:"))
        named |= {n: script.parent.name for n in line.split(":", 1)[1].split()}
    assert named == {**{a.name: a.folder for a in SHIPPED if a.folder != "reference"},
                     "fixture-peer": PEER.split("/")[0],
                     "message-peer": MESSAGE_PEER[1].split("/")[0]}
    unknown = subprocess.run([str(ROOT / "adapters/build"), "no-such-adapter"],
                             capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "unknown adapter no-such-adapter" in unknown.stderr


@pytest.mark.slow
def test_what_a_check_costs_is_recorded_and_a_costly_check_is_named(tmp_path: Path,
                                                                    corpus: Path) -> None:
    """The CPU time an adapter reports for each check is kept per case, and the summary names
    the checks far costlier than the entry's valid certificates (or above the absolute bound);
    an adapter that reports none gets no cost section."""
    costly = "host-rsa-8192"
    manifest = json.loads((corpus / "manifest.json").read_text())["fixtures"]
    # Valid RSA host keys cost 80 times the others: not costly, since each check is compared
    # with the valid certificates of its own host key type.
    rsa = sorted(f["id"] for f in manifest if f["host_key"]["type"] == "RSA"
                 and f["expected"]["result"] == "valid" and f["id"] != costly)
    assert len(rsa) > 10
    timed = tmp_path / "timed.py"
    timed.write_text("import json, sys\n"
                     f"rsa = set({rsa!r})\n"
                     "for line in sys.stdin:\n"
                     "    r = json.loads(line)\n"
                     f"    cpu = 2.5 if r['id'] == {costly!r} else 0.08 if r['id'] in rsa else "
                     "0.06 if r['id'].startswith('invalid.') else 0.001\n"
                     "    print(json.dumps({'id': r['id'], 'verdict': 'reject', 'peer_id': None,"
                     " 'error': 'no', 'cpu_seconds': cpu}), flush=True)\n")
    out = tmp_path / "timed"
    p = cli("harness", "run", "--corpus", str(corpus), "--out", str(out), "--no-transcripts",
            "--no-interop", "--name", "timed", "--", sys.executable, str(timed))
    assert p.returncode == 0, p.stderr
    cases = {c["id"]: c for c in
             json.loads((out / "results.json").read_text())["implementations"][0]["cases"]}
    assert cases[costly]["cpu_seconds"] == 2.5
    assert cases["matrix.ed25519.ed25519.fixed"]["cpu_seconds"] == 0.001
    summary = (out / "summary.md").read_text()
    section = summary.split("## What a check costs", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith("| timed |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == str(len(cases)) and cells[2] == "1.00"  # the median of the valid ones
    assert cells[3] == "ECDSA 1.00; Ed25519 1.00; RSA 80.00; Secp256k1 1.00"
    # the costly: the bound (2.5 s), and every invalid case at 60 times its type's valid median
    # but those of an RSA host key (60 ms is less than its type's 80 ms)
    invalid = sorted(i for i in cases if i.startswith("invalid."))
    types = {f["id"]: f["host_key"]["type"] for f in manifest}
    flagged = re.findall(r"`([^`]+)` 60\.0", cells[5])
    assert cells[5].startswith(f"`{costly}` 2500.0; `")
    assert sorted(flagged) == [i for i in invalid if types[i] != "RSA"]
    assert all(f"`{i}`" not in cells[5] for i in rsa)
    # no CPU reported, no cost section
    quiet = tmp_path / "quiet"
    p = cli("harness", "run", "--corpus", str(corpus), "--out", str(quiet), "--no-transcripts",
            "--no-interop", "--name", "quiet", "--", sys.executable,
            str(ROOT / "adapters/reference/adapter.py"))
    assert p.returncode == 0, p.stderr
    assert "## What a check costs" not in (quiet / "summary.md").read_text()
