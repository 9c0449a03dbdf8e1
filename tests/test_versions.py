"""The harness over many builds (fixturegen.versions): the version matrix (built, run, joined
into classes with their first and last versions, written, resumed), the one-case check and its
exit statuses, and the comparison of two builds' handshake cost. The builds are real builds of
a test adapter (tests/adapters/buildable) whose verdicts depend on the version it was built as;
the shipped adapters' own builds are checked in tests/test_any_build.py."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from fixturegen.builds.build import Built, Recipe
from fixturegen.builds.cache import cache_root
from fixturegen.builds.registries import Released
from fixturegen.builds.versions import Version, parse_spec
from fixturegen.harness.adapters import Adapter
from fixturegen.harness.matrix import affected_text, load_matrix
from fixturegen.harness.session import Target, read_corpus
from fixturegen.owned import NotOwned
from fixturegen.versions.check import EXIT_CANNOT_TELL, EXIT_DIVERGES, EXIT_EXPECTED, check
from fixturegen.versions.matrix import Settings, run_matrix
from fixturegen.versions.profile import ratio_interval, verdict

TESTS = Path(__file__).resolve().parent
TEST_ADAPTER = Adapter("test-impl", "test registry test-impl", "1.0.0", "buildable",
                       ("./artefact",), verifier="accepts or rejects by version",
                       marker="artefact", ecosystem="npm", registry_name="test-impl",
                       since="1.0.0")


@pytest.fixture()
def adapters(tmp_path: Path) -> Path:
    folder = tmp_path / "adapters"
    shutil.copytree(TESTS / "adapters" / "buildable", folder / "buildable")
    (folder / "build").write_text("#!/bin/sh\n")
    return folder


def released(*texts: str) -> list[Released]:
    return [Released(Version.parse(t), f"2026-0{i + 1}-01T00:00:00Z") for i, t in enumerate(texts)]


def test_the_matrix_joins_versions_into_classes(corpus: Path, adapters: Path,
                                                tmp_path: Path) -> None:
    loaded = read_corpus(corpus, transcripts=False, handshakes=False, timeout=10.0)
    out, cache = tmp_path / "matrix", cache_root(tmp_path / "cache")
    said: list[str] = []
    chosen = released("1.2.0", "2.0.0", "9.9.9", "2.1.0")
    matrix = run_matrix(TEST_ADAPTER, parse_spec("all"), chosen, loaded, out, base=adapters,
                        cache=cache, peer_argv=[], settings=Settings("api", 10.0, 30.0, 60.0),
                        say=said.append)
    assert [v.version for v in matrix.versions] == ["1.2.0", "2.0.0", "9.9.9", "2.1.0"]
    assert [v.built for v in matrix.versions] == [True, True, False, True]
    broken = matrix.versions[2]
    assert broken.reason is not None and "9.9.9 does not compile" in broken.reason
    # Accepted as no PeerId: false for every invalid case and every one that names a PeerId.
    accepted_wrongly = {c.id for c in loaded.api
                        if c.expected.result == "invalid" or c.expected.peer_id is not None}
    valid = [c for c in loaded.api if c.expected.result == "valid"]
    accepts = [c for c in matrix.classes if c.outcome == "false_accept"]
    rejects = [c for c in matrix.classes if c.outcome == "false_reject"]
    # 1.2.0 and 2.1.0 accept everything (an invalid case, and a valid one as no PeerId);
    # 2.0.0 rejects everything (every valid case).
    assert {case for cls in accepts for case in cls.cases} == accepted_wrongly
    assert {case for cls in rejects for case in cls.cases} == {c.id for c in valid}
    for cls in accepts:
        assert cls.affected == ["1.2.0", "2.1.0"] and cls.introduced == "1.2.0"
        assert cls.ranges == [["1.2.0", "1.2.0"], ["2.1.0", "2.1.0"]] and cls.fixed_in is None
    for cls in rejects:
        assert (cls.affected, cls.introduced, cls.fixed_in) == (["2.0.0"], "2.0.0", "2.1.0")
    # The file on disk is the same matrix, valid against its schema; each version has reports.
    assert load_matrix(out / "matrix.json") == matrix
    assert (out / "versions" / "2.0.0" / "results.json").is_file()
    html = (out / "index.html").read_text()
    assert html.count('class="cell false_accept"') == 2 * len(accepts)
    assert html.count('class="cell unbuilt"') == len(matrix.classes)
    text = (out / "matrix.md").read_text()
    assert "| 9.9.9 | 2026-03-01 | no |" in text
    one = rejects[0]
    assert affected_text(matrix, one.rule, "false_reject") == (
        "2.0.0: 1 of the 3 versions built; first seen in 2.0.0; fixed in 2.1.0")
    assert affected_text(matrix, "no such rule", "false_accept") == (
        "none of the 3 versions built (1.2.0 to 2.1.0)")
    # Findings of one version name the versions each class affects.
    from fixturegen.harness.findings import write
    from fixturegen.harness.results import load_results

    run = load_results(out / "versions" / "2.0.0" / "results.json")
    assert write(run, "test-impl", tmp_path / "findings", None, matrix) == len(rejects)
    report = next((tmp_path / "findings").glob("01-*.md")).read_text()
    assert ("- **Affected versions** (from the version matrix): 2.0.0: 1 of the 3 versions "
            "built; first seen in 2.0.0; fixed in 2.1.0") in report
    # A second run keeps the versions it finished (no new build, no new run).
    builds_before = (cache / "shared" / "buildable" / "builds.log").read_text()
    said.clear()
    again = run_matrix(TEST_ADAPTER, parse_spec("all"), chosen, loaded, out, base=adapters,
                       cache=cache, peer_argv=[], settings=Settings("api", 10.0, 30.0, 60.0),
                       say=said.append)
    assert sum("kept from the earlier run" in line for line in said) == 3
    assert again.classes == matrix.classes
    assert (cache / "shared" / "buildable" / "builds.log").read_text() == builds_before
    # Another mode runs every version again (from the cached builds): an API run is not kept
    # for a run that wants handshakes too.
    said.clear()
    other = run_matrix(TEST_ADAPTER, parse_spec("all"), chosen, loaded, out, base=adapters,
                       cache=cache, peer_argv=[], settings=Settings("all", 10.0, 30.0, 60.0),
                       say=said.append)
    assert not any("kept from the earlier run" in line for line in said)
    assert other.mode == "all" and len(other.versions) == 4


def test_the_matrix_follows_the_certificates_each_version_makes(
        corpus: Path, adapters: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With checkers, each version runs the interop stage: before 2.0 the test adapter makes a
    certificate with a critical basicConstraints (a generator bug), from 2.0 on a clean one.
    The sender flag is followed like a divergence class (first seen 1.2.0, fixed in 2.0.0), and
    so is every checker's refusal, with whose fault it is: a checker that refuses everything
    blames the maker where the flag explains it and itself where nothing does."""
    import sys

    monkeypatch.setenv("FIXTUREGEN_TEST_CORPUS", str(corpus))
    strict = Target("strict-peer", "test", "1", "refuses every certificate",
                    (sys.executable, str(TESTS / "adapters" / "maker.py"), str(corpus), "reject"),
                    "none", ())
    loaded = read_corpus(corpus, transcripts=False, handshakes=False, timeout=10.0)
    out, cache = tmp_path / "matrix", cache_root(tmp_path / "cache")
    chosen = released("1.2.0", "2.0.0", "9.9.9", "2.1.0")
    settings = Settings("api", 10.0, 30.0, 60.0, checkers=(strict,))
    matrix = run_matrix(TEST_ADAPTER, parse_spec("all"), chosen, loaded, out, base=adapters,
                        cache=cache, peer_argv=[], settings=settings, say=lambda _: None)
    assert [v.checkers for v in matrix.versions] == [["test-impl", "strict-peer"]] * 2 + [
        []] + [["test-impl", "strict-peer"]]
    assert matrix.tolerance == {"strict-peer": []}  # it refused every case of the probe
    made = {c.id: c for c in matrix.made}
    assert set(made) == {"sender:critical-extension", "refused:strict-peer:maker",
                         "refused:strict-peer:verifier", "refused:test-impl:verifier"}
    flag = made["sender:critical-extension"]
    assert (flag.affected, flag.introduced, flag.fixed_in) == (["1.2.0"], "1.2.0", "2.0.0")
    assert flag.versions == {"1.2.0": ["test-impl.ed25519.1", "test-impl.ed25519.2"]}
    assert "basicConstraints" not in flag.what and "critical-extension" in flag.what
    maker = made["refused:strict-peer:maker"]
    assert (maker.blame, maker.affected, maker.fixed_in) == ("maker", ["1.2.0"], "2.0.0")
    assert "the maker's fault (critical-extension)" in maker.what
    theirs = made["refused:strict-peer:verifier"]
    assert (theirs.affected, theirs.introduced, theirs.fixed_in) == (
        ["2.0.0", "2.1.0"], "2.0.0", None)
    assert theirs.ranges == [["2.0.0", "2.1.0"]]
    own = made["refused:test-impl:verifier"]  # 2.0.x rejects every certificate, its own too
    assert (own.affected, own.fixed_in) == (["2.0.0"], "2.1.0")
    # Each version's results hold its interop stage; the reports show the classes.
    from fixturegen.harness.results import load_results

    run = load_results(out / "versions" / "1.2.0" / "results.json")
    assert run.peer_made is not None
    assert {c.maker for c in run.peer_made.certificates} == {"test-impl"}
    assert set(run.peer_made.certificates[0].verifiers) == {"test-impl", "strict-peer"}
    assert (out / "versions" / "1.2.0" / "peer-made" / "test-impl.ed25519.1.der").is_file()
    text = (out / "matrix.md").read_text()
    assert "## The certificates it made" in text
    assert "| 1.2.0 (1) | 1.2.0 | 2.0.0 |" in text and "| 2.0.0 to 2.1.0 (2) | 2.0.0 | not " \
        "fixed |" in text
    html = (out / "index.html").read_text()
    # a cell per version that shows a class: 1 + 1 + 2 + 1
    assert html.count("test-impl.ed25519.1, test-impl.ed25519.2") == 5
    assert load_matrix(out / "matrix.json") == matrix
    # The same checkers keep the finished versions; a run without them runs each again and
    # says it ran no interop stage.
    said: list[str] = []
    again = run_matrix(TEST_ADAPTER, parse_spec("all"), chosen, loaded, out, base=adapters,
                       cache=cache, peer_argv=[], settings=settings, say=said.append)
    assert sum("kept from the earlier run" in line for line in said) == 3
    assert again.made == matrix.made
    said.clear()
    plain = run_matrix(TEST_ADAPTER, parse_spec("all"), chosen, loaded, out, base=adapters,
                       cache=cache, peer_argv=[], settings=Settings("api", 10.0, 30.0, 60.0),
                       say=said.append)
    assert not any("kept from the earlier run" in line for line in said)
    assert plain.made == [] and all(v.checkers == [] for v in plain.versions)
    assert "No version ran the interop stage" in (out / "matrix.md").read_text()


