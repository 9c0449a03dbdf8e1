"""Handshake mode end to end: go-libp2p's real secure-channel upgrade against the fixture peer,
in both directions, over TCP. The adapter and the peer are built from the Go module proxy by
adapters/build when missing (the Go toolchain is part of this project's machines)."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from fixturegen.harness.adapters import BY_NAME, PEER
from fixturegen.harness.handshake import (
    FAULTS,
    LISTENER_EXPECTS_NONE,
    HandshakeCase,
    handshake_cases,
    listener_plan,
)
from fixturegen.harness.session import Target, run_handshake
from tests.signals import default_signals

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"
GO = BY_NAME["go-libp2p"]


@pytest.fixture(scope="module")
def built() -> Target:
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain on this machine")
    with open(ADAPTERS / ".build.lock", "w") as lock:  # pytest -n 2: one build at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not GO.built(ADAPTERS) or not (ADAPTERS / PEER).is_file():
            subprocess.run([str(ADAPTERS / "build"), "fixture-peer", "go-libp2p"], check=True,
                           timeout=900)
    return Target(GO.name, GO.package, GO.version, GO.verifier, tuple(GO.argv(ADAPTERS)),
                  GO.handshake, GO.transports)


def pick(cases: list[HandshakeCase], ids: list[str]) -> list[HandshakeCase]:
    by_id = {c.id: c for c in cases}
    return [by_id[i] for i in ids]


def test_each_direction_carries_its_side_of_the_corpus(corpus: Path,
                                                       manifest: dict[str, object]) -> None:
    fixtures = manifest["fixtures"]
    assert isinstance(fixtures, list)
    for direction, context in (("dial", "server"), ("listen", "client")):
        cases = handshake_cases(corpus, "tcp", direction, 5.0)
        ids = [c.id for c in cases]
        assert len(ids) == len(set(ids))
        assert {f["id"] for f in fixtures} <= set(ids)
        vectors = [c for c in cases if c.id.startswith(("cv.", "cv-invalid.", "ps."))
                   and not c.proof_set]
        assert vectors and all(c.id.endswith("." + context) or f".{context}." in c.id
                               for c in vectors)
        proof_sets = [c for c in cases if c.proof_set and not c.id.startswith("rule.")]
        none = [c for c in proof_sets if c.presentation.fault == "no-certificate"]
        # a listener also meets a dialer that presents no certificate at all
        assert [c.id for c in none] == (["ps.no-certificate.client"] if direction == "listen"
                                        else [])
        assert all(not c.presentation.certificates and c.case.expected.result == "invalid"
                   for c in none)
        assert len(proof_sets) == 16 + len(none)
        assert all(f".{context}." in c.id or c.id.endswith(f".{context}") for c in proof_sets)
        faults = {c.presentation.fault for c in cases if c.id.startswith("cv-invalid.")}
        assert faults == FAULTS | {""}  # "": the PKCS#1 vectors, an honest signature
        # A dialler always names a PeerId; a listener only in a case about the expected
        # PeerId, kept where the implementation's listener takes one and skipped elsewhere.
        mismatch = next(c for c in cases if c.id == "invalid.peer-id-mismatch")
        named = mismatch.case.request.expect_peer_id
        assert mismatch.skip is None and named == next(
            f["expect_peer_id"] for f in fixtures if f["id"] == "invalid.peer-id-mismatch")
        assert mismatch.listener_peer == (direction == "listen")
        plain = next(c for c in cases if c.id == "matrix.ecdsa_secp256r1_sha256.ed25519.fixed")
        assert (plain.case.request.expect_peer_id is None) == (direction == "listen")
        nowhere = {c.id: c for c in listener_plan(cases, "tcp", direction, ())}
        tcp_only = {c.id: c for c in listener_plan(cases, "tcp", direction, ("tcp",))}
        assert tcp_only["invalid.peer-id-mismatch"].skip is None
        assert (nowhere["invalid.peer-id-mismatch"].skip is None) == (direction == "dial")
        assert all(nowhere[c.id].skip == c.skip for c in cases if not c.listener_peer)
        assert all(c.case.request.kind == "handshake" and c.case.request.direction == direction
                   for c in cases)


@pytest.mark.parametrize("direction", ["dial", "listen"])
def test_real_handshakes_with_go_libp2p(built: Target, corpus: Path, direction: str,
                                        tmp_path: Path) -> None:
    side = "server" if direction == "dial" else "client"
    ids = ["matrix.ecdsa_secp256r1_sha256.ed25519.fixed",
           "invalid.extension-signature-corrupted.ed25519",
           f"ps.p256.{side}.transcript", f"ps.p256.{side}.valid",
           f"cv-invalid.p256.{side}.wrong-context", f"cv-invalid.p256.{side}.scheme-mismatch",
           f"cv-invalid.rsa-pss.{side}.pkcs1", "matrix.ed448.ed25519.fixed"]
    if direction == "listen":
        ids.append("ps.no-certificate.client")
    cases = pick(handshake_cases(corpus, "tcp", direction, 10.0), ids)  # type: ignore[arg-type]
    entry = run_handshake(built, [str(ADAPTERS / PEER)], cases, "tcp",
                          direction, timeout=20.0, startup=60.0,  # type: ignore[arg-type]
                          stderr_path=tmp_path / "stderr.log")
    got = {c.id: c for c in entry.cases}
    assert (entry.mode, entry.transport, entry.direction) == ("handshake", "tcp", direction)
    valid = got[ids[0]]
    expected_peer = cases[0].case.expected.peer_id
    assert (valid.verdict, valid.outcome, valid.peer_id) == ("accept", "agree", expected_peer)
    assert valid.peer is not None and valid.peer.outcome == "complete"
    assert valid.peer.scheme == 0x0403 and valid.peer.cpu_seconds > 0
    # The certificate go-libp2p presented (the peer requires one both ways), judged by the
    # reference: go-libp2p's own identity, not the case's.
    own = valid.peer.presented
    assert own is not None and (own.accepted, own.error) == (True, None)
    assert own.peer_id is not None and own.peer_id != expected_peer
    # The extension proof corrupted: go-libp2p's own check refuses it, inside the handshake.
    assert (got[ids[1]].verdict, got[ids[1]].outcome) == ("reject", "agree")
    extension = got[ids[1]]
    assert extension.peer is not None
    if direction == "dial":
        # The peer is the server: its handshake waits for the client's Finished, which never
        # comes; the client's alert is what ends it.
        assert extension.peer.outcome == "failed"
        assert "bad certificate" in (extension.peer.error or "")
        # ... and it refused before it sent a certificate of its own.
        assert extension.peer.presented is None
    else:
        # The peer is the client: TLS 1.3 completes its side at its own Finished, before the
        # server has judged its certificate, so the alert may come after the peer is done.
        assert extension.peer.outcome == "complete"
        error = extension.peer.error
        assert error is None or "bad certificate" in error, error
    # The transcript proof corrupted alone: crypto/tls underneath go-libp2p refuses it.
    transcript = got[ids[2]]
    assert (transcript.verdict, transcript.outcome) == ("reject", "agree")
    assert f"invalid signature by the {side} certificate" in (transcript.error or "")
    assert got[ids[3]].outcome == "agree"
    assert got[ids[4]].verdict == "reject"
    mismatch = got[ids[5]]
    assert mismatch.verdict == "reject" and mismatch.peer is not None
    assert mismatch.peer.scheme == 0x0503  # announced P-384 for a P-256 key
    # PKCS#1 v1.5 and Ed448 go to the message-level peer; go-libp2p offers neither: a skip
    # that names what it offered.
    for only_message_peer in (got[ids[6]], got[ids[7]]):
        assert only_message_peer.outcome == "skip"
        assert "offers no scheme this case sends (it offered [0x0804" in (
            only_message_peer.error or "")
    if direction == "listen":  # no certificate at all: go-libp2p's listener requires one
        anonymous = got["ps.no-certificate.client"]
        assert (anonymous.verdict, anonymous.outcome) == ("reject", "agree")
        assert anonymous.peer is not None and "certificate required" in (
            anonymous.peer.error or "")


@pytest.mark.parametrize("name", ["go-libp2p", "js-libp2p", "rust-libp2p"])
def test_a_listener_told_whom_it_expects_refuses_anyone_else(corpus: Path, name: str,
                                                             tmp_path: Path) -> None:
    """A listen request names the PeerId of a peer-id case. go-libp2p (SecureInbound's peer)
    and js-libp2p (secureInbound's remotePeer) listeners check it, over TCP; rust-libp2p's
    inbound upgrade takes none, and its entry skips the case rather than blame it."""
    adapter = BY_NAME[name]
    if not adapter.built(ADAPTERS) or not (ADAPTERS / PEER).is_file():
        pytest.skip(f"{name} or the fixture peer is not built: run 'make adapters'")
    target = adapter.target(ADAPTERS)
    ids = ["valid.peer-id.expected.ed25519", "valid.peer-id.expected-cid.rsa",
           "invalid.peer-id.other-key.ed25519", "invalid.peer-id.other-type.secp256k1",
           "invalid.peer-id.other-multihash.rsa", "matrix.ecdsa_secp256r1_sha256.ed25519.fixed"]
    plan = listener_plan(pick(handshake_cases(corpus, "tcp", "listen", 10.0), ids),
                         "tcp", "listen", target.listener_expects)
    entry = run_handshake(target, [str(ADAPTERS / PEER)], plan, "tcp", "listen",
                          timeout=20.0, startup=60.0, stderr_path=tmp_path / "stderr.log")
    got = {c.id: c for c in entry.cases}
    # A case that names no PeerId runs everywhere.
    assert got[ids[5]].outcome == "agree" and got[ids[5]].verdict == "accept"
    if name == "rust-libp2p":
        assert all(got[i].outcome == "skip" and got[i].error == LISTENER_EXPECTS_NONE
                   for i in ids[:5])
        return
    assert target.listener_expects == ("tcp",)
    assert [got[i].verdict for i in ids[:5]] == ["accept"] * 2 + ["reject"] * 3
    assert all(got[i].outcome == "agree" for i in ids[:5]), {i: got[i].outcome for i in ids}
    # The refusal is the PeerId check's, after a handshake the peer completed.
    assert all("peer" in (got[i].error or "").lower() for i in ids[2:5]), {
        i: got[i].error for i in ids[2:5]}


@pytest.mark.slow
def test_an_adapter_that_never_answers_costs_its_timeout_not_the_peer(
        built: Target, corpus: Path, tmp_path: Path) -> None:
    mute = Target("mute", "custom", "0", "none",
                  (sys.executable, str(ROOT / "tests/adapters/misbehave.py"),
                   str(tmp_path / "starts"), "--mute"))
    for direction in ("dial", "listen"):
        cases = pick(handshake_cases(corpus, "tcp", direction, 1.0),  # type: ignore[arg-type]
                     ["matrix.ecdsa_secp256r1_sha256.ed25519.fixed"])
        entry = run_handshake(mute, [str(ADAPTERS / PEER)], cases, "tcp",
                              direction, timeout=1.0, startup=2.0,  # type: ignore[arg-type]
                              stderr_path=None)
        assert [c.outcome for c in entry.cases] == ["hang"]
        # The peer gave up on its own deadline and said so; nothing was left running.
        peer = entry.cases[0].peer
        assert peer is not None and peer.outcome == "failed"


@pytest.mark.parametrize("direction", ["dial", "listen"])
def test_go_libp2p_handshakes_read_their_reasons_through_its_table(
        built: Target, corpus: Path, direction: str, tmp_path: Path) -> None:
    """A handshake entry maps its rejections through the adapter's reason table as the API
    check does: a v1 certificate that go-libp2p refuses for a missing extension (it reads no
    extension from a v1 certificate) is ``wrong_reason``, a missing extension is read right,
    and what the TLS stack says about a corrupted CertificateVerify matches no row: no reason,
    an agreement."""
    side = "server" if direction == "dial" else "client"
    ids = ["invalid.version-v1-with-extensions", "invalid.extension-missing",
           f"ps.p256.{side}.transcript"]
    table = GO.reasons(ADAPTERS)
    assert table is not None
    target = replace(built, reasons=table)
    cases = pick(handshake_cases(corpus, "tcp", direction, 10.0), ids)  # type: ignore[arg-type]
    entry = run_handshake(target, [str(ADAPTERS / PEER)], cases, "tcp",
                          direction, timeout=20.0, startup=60.0,  # type: ignore[arg-type]
                          stderr_path=tmp_path / "stderr.log")
    got = {c.id: (c.verdict, c.reason, c.outcome) for c in entry.cases}
    assert got == {
        "invalid.version-v1-with-extensions": ("reject", ["extension_missing"], "wrong_reason"),
        "invalid.extension-missing": ("reject", ["extension_missing"], "agree"),
        f"ps.p256.{side}.transcript": ("reject", None, "agree")}
    assert entry.counts["wrong_reason"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["tcp", "quic"])
def test_concurrent_handshakes_give_the_sequential_verdicts(built: Target, corpus: Path,
                                                          transport: str, tmp_path: Path) -> None:
    """--jobs: three adapter processes, each with its own fixture peer, several handshakes in
    flight at once, give every case the verdict, outcome and PeerId of one process taking the
    cases in turn (every fifth case of the listening plan: valid, invalid, acceptable, proof
    sets and CertificateVerify vectors)."""
    plan = handshake_cases(corpus, transport, "listen", 10.0)  # type: ignore[arg-type]
    cases = plan[::5]
    runs = [run_handshake(built, [str(ADAPTERS / PEER)], cases, transport,  # type: ignore[arg-type]
                          "listen", timeout=20.0, startup=60.0, stderr_path=None, jobs=jobs)
            for jobs in (1, 3)]
    seen = [[(c.id, c.verdict, c.outcome, c.peer_id) for c in run.cases] for run in runs]
    assert seen[0] == seen[1]
    outcomes = {o for _, _, o, _ in seen[0]}
    assert {"agree", "skip"} <= outcomes and len(seen[0]) == len(cases) > 60


@pytest.mark.slow
def test_a_failure_is_tried_once_more_before_it_is_reported(
        built: Target, corpus: Path, tmp_path: Path) -> None:
    """A hang that a second attempt (fresh adapter and fixture peer) does not meet is not
    reported as a hang: the second attempt's verdict is (the misbehaving adapter accepts with
    a PeerId of its own making), and the result says how the first attempt ended; a hang met
    twice stays one."""
    ids = ["matrix.ecdsa_secp256r1_sha256.ed25519.fixed"]
    cases = pick(handshake_cases(corpus, "tcp", "dial", 1.0), ids)  # type: ignore[arg-type]
    for option, outcome, starts in (("--mute-first", "false_accept", 2), ("--mute", "hang", 2)):
        log = tmp_path / option / "starts"
        log.parent.mkdir()
        adapter = Target("flaky", "custom", "0", "none",
                         (sys.executable, str(ROOT / "tests/adapters/misbehave.py"), str(log),
                          option))
        entry = run_handshake(adapter, [str(ADAPTERS / PEER)], cases, "tcp", "dial",
                              timeout=1.0, startup=2.0, stderr_path=None)
        (case,) = entry.cases
        assert case.outcome == outcome and entry.counts[outcome] == 1, case
        assert case.first_attempt is not None and case.first_attempt.startswith("hang: ")
        assert log.read_text().count("start") == starts


@pytest.mark.parametrize("direction", ["dial", "listen"])
@pytest.mark.parametrize(("name", "transport"), [
    ("rust-libp2p", "tcp"), ("rust-libp2p", "quic"), ("js-libp2p", "tcp"), ("js-libp2p", "quic"),
    ("py-libp2p-tls", "tcp"), ("py-libp2p-quic", "quic")])
def test_real_handshakes_with_every_other_adapter(corpus: Path, name: str, transport: str,
                                                  direction: str, tmp_path: Path) -> None:
    """The same three proofs through each library's own upgrade (built by make adapters;
    .ci/run builds them before make test)."""
    adapter = BY_NAME[name]
    assert transport in adapter.transports
    if not adapter.built(ADAPTERS) or not (ADAPTERS / PEER).is_file():
        pytest.skip(f"{name} or the fixture peer is not built: run 'make adapters'")
    target = Target(adapter.name, adapter.package, adapter.version, adapter.verifier,
                    tuple(adapter.argv(ADAPTERS)), adapter.handshake, adapter.transports)
    side = "server" if direction == "dial" else "client"
    ids = [f"ps.p256.{side}.valid", f"ps.p256.{side}.extension",
           f"ps.p256.{side}.transcript", "matrix.ecdsa_secp521r1_sha512.ed25519.fixed"]
    cases = pick(handshake_cases(corpus, transport, direction,  # type: ignore[arg-type]
                                 10.0), ids)
    entry = run_handshake(target, [str(ADAPTERS / PEER)], cases, transport,  # type: ignore[arg-type]
                          direction, timeout=20.0, startup=60.0,  # type: ignore[arg-type]
                          stderr_path=tmp_path / "stderr.log")
    got = {c.id: c for c in entry.cases}
    valid = got[ids[0]]
    assert valid.verdict == "accept" and valid.peer is not None
    assert valid.peer.outcome == "complete" and valid.peer_id is not None
    # What the library presented as its own identity passes the reference verifier.
    own = valid.peer.presented
    assert own is not None and (own.accepted, own.error) == (True, None), own
    assert own.peer_id is not None and own.peer_id != valid.peer_id
    # The transcript proof corrupted: every TLS stack refuses it.
    assert got[ids[2]].verdict == "reject" and got[ids[2]].error
    # The extension proof corrupted: refused by all but py-libp2p 0.8.1's QUIC transport, which
    # completes the handshake (a finding, pinned: its verifier skips that signature).
    extension = got[ids[1]]
    if name == "py-libp2p-quic":
        assert (extension.verdict, extension.outcome) == ("accept", "false_accept")
    else:
        assert extension.verdict == "reject" and extension.error
    # P-521: accepted, or (rust-libp2p offers no P-521) a skip that names what was offered.
    p521 = got[ids[3]]
    assert p521.verdict == "accept" or (p521.outcome == "skip"
                                        and "offered [0x" in (p521.error or ""))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_a_bad_mode_or_a_missing_peer_is_one_line_and_its_exit_code(corpus: Path,
                                                                     tmp_path: Path) -> None:
    bad = cli("harness", "run", "--impl", "go-libp2p", "--mode", "both", "--corpus",
              str(corpus), "--out", str(tmp_path / "a"))
    assert bad.returncode == 2 and "--mode 'both'" in bad.stderr
    assert "Traceback" not in bad.stderr
    # An adapters folder without the fixture peer: handshake mode cannot run (exit 3).
    folder = tmp_path / "adapters"
    folder.mkdir()
    (folder / "build").write_text("#!/bin/sh\n")
    missing = cli("harness", "run", "--adapters", str(folder), "--mode", "handshake",
                  "--corpus", str(corpus), "--out", str(tmp_path / "b"), "--",
                  sys.executable, str(ROOT / "adapters/reference/adapter.py"))
    assert missing.returncode == 3 and "fixture peer is not built" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1 and not (tmp_path / "b").exists()


@pytest.mark.parametrize("direction", ["dial", "listen"])
def test_real_quic_handshakes_with_go_libp2p(built: Target, corpus: Path, direction: str,
                                             tmp_path: Path) -> None:
    """QUIC v1: go-libp2p's QUIC transport against the peer's quic-go. Its listener drops a
    failed handshake silently: the harness's cancel line ends the wait, and the answer
    carries the reason the library gave the peer (a CRYPTO_ERROR)."""
    side = "server" if direction == "dial" else "client"
    ids = [f"ps.p256.{side}.valid", f"ps.p256.{side}.transcript", f"ps.p256.{side}.extension"]
    cases = pick(handshake_cases(corpus, "quic", direction, 10.0), ids)  # type: ignore[arg-type]
    entry = run_handshake(built, [str(ADAPTERS / PEER)], cases, "quic",
                          direction, timeout=20.0, startup=60.0,  # type: ignore[arg-type]
                          stderr_path=tmp_path / "stderr.log")
    got = {c.id: c for c in entry.cases}
    assert entry.transport == "quic"
    valid = got[ids[0]]
    assert (valid.verdict, valid.outcome) == ("accept", "agree") and valid.peer is not None
    assert valid.peer.outcome == "complete" and valid.peer.error is None
    transcript = got[ids[1]]
    assert (transcript.verdict, transcript.outcome) == ("reject", "agree")
    # 0x133: the decrypt_error alert (RFC 8446 for a bad CertificateVerify) in a QUIC
    # CONNECTION_CLOSE; dialling, the library's own words too.
    assert "CRYPTO_ERROR 0x133" in (transcript.error or "")
    if direction == "dial":
        assert "invalid signature by the server certificate" in (transcript.error or "")
    else:
        assert "accepted no connection" in (transcript.error or "")
    assert got[ids[2]].verdict == "reject"


def _marked(tag: str) -> list[int]:
    """The processes whose environment carries ``tag`` (a run and all it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in environ.split(b"\0") and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code", "word"), [("SIGINT", 130, "interrupted"),
                                                    ("SIGTERM", 143, "terminated")])
