"""Differential fuzzing: the mutators, the reference under mutants, the triage, the report and
its replay through ``harness run``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from fixturegen.fuzz import campaign, independent
from fixturegen.fuzz.campaign import (
    CHUNK,
    MEMBERS_KEPT,
    Campaign,
    Maker,
    Parent,
    independent_check,
    make_mutants,
    parents,
    reference,
)
from fixturegen.fuzz.mutators import OPERATORS, UNSIGNED_OPERATORS, Step, build
from fixturegen.fuzz.report import fuzz_schema
from fixturegen.harness.session import Target
from fixturegen.verify import Verifier
from fixturegen.workers import WorkerDied

ROOT = Path(__file__).resolve().parents[1]
SEED = b"libp2p-fixturegen"
LENIENT = (sys.executable, str(ROOT / "tests/adapters/lenient.py"))


@pytest.fixture(scope="module")
def pool() -> list[Parent]:
    return parents(SEED)


def test_the_parents_are_the_valid_catalogue_certificates(pool: list[Parent]) -> None:
    v = Verifier()
    assert len(pool) > 80
    for p in pool:
        der = dict(p.rendered.files)[p.rendered.fixture.path]
        assert p.draft.sign() == der and v.verify([der]).accepted, p.id


@pytest.mark.parametrize("operator", sorted(OPERATORS))
def test_each_operator_changes_the_certificate_reproducibly(pool: list[Parent],
                                                            operator: str) -> None:
    parent, others = pool[0], tuple(p.draft for p in pool[1:])
    original = parent.draft.sign()
    changed = 0
    for value in range(12):
        steps = (Step(operator, value),)
        der, signed = build(parent.draft, others, steps)
        assert build(parent.draft, others, steps) == (der, signed)  # from (parent, steps) alone
        assert signed == (operator not in UNSIGNED_OPERATORS)
        changed += der != original
    assert changed >= 10  # (a shuffle may, rarely, give the same order back)


def test_a_remembered_signature_is_the_one_signing_would_make(
        pool: list[Parent], monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutator's signature memo: a mutant built from a warm memo is byte for byte the one a
    cold memo builds (every scheme signs deterministically), and mutants whose TBS is their
    parent's (whole-certificate damage alone, or a step that keeps the old signature) sign it
    once between them, RSA parents included."""
    from fixturegen.certs.schemes import SigningAlgorithm
    from fixturegen.fuzz import mutators

    made: list[bytes] = []
    plain = SigningAlgorithm.sign

    def counted(self: SigningAlgorithm, key: object, data: bytes, salt: bytes = b"") -> bytes:
        made.append(data)
        return plain(self, key, data, salt)  # type: ignore[arg-type]

    monkeypatch.setattr(SigningAlgorithm, "sign", counted)
    mutators._SIGNED.clear()
    warm = make_mutants(SEED, pool, 0, 400)
    signed_cold = len(made)
    assert 0 < signed_cold < len(warm)  # the parents' own TBSs were met more than once
    mutators._SIGNED.clear()
    made.clear()
    again = make_mutants(SEED, pool, 0, 400)
    assert [(m.id, m.der) for m in again] == [(m.id, m.der) for m in warm]
    assert len(made) == signed_cold
    made.clear()
    assert [(m.id, m.der) for m in make_mutants(SEED, pool, 0, 400)] == [
        (m.id, m.der) for m in warm]
    assert made == []  # all remembered
    rsa = [p for p in pool if p.draft.cert_key.kind.value.startswith("rsa")]
    assert rsa
    for parent in rsa[:4]:
        others = tuple(p.draft for p in pool if p is not parent)
        made.clear()
        for steps in ((Step("byte-flip", 7),), (Step("serial", 3, resign=False),),
                      (Step("truncate", 5),)):
            der, _ = build(parent.draft, others, steps)
            assert der != parent.der
        assert made in ([], [parent.draft.tbs_der()])  # the parent's TBS, signed once at most