def test_the_matrix_writes_only_into_its_own_folder(corpus: Path, adapters: Path,
                                                    tmp_path: Path) -> None:
    mine = tmp_path / "project"
    mine.mkdir()
    (mine / "matrix.json").write_text("keep me")  # a foreign file of the name it writes
    loaded = read_corpus(corpus, transcripts=False, handshakes=False, timeout=10.0)
    with pytest.raises(NotOwned, match="files fixturegen harness matrix did not write"):
        run_matrix(TEST_ADAPTER, parse_spec("all"), released("1.2.0"), loaded, mine,
                   base=adapters, cache=cache_root(tmp_path / "c"), peer_argv=[],
                   settings=Settings("api", 10.0, 30.0, 60.0), say=lambda _: None)
    assert [p.name for p in mine.iterdir()] == ["matrix.json"]
    assert (mine / "matrix.json").read_text() == "keep me"


def _target(adapters: Path, cache: Path, version: str) -> Target:
    from fixturegen.builds.build import Wanted, ensure

    built: Built = ensure(TEST_ADAPTER.recipe, adapters, Wanted(version=version), cache)
    built.hold.release()
    return TEST_ADAPTER.target(adapters, built)


def test_check_exits_as_git_bisect_run_expects(corpus: Path, adapters: Path,
                                               tmp_path: Path) -> None:
    loaded = read_corpus(corpus, transcripts=True, handshakes=False, timeout=10.0)
    cache = cache_root(tmp_path / "cache")
    accepts, rejects = _target(adapters, cache, "1.2.0"), _target(adapters, cache, "2.0.0")
    case = "invalid.self-signature-corrupted.ed25519"
    broken = check(accepts, loaded, case, "api", peer_argv=[], timeout=10.0, startup=30.0)
    fixed = check(rejects, loaded, case, "api", peer_argv=[], timeout=10.0, startup=30.0)
    assert (broken.status("expected"), fixed.status("expected")) == (EXIT_DIVERGES,
                                                                      EXIT_EXPECTED)
    assert (broken.status("diverges"), fixed.status("diverges")) == (EXIT_EXPECTED,
                                                                      EXIT_DIVERGES)
    assert broken.line("1.2.0").startswith(
        f"test-impl 1.2.0: {case}: false_accept (diverges): accepted")
    vector = next(c.id for c in loaded.api if c.request.kind == "certificate_verify")
    skipped = check(accepts, loaded, vector, "api", peer_argv=[], timeout=10.0, startup=30.0)
    assert skipped.status("expected") == EXIT_CANNOT_TELL  # the build does not take the case


