"""Validity near the verifier's clock (fixturegen/harness/clock.py): certificates made when an
entry starts, read back with cryptography's X.509 parser, judged by the reference verifier and
by go-libp2p's real check and handshake."""

from __future__ import annotations

import base64
import json
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from fixturegen.harness import clock
from fixturegen.harness.adapters import BY_NAME, PEER
from fixturegen.harness.handshake import clock_refreshed
from fixturegen.harness.session import Target, read_corpus, run_entries, run_target
from fixturegen.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"


def _now() -> datetime:
    """A moment just before the check (each test takes its own: two clock cases change verdict
    20 minutes after they are made, and a test checks them within seconds)."""
    return datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)


def _certificate(made: clock.Minted) -> x509.Certificate:
    return x509.load_der_x509_certificate(base64.b64decode(made.certificate))


def test_each_clock_case_sits_its_margin_from_the_moment_it_is_made() -> None:
    now = _now()
    made = {c.id.removeprefix(clock.PREFIX): _certificate(clock.mint(c, now))
            for c in clock.CLOCK_CASES}
    windows = {name: (cert.not_valid_before_utc, cert.not_valid_after_utc)
               for name, cert in made.items()}
    far_past, far_future = datetime(1999, 1, 1, tzinfo=UTC), datetime(3000, 1, 1, tzinfo=UTC)
    assert windows == {"expired-minutes-ago": (far_past, now - clock.MARGIN),
                       "valid-since-minutes": (now - clock.MARGIN, far_future),
                       "not-yet-valid-minutes": (now + clock.MARGIN, far_future),
                       "expires-in-minutes": (far_past, now + clock.MARGIN)}
    # Made again later, the boundary moves with the moment.
    later = _certificate(clock.mint(clock.CLOCK_CASES[0], now + timedelta(hours=2)))
    assert later.not_valid_after_utc == now + timedelta(hours=2) - clock.MARGIN


def test_the_reference_verifier_gives_each_clock_case_its_stated_result() -> None:
    verifier = Verifier()
    for case in clock.harness_cases(_now()):
        chain = [base64.b64decode(c) for c in case.request.certificates]
        verdict = verifier.verify(chain)
        assert verdict.accepted == (case.expected.result == "valid"), case.id
        assert verdict.error == case.expected.error, case.id
        if verdict.accepted:
            assert verdict.peer_id == case.expected.peer_id == clock.claimed()[case.id]


def test_a_corpus_of_the_catalogue_carries_the_clock_cases_and_others_do_not(
        corpus: Path, tmp_path: Path) -> None:
    read = read_corpus(corpus, transcripts=False, handshakes=True, timeout=5.0)
    ids = [c.id for c in read.api]
    # the clock cases first, the late ones last (the API entry makes them again when it sends
    # them); no handshake carries a late one
    assert [i for i in ids if clock.is_clock(i)] == [c.id for c in clock.CLOCK_CASES] + [
        c.id for c in clock.LATE_CASES]
    assert ids[-len(clock.LATE_CASES):] == [c.id for c in clock.LATE_CASES]
    for way, plan in read.plans.items():
        clocked = [hc for hc in plan if clock.is_clock(hc.id)]
        assert [hc.id for hc in clocked] == [c.id for c in clock.CLOCK_CASES], way
        assert all(hc.skip is None and hc.presentation.key for hc in clocked)
        # A dialler names the PeerId the certificate claims, as for a fixture.
        if way[1] == "dial":
            assert all(hc.case.request.expect_peer_id == clock.claimed()[hc.id]
                       for hc in clocked)
    # Refreshed for a later entry: new certificates, the rest untouched.
    later = clock.refreshed(read.api, _now() + timedelta(hours=1))
    changed = [a.id for a, b in zip(read.api, later, strict=True) if a is not b]
    assert changed == [c.id for c in clock.CLOCK_CASES]
    plan = read.plans["tcp", "dial"]
    moved = clock_refreshed(plan, _now() + timedelta(hours=1))
    assert [a.id for a, b in zip(plan, moved, strict=True)
            if a.presentation != b.presentation] == [c.id for c in clock.CLOCK_CASES]
    # A corpus of other certificates (one fixture, not the catalogue's base) has none.
    small = tmp_path / "small"
    shutil.copytree(corpus, small)
    manifest = json.loads((small / "manifest.json").read_text())
    manifest["fixtures"] = [f for f in manifest["fixtures"] if f["id"] == "valid.ed25519"]
    (small / "manifest.json").write_text(json.dumps(manifest))
    assert not any(clock.is_clock(c.id)
                   for c in read_corpus(small, transcripts=False, handshakes=False,
                                        timeout=5.0).api)