def test_mutants_are_reproducible_and_signed_ones_carry_a_valid_self_signature(
        pool: list[Parent]) -> None:
    a = make_mutants(SEED, pool, 0, 1500)
    b = make_mutants(SEED, pool, 0, 1500)
    assert [(m.id, m.der) for m in a] == [(m.id, m.der) for m in b]
    other = make_mutants(b"another seed", parents(b"another seed"), 0, 50)
    # Another seed, other mutants: the seed derives the host keys (and the throwaway
    # certificate keys), so a mutant both seeds share is one whose steps removed everything
    # seed-derived, e.g. the libp2p extension dropped from a fixed-key matrix certificate
    # and the rest re-signed by that fixed key.
    shared = {m.der for m in other} & {m.der for m in a}
    assert len(shared) < len(other) / 10
    libp2p_oid = bytes.fromhex("060a2b0601040183a25a0101")
    assert all(libp2p_oid not in der for der in shared)
    v = Verifier()
    codes: Counter[str] = Counter()
    for m in a:
        ref = reference(v, m.der)
        assert ref.verdict != "crash", (m.id, ref.error)
        codes[ref.key] += 1
        if m.signed:  # the mutation is the only fault: the self-signature still verifies
            assert ref.error != "certificate_signature_invalid", (m.id, m.steps)
            codes["(signed)"] += 1
    unsigned = [m for m in a if not m.signed and not {s.operator for s in m.steps}
                & UNSIGNED_OPERATORS]
    assert unsigned and all(reference(v, m.der).key != "accept" for m in unsigned)
    # the mutants reach every layer: many distinct verdicts, acceptance included
    assert len(codes) >= 10 and codes["accept"] > 0
    assert codes["(signed)"] > len(a) // 2  # most mutants are signed: the branch above ran