def test_the_bootstrap_interval_tells_a_saving_from_noise() -> None:
    slow = [0.0100 + 0.0001 * (i % 7) for i in range(60)]
    fast = [0.0080 + 0.0001 * (i % 7) for i in range(60)]
    ratio, low, high = ratio_interval(slow, fast)
    assert 0.78 < ratio < 0.82 and high < 1.0 and verdict(low, high) == "B faster"
    same = [0.0100 + 0.0001 * ((i * 3) % 7) for i in range(60)]
    ratio, low, high = ratio_interval(slow, same)
    assert low <= 1.0 <= high and verdict(low, high).startswith("no difference")
    assert ratio_interval(slow, fast) == ratio_interval(slow, fast)  # a fixed seed


def test_a_matrix_file_round_trips_through_its_schema(tmp_path: Path) -> None:
    from fixturegen.harness.matrix import MatrixError

    (tmp_path / "bad.json").write_text(json.dumps({"schema_version": 1}))
    with pytest.raises(MatrixError, match="is not a matrix file"):
        load_matrix(tmp_path / "bad.json")


def test_recipes_of_the_shipped_adapters_name_their_registries() -> None:
    from fixturegen.harness.adapters import SHIPPED

    for adapter in SHIPPED:
        recipe: Recipe = adapter.recipe
        assert recipe.package and recipe.since, adapter.name
        assert recipe.carries(Version.parse(adapter.version)), adapter.name


def test_the_matrix_command_refuses_its_out_before_asking_a_registry(tmp_path: Path) -> None:
    """The command line checks --out first: one line, exit 2, nothing on standard output, and
    no registry asked (a version that no registry serves is never looked up)."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    run = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "matrix", "--impl",
                          "go-libp2p", "--versions", "v0.0.0-not-served", "--out", str(fifo)],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == f"fixturegen: error: {fifo} exists and is not a folder (a file, FIFO " \
                         "or device)\n"


def test_a_profile_handshake_id_is_a_case_id() -> None:
    """A profile repeats one case's handshake under ids of its own; each must pass the check
    every result's id passes (a '#' in them once stopped every profile with a traceback)."""
    from fixturegen.harness.results import CaseResult
    from fixturegen.versions.profile import run_id

    ids = {run_id("matrix.ed25519.ed25519.fixed", n) for n in range(3)}
    assert len(ids) == 3
    pattern = CaseResult.model_json_schema()["properties"]["id"]["pattern"]
    assert all(re.fullmatch(pattern, i) for i in ids)
    assert not re.fullmatch(pattern, "matrix.ed25519.ed25519.fixed#0")