def test_go_libp2p_judges_the_clock_cases_by_its_own_clock(corpus: Path,
                                                          tmp_path: Path) -> None:
    """go-libp2p's real check and a real TCP dial: the certificates that expired minutes ago or
    become valid in minutes are refused for their dates, the ones valid since minutes ago or
    until minutes from now are accepted."""
    go = BY_NAME["go-libp2p"]
    if not go.built(ADAPTERS) or not (ADAPTERS / PEER).is_file():
        pytest.skip("go-libp2p or the fixture peer is not built: run 'make adapters'")
    read = read_corpus(corpus, transcripts=False, handshakes=True, timeout=20.0)
    only = {c.id for c in clock.CLOCK_CASES}
    small = type(read)(read.path, read.seed, [c for c in read.api if c.id in only],
                       {("tcp", "dial"): [hc for hc in read.plans["tcp", "dial"]
                                          if hc.id in only]})
    entries, broken = run_entries(go.target(ADAPTERS), small, "all", tmp_path,
                                  peer_argv=[str(ADAPTERS / PEER)], timeout=20.0,
                                  startup=60.0)
    assert broken is None and [e.mode for e in entries] == ["api", "handshake"]
    for entry in entries:
        got = {c.id: c for c in entry.cases}
        assert [c.id for c in entry.cases] == [c.id for c in clock.CLOCK_CASES]
        for case in clock.CLOCK_CASES:
            answer = got[case.id]
            assert answer.outcome == "agree", (entry.label, case.id, answer.error)
            assert answer.verdict == ("accept" if case.result == "valid" else "reject")
            if case.result == "invalid":  # Go's x509 error names the validity period
                assert "expired or is not yet valid" in (answer.error or ""), answer.error


def test_a_late_case_opens_or_closes_at_the_next_second_after_the_first_answer() -> None:
    first = datetime(2026, 12, 7, 15, 0, 0, 250000, tzinfo=UTC)
    moment = datetime(2026, 12, 7, 15, 0, 1, tzinfo=UTC)
    assert clock.late_moment(first) == moment
    assert clock.late_moment(first.replace(microsecond=0)) == moment  # strictly after
    for case in clock.LATE_CASES:
        request, after = clock.late_request(case.id, first)
        assert after == moment + clock.LATE_MARGIN
        cert = x509.load_der_x509_certificate(base64.b64decode(request.certificates[0]))
        if case.bound == "not_after":
            assert cert.not_valid_after_utc == moment
            assert cert.not_valid_before_utc.year == 1999
        else:
            assert cert.not_valid_before_utc == moment
            assert cert.not_valid_after_utc.year == 3000
        verdict = Verifier().verify([cert.public_bytes(Encoding.DER)], at=after)
        assert verdict.error == case.error, case.id
        # one second before the moment, each has the other verdict
        before = Verifier().verify([cert.public_bytes(Encoding.DER)],
                                   at=moment - timedelta(seconds=1))
        assert before.accepted == (case.result != "valid"), case.id


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_verifier_whose_clock_stopped_at_its_start_is_caught(corpus: Path, jobs: int) -> None:
    """The late cases are made from the adapter process's first answer and sent once their
    moment is past (the driver waits: nothing races the machine). The reference verifier, on
    the real clock, agrees with both; a stand-in whose "now" is its start time accepts the
    expired one and refuses the valid one. The rest of the corpus cannot tell them apart."""
    read = read_corpus(corpus, transcripts=False, handshakes=False, timeout=5.0)
    cases = [c for c in read.api if c.id.startswith(("valid.ed25519", "invalid.expired"))
             or clock.is_clock(c.id)]
    late = [c.id for c in clock.LATE_CASES]
    assert [c.id for c in cases][-2:] == late
    reference = Target("reference", "fixturegen", "0", "reference",
                       (sys.executable, str(ADAPTERS / "reference" / "adapter.py")))
    frozen = Target("frozen", "test", "0", "frozen clock",
                    (sys.executable, str(ROOT / "tests" / "adapters" / "frozen_clock.py")))
    right = run_target(reference, cases, timeout=30, startup=30, stderr_path=None, jobs=jobs)
    assert {c.outcome for c in right.cases} == {"agree"}
    wrong = {c.id: c.outcome for c in run_target(frozen, cases, timeout=30, startup=30,
                                                 stderr_path=None, jobs=jobs).cases}
    assert wrong.pop("clock.expired-since-start") == "false_accept"
    assert wrong.pop("clock.valid-since-start") == "false_reject"
    assert set(wrong.values()) == {"agree"}


def test_a_late_case_checked_alone_still_follows_a_loaded_adapter(corpus: Path) -> None:
    """``harness check`` of a late case, or a late case after a restart: the process has not
    answered yet, so the driver first sends it the base fixture (its answer dropped) and makes
    the late case from that first answer. The frozen-clock stand-in is still caught."""
    read = read_corpus(corpus, transcripts=False, handshakes=False, timeout=5.0)
    late = [c for c in read.api if clock.is_late(c.id)]
    frozen = Target("frozen", "test", "0", "frozen clock",
                    (sys.executable, str(ROOT / "tests" / "adapters" / "frozen_clock.py")))
    for case in late:
        [got] = run_target(frozen, [case], timeout=30, startup=30, stderr_path=None,
                           every=read.api).cases
        assert got.id == case.id
        assert got.outcome == ("false_accept" if case.expected.result == "invalid"
                               else "false_reject"), (case.id, got.error)