def test_mutants_made_on_two_cores_are_the_ones_one_makes(pool: list[Parent]) -> None:
    """Forked workers make the same mutants, in the same order, as this process does; so does
    a campaign whose mutants they make."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: mutants are made in the command's own process")
    count = 4 * CHUNK + 37  # tasks of CHUNK numbers and a shorter last one
    with Maker(SEED, pool, jobs=2) as maker:
        forked = maker.make(100, count)
        assert maker.workers is not None  # the range was made by workers, not in here
    here = make_mutants(SEED, pool, 100, count)
    assert len(here) > 4 * CHUNK
    assert [(m.id, m.steps, m.der, m.signed) for m in forked] == [
        (m.id, m.steps, m.der, m.signed) for m in here]
    one, two = (Campaign(SEED, [], pool=pool, jobs=jobs) for jobs in (1, 2))
    for c in (one, two):
        c.run(count=700)
    assert one.tried == two.tried == 700
    assert one.references == two.references and one.independent == two.independent
    assert {k: g.count for k, g in one.finding_groups.items()} == {
        k: g.count for k, g in two.finding_groups.items()}


def _die(start: int, count: int) -> list[object]:
    os.kill(os.getpid(), signal.SIGKILL)
    return []


def test_workers_killed_between_two_batches_are_a_worker_died(pool: list[Parent]) -> None:
    """Killed while the pool is idle (between a campaign's batches): the next batch says so."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: mutants are made in the command's own process")
    with Maker(SEED, pool, jobs=2) as maker:
        maker.make(0, CHUNK + 1)
        assert maker.workers is not None
        pids = list(maker.workers.pool._processes)  # type: ignore[attr-defined]
        assert pids
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        for pid in pids:  # gone for sure (the pool's own thread reaps them)
            while _running(pid):
                os.sched_yield()
        with pytest.raises(WorkerDied):
            maker.make(CHUNK + 1, CHUNK + 1)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_a_worker_that_dies_is_exit_4_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    """A maker's worker killed (out of memory, by hand) ends the campaign with exit code 4 and
    one line, and leaves no report."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: mutants are made in the command's own process")
    from typer.testing import CliRunner

    from fixturegen.cli import app

    monkeypatch.setattr(campaign, "_make_chunk", _die)
    result = CliRunner().invoke(app, ["fuzz", "--cases", str(2 * CHUNK + 1), "--jobs", "2",
                                      "--out", str(tmp_path / "report")])
    assert result.exit_code == 4, result.output
    errors = [line for line in result.stderr.splitlines() if not line.startswith("fuzz: ")]
    assert errors == [errors[0]] and "a worker process died while making mutants" in errors[0]
    assert "Traceback" not in result.output and not (tmp_path / "report").exists()


def test_the_independent_check_agrees_on_the_catalogue(pool: list[Parent]) -> None:
    for p in pool:
        assert independent.check(dict(p.rendered.files)[p.rendered.fixture.path]) == (
            "accept", ""), p.id


@pytest.mark.slow
def test_triage_clusters_minimises_and_marks_covered_or_new(pool: list[Parent]) -> None:
    lenient = Target("lenient", "test", "0", "accepts all", (*LENIENT, "--crash-on-oid"))
    c = Campaign(SEED, [lenient], timeout=5.0, startup=30.0, pool=pool)
    c.run(count=400)
    clusters = c.clusters()
    assert clusters
    assert sum(x.count for x in clusters) == c.disagreements > 0
    for cluster in clusters:
        rep = cluster.representative
        assert rep is not None and 0 < len(cluster.members) <= min(cluster.count, MEMBERS_KEPT)
        # the best member found (kept whether or not among the first few), or its minimised form
        assert rep.id in c.references and rep.id.split(".m")[0].startswith("fuzz.")
        ref = c.references[rep.id]
        assert ref.key == cluster.reference_key
        assert cluster.verdicts["lenient"] == cluster.verdict
        assert len(rep.steps) <= min(len(m.steps) for m in cluster.members)
        # accepting what the reference rejects: the catalogue already shows it (covered); a
        # crash no catalogue case causes: new
        if cluster.verdict == "accept":  # lenient disagrees on what the reference rejects
            assert cluster.reference_key != "accept" and cluster.status == "covered"
        else:
            assert cluster.verdict == "crash" and cluster.status == "new"
            assert "extension-unknown" in cluster.operator
    assert {x.verdict for x in clusters} == {"accept", "crash"}
    keys = [(x.implementation, x.reference_key, x.verdict, x.operator) for x in clusters]
    assert len(keys) == len(set(keys))


def fixturegen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # a whole campaign or corpus: make test-slow (CI runs it)
def test_the_report_replays_through_harness_run(tmp_path: Path) -> None:
    out = tmp_path / "fuzz"
    done = fixturegen("fuzz", "--cases", "300", "--out", str(out), "--name", "lenient", "--",
                      *LENIENT)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "fuzz.json").read_text())
    jsonschema.validate(report, json.loads((out / "fuzz.schema.json").read_text()))
    shipped = json.loads((ROOT / "fixturegen/schemas/fuzz.schema.json").read_text())
    assert shipped == fuzz_schema() == json.loads((out / "fuzz.schema.json").read_text())
    assert report["mutants"] == 300 and report["clusters"]  # --cases N: N mutants tried
    # the manifest states the reference's verdict on every representative
    check = fixturegen("verify", "--manifest", str(out / "manifest.json"))
    assert check.returncode == 0, check.stdout + check.stderr
    # replayed through the harness, the adapter gives the verdicts the report recorded
    replay = fixturegen("harness", "run", "--corpus", str(out), "--out", str(tmp_path / "r"),
                        "--no-interop", "--name", "lenient", "--", *LENIENT)
    assert replay.returncode in (0, 1), replay.stderr
    results = json.loads((tmp_path / "r/results.json").read_text())
    got = {r["id"]: r["verdict"] for r in results["implementations"][0]["cases"]}
    for cluster in report["clusters"]:
        assert got[cluster["id"]] == cluster["verdicts"]["lenient"], cluster["id"]
    again = fixturegen("fuzz", "--cases", "300", "--out", str(tmp_path / "fuzz2"), "--name",
                       "lenient", "--", *LENIENT)
    assert again.returncode == 0
    # same seed, same mutants and clusters (only the measured times differ)
    assert (out / "manifest.json").read_bytes() == (tmp_path / "fuzz2/manifest.json").read_bytes()
    second = json.loads((tmp_path / "fuzz2/fuzz.json").read_text())
    assert second["clusters"] == report["clusters"] and second["mutants"] == report["mutants"]


@pytest.mark.slow
def test_bad_options_are_one_line_and_leave_the_folder(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    for args in (["--cases", "5", "--time", "5"], ["--out", str(foreign)],
                 ["--impl", "no-such"], ["--cases", "0"], ["--name", "../x", "--", "true"],
                 ["--out", str(foreign / "notes.txt" / "report")]):  # cannot be written
        done = fixturegen("fuzz", *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    # An adapter with handshakes only has nothing to fuzz (the fuzzer asks for certificate
    # checks), built or not.
    done = fixturegen("fuzz", "--impl", "litep2p", "--adapters", str(ROOT / "adapters"),
                      cwd=tmp_path)
    assert done.returncode == 2 and "litep2p has no API mode" in done.stderr


@pytest.mark.slow
def test_an_adapter_that_answers_garbage_is_not_passed_as_a_perfect_one(tmp_path: Path) -> None:
    """An adapter that answers every request with a line that is not a reply gives no verdict:
    the campaign counts its protocol errors and exits 3 instead of reporting "0 disagreements"
    as for a verifier that agrees with the reference everywhere."""
    garbage = tmp_path / "garbage.py"
    garbage.write_text("import sys\nfor line in sys.stdin:\n    print('not json', flush=True)\n")
    out = tmp_path / "fuzz"
    done = fixturegen("fuzz", "--cases", "40", "--out", str(out), "--name", "garbage", "--",
                      sys.executable, str(garbage), cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "garbage gave no verdict on any of 40 mutants (40 protocol errors" in line
    report = json.loads((out / "fuzz.json").read_text())
    assert report["answers"]["garbage"] == {"verdicts": 0, "skips": 0, "errors": 40,
                                            "hangs": 0, "crashes": 0}
    assert "| garbage | 0 | 0 | 40 | 0 | 0 |" in (out / "summary.md").read_text()
    # A real verifier's answers are verdicts, counted the same way (and exit 0).
    lenient = fixturegen("fuzz", "--cases", "40", "--out", str(tmp_path / "ok"), "--name",
                         "lenient", "--", *LENIENT)
    assert lenient.returncode == 0, lenient.stderr
    counted = json.loads((tmp_path / "ok" / "fuzz.json").read_text())["answers"]["lenient"]
    assert counted["verdicts"] == 40 and counted["errors"] == 0


def test_a_tbs_change_under_whole_certificate_damage_is_still_re_signed(
        pool: list[Parent]) -> None:
    """One fault at a time: byte-flip damages the re-signed certificate, not the parent's
    signature over another TBS (which would be a second fault)."""
    parent, others = pool[0], tuple(p.draft for p in pool[1:])
    v = Verifier()
    compared = 0
    for value in range(8):
        change = Step("extension-unknown", value)
        alone, signed = build(parent.draft, others, (change,))
        assert signed and v.verify([alone]).error != "certificate_signature_invalid"
        flipped, flipped_signed = build(parent.draft, others, (change, Step("byte-flip", value)))
        assert not flipped_signed and len(flipped) == len(alone)
        diff = [a ^ b for a, b in zip(alone, flipped, strict=True) if a != b]
        assert len(diff) == 1 and bin(diff[0]).count("1") == 1  # exactly one bit apart
        compared += 1
    assert compared == 8


def test_a_kept_old_signature_is_the_parents(pool: list[Parent]) -> None:
    parent, others = pool[0], tuple(p.draft for p in pool[1:])
    der, signed = build(parent.draft, others, (Step("extension-unknown", 3, resign=False),))
    assert not signed and reference(Verifier(), der).key == "certificate_signature_invalid"


class _Stuck(Verifier):
    def verify(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        while True:
            pass


class _Broken(Verifier):
    def verify(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        raise RuntimeError("boom")


def test_the_reference_is_bounded_in_time_and_never_raises(pool: list[Parent]) -> None:
    der = pool[0].der
    stuck = reference(_Stuck(), der, limit=0.2)
    assert (stuck.verdict, stuck.error) == ("hang", "more than 0.2 s")
    broken = reference(_Broken(), der)
    assert broken.verdict == "crash" and broken.error == "RuntimeError: boom"
    assert reference(Verifier(), der).verdict == "accept"  # the timer is disarmed after a hang


def test_an_unforeseen_exception_in_the_independent_check_is_a_crash(
        monkeypatch: pytest.MonkeyPatch, pool: list[Parent]) -> None:
    def explode(der: bytes) -> tuple[str, str]:
        raise KeyError("surprise")

    monkeypatch.setattr(independent, "check", explode)
    assert independent_check(pool[0].der) == ("crash", "KeyError: 'surprise'")


def test_a_long_campaign_keeps_a_bounded_number_of_mutants(pool: list[Parent]) -> None:
    lenient = Target("lenient", "test", "0", "accepts all", LENIENT)
    c = Campaign(SEED, [lenient], timeout=5.0, startup=30.0, pool=pool)
    c.run(count=1500)
    assert c.tried == 1500
    kept = set(c.references)
    groups = [*c.groups.values(), *c.finding_groups.values()]
    assert len(kept) <= len(groups) * (MEMBERS_KEPT + 1)
    assert sum(g.count for g in c.groups.values()) == c.disagreements
    big = [g for g in groups if g.count > MEMBERS_KEPT]
    assert big, "no cluster outgrew what it keeps: the bound was not exercised"
    assert all(len(g.members) == MEMBERS_KEPT for g in big)
    # what no cluster keeps was dropped with its verdicts
    assert set(c.verdicts["lenient"]) == kept == set(c.independent)


@pytest.mark.conformance
def test_a_campaign_on_the_shipped_adapters_replays_through_harness_run(tmp_path: Path) -> None:
    """`make conformance`: a short campaign over every shipped adapter (built by make
    adapters); every cluster's representative, replayed by `harness run --corpus`, gets from
    each implementation the verdict the campaign recorded."""
    out = tmp_path / "fuzz"
    done = fixturegen("fuzz", "--impl", "all", "--cases", "1000", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "fuzz.json").read_text())
    assert report["mutants"] == 1000 and report["clusters"]
    assert {c["implementation"] for c in report["clusters"]} >= {"go-libp2p", "js-libp2p"}
    replay = fixturegen("harness", "run", "--impl", "all", "--mode", "api", "--no-interop",
                        "--corpus", str(out), "--out", str(tmp_path / "r"))
    assert replay.returncode == 0, replay.stderr[-2000:]
    results = json.loads((tmp_path / "r/results.json").read_text())
    got = {i["name"]: {c["id"]: c["verdict"] for c in i["cases"]}
           for i in results["implementations"]}
    compared = 0
    for cluster in report["clusters"] + report["reference_findings"]:
        for name, verdict in cluster["verdicts"].items():
            if name != "independent":
                assert got[name][cluster["id"]] == verdict, (cluster["id"], name)
                compared += 1
    assert compared >= 5 * len(report["clusters"])


def test_a_crash_of_both_checks_is_still_a_reference_finding(
        monkeypatch: pytest.MonkeyPatch, pool: list[Parent]) -> None:
    from fixturegen.fuzz import campaign

    def crash(der: bytes) -> tuple[str, str]:
        raise RuntimeError("independent boom")

    monkeypatch.setattr(campaign, "reference", lambda v, der: campaign.Reference(
        "crash", "RuntimeError: boom", None, ()))
    monkeypatch.setattr(independent, "check", crash)
    c = Campaign(SEED, [], pool=pool)
    c.run(count=20)
    assert c.reference_crashes == 20
    findings = c.reference_findings()
    assert sum(f.count for f in findings) == 20
    assert {(f.reference_key, f.verdict) for f in findings} == {("RuntimeError: boom", "crash")}