def test_a_stopped_handshake_run_leaves_no_process_and_whole_reports(
        built: Target, corpus: Path, tmp_path: Path, name: str, code: int, word: str) -> None:
    """Stopped in the middle of its handshakes (adapter listening or dialling, fixture peer
    running), a run stops both, says one line, and the reports it kept are whole."""
    import json
    import os
    import signal
    import time
    import uuid

    tag = f"FIXTUREGEN_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, tag.split("=")[0]: tag.split("=")[1]}
    out = tmp_path / "reports"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fixturegen", "harness", "run", "--impl", "go-libp2p",
         "--mode", "handshake", "--no-interop", "--corpus", str(corpus), "--out", str(out)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_signals)
    deadline = time.monotonic() + 120

    def finished() -> int:  # entries in results.json (written whole after each one)
        try:
            return len(json.loads((out / "results.json").read_text())["implementations"])
        except (OSError, ValueError):
            return 0

    # Stop the run (SIGSTOP) while its adapter and fixture peer are up, after its first entry
    # (so that there are finished entries to keep): they live only while an entry's handshakes
    # run, so the signal lands mid-handshakes on any machine; it is pending until SIGCONT, and
    # Python runs its handler at once then. Stopped between two entries, it goes on and waits
    # for the next.
    while True:
        while ((len(_marked(tag)) < 3 or finished() < 1) and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.05)  # the run, its adapter and its fixture peer
        assert len(_marked(tag)) >= 3 and finished() >= 1, "no second entry ever started"
        os.kill(proc.pid, signal.SIGSTOP)
        while _state(proc.pid) not in ("T", "t", "Z", "gone"):
            os.sched_yield()
        if len(_marked(tag)) >= 3:
            break
        os.kill(proc.pid, signal.SIGCONT)
    assert proc.poll() is None, "the handshakes were over"
    proc.send_signal(getattr(signal, name))
    os.kill(proc.pid, signal.SIGCONT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert stderr.splitlines()[-1] == f"fixturegen: {word}" and "Traceback" not in stderr
    assert _marked(tag) == [], "an adapter or fixture peer outlived the run"
    # Written only between entries, each file whole: what is there parses and checks.
    results = json.loads((out / "results.json").read_text())
    for impl in results["implementations"]:
        plan = handshake_cases(corpus, impl["transport"], impl["direction"], 1.0)
        assert [c["id"] for c in impl["cases"]] == [c.id for c in plan]
    # The other reports were written on the way out, of the same finished entries.
    assert results["implementations"]
    suites = ET.parse(out / "junit.xml").getroot().findall("testsuite")
    assert [(s.get("name"), int(s.get("tests") or -1)) for s in suites] == [
        (f"{i['name']}@{i['transport']}-{i['direction']}", len(i["cases"]))
        for i in results["implementations"]]
