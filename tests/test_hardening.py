"""The reference verifier on hostile input: its memo never changes a verdict, its reader raises
only its own error, and every input limit is a one-line ``malformed_certificate`` or error."""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from hypothesis import given, settings
from hypothesis import strategies as st

from fixturegen.certs import der as writer
from fixturegen.verify import Verifier
from fixturegen.verify.der import (
    MAX_CERTIFICATE_BYTES,
    MAX_CHAIN_CERTIFICATES,
    DERError,
    elements,
    integer,
    oid_text,
    time_seconds,
    tlv,
)
from fixturegen.verify.inputs import InputError, pem_blocks, read_bounded
from fixturegen.verify.x509 import Memo, parse_certificate
from tests.signals import default_signals

ED = "matrix.ed25519.ed25519.fixed"


def _verdict(v: Any) -> tuple[object, ...]:
    return (v.accepted, v.error, v.peer_id, tuple(v.flags), v.signature_verifications,
            tuple(v.checks), v.detail)


def _tbs_fields(cert: bytes) -> list[bytes]:
    """The encoded fields of the tbsCertificate of ``cert`` (a well-formed certificate)."""
    tbs = writer.children(cert)[0]
    return writer.children(tbs)


def _resign(corpus: Path, fid: str, change: Callable[[list[bytes]], list[bytes]],
            outer: bytes | None = None) -> bytes:
    """Fixture ``fid`` (Ed25519 certificate key) with its tbs fields changed, correctly signed."""
    cert = (corpus / f"certs/{fid}.der").read_bytes()
    key = load_pem_private_key((corpus / f"keys/{fid}.pem").read_bytes(), None)
    assert isinstance(key, ed25519.Ed25519PrivateKey)
    top = writer.children(cert)
    tbs = writer.sequence(*change(_tbs_fields(cert)))
    return writer.sequence(tbs, outer if outer is not None else top[1],
                           writer.bit_string(key.sign(tbs)))


def _with(index: int, value: Callable[[list[bytes]], bytes]) -> Callable[[list[bytes]],
                                                                          list[bytes]]:
    def change(fields: list[bytes]) -> list[bytes]:
        out = list(fields)
        out[index] = value(fields)
        return out
    return change


# tbsCertificate fields: 0 version, 1 serial, 2 signature, 3 issuer, 4 validity, 5 subject, 6 spki
@pytest.mark.parametrize("target, source", [(3, 2), (5, 4), (3, 4), (5, 2)],
                         ids=["issuer=algorithm", "subject=validity", "issuer=validity",
                              "subject=algorithm"])
def test_bytes_good_as_one_type_never_pass_as_another(corpus: Path, target: int,
                                                      source: int) -> None:
    """A correctly self-signed certificate whose Name is another field's encoding is malformed,
    however warm the verifier's memo is (cryptography and OpenSSL refuse to parse it too)."""
    crafted = _resign(corpus, ED, _with(target, lambda f: f[source]))
    good = (corpus / f"certs/{ED}.der").read_bytes()
    warm = Verifier()
    assert warm.verify([good]).accepted
    for v in (warm, Verifier()):
        verdict = v.verify([crafted])
        assert verdict.error == "malformed_certificate", verdict.detail
        assert "Name" in verdict.detail


def test_one_inputs_verdict_does_not_depend_on_the_inputs_before_it(corpus: Path) -> None:
    """The first certificate's unusual issuer Name, reused as the second's outer
    signatureAlgorithm: the second is malformed whether or not the first came before."""
    unusual = writer.sequence(writer.set_of(writer.sequence(writer.oid("2.5.4.3"),
                                                            writer.utf8_string("x"))))
    first = _resign(corpus, ED, _with(3, lambda f: unusual))
    second = _resign(corpus, ED, lambda f: f, outer=unusual)
    fresh = Verifier().verify([second])
    warm = Verifier()
    warm.verify([first])
    assert _verdict(warm.verify([second])) == _verdict(fresh)
    assert fresh.error == "malformed_certificate"


def test_the_cli_gives_the_same_verdicts_in_any_order(corpus: Path, tmp_path: Path) -> None:
    unusual = writer.sequence(writer.set_of(writer.sequence(writer.oid("2.5.4.3"),
                                                            writer.utf8_string("x"))))
    a, b = tmp_path / "a.der", tmp_path / "b.der"
    a.write_bytes(_resign(corpus, ED, _with(3, lambda f: unusual)))
    b.write_bytes(_resign(corpus, ED, lambda f: f, outer=unusual))
    runs = [subprocess.run([sys.executable, "-m", "fixturegen", "verify", str(x), str(y)],
                           capture_output=True, text=True) for x, y in ((a, b), (b, a))]
    for run in runs:
        assert run.returncode == 1 and run.stderr == "", run.stderr
        assert run.stdout.count("REJECT malformed_certificate") == 1
        assert f"{a}: ACCEPT" in run.stdout


def _mutants(corpus: Path, n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    bases = sorted((corpus / "certs").glob("*.der"))
    out = []
    for _ in range(n):
        b = bytearray(rng.choice(bases).read_bytes())
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(b))
            op = rng.randrange(5)
            if op == 0:
                b[i] = rng.randrange(256)
            elif op == 1:
                del b[i : i + rng.randint(1, 8)]
            elif op == 2:
                j = rng.randrange(len(b))
                b[i:i] = b[j : j + rng.randint(1, 48)]
            elif op == 3:
                b[i] ^= 1 << rng.randrange(8)
            else:  # an element's bytes copied over another of the same length
                j = rng.randrange(len(b))
                k = rng.randint(2, 24)
                b[i : i + k] = b[j : j + k]
            if not b:
                b = bytearray(b"\x30\x00")
        out.append(bytes(b))
    return out


def test_a_warm_verifier_gives_a_fresh_verifiers_verdict_in_any_order(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    """Differential check of the memo and key caches: the corpus, three random orderings of it
    and 3,000 mutants, through one warm verifier and through a fresh verifier per input."""
    chains = [[(corpus / p).read_bytes() for p in f["chain"]] for f in fixtures.values()]
    inputs: list[list[bytes]] = list(chains)
    rng = random.Random(7)
    for _ in range(3):
        order = list(chains)
        rng.shuffle(order)
        inputs += order
    inputs += [[m] for m in _mutants(corpus, 3000, 11)]
    rng.shuffle(inputs)
    warm = Verifier()
    accepted = 0
    for chain in inputs:
        w, f = warm.verify(chain), Verifier().verify(chain)
        assert _verdict(w) == _verdict(f)
        accepted += w.accepted
    assert accepted > len(chains)  # the valid fixtures were among the inputs, and accepted


def test_the_memo_is_keyed_by_kind_and_bounded() -> None:
    memo = Memo(4)
    memo.put("Name", b"\x30\x00")
    assert memo.get("Name", b"\x30\x00") is None
    assert memo.get("AlgorithmIdentifier", b"\x30\x00") is not None  # the missing marker
    for i in range(10):
        memo.put("Name", bytes([i]))
    assert len(memo) <= 4
    off = Memo(0)
    off.put("Name", b"\x30\x00")
    assert len(off) == 0


# -- the reader raises only DERError --------------------------------------------------------------

def _only_der_errors(data: bytes) -> None:
    for call in (lambda: parse_certificate(data), lambda: parse_certificate(data, Memo()),
                 lambda: tlv(data, 0, len(data)), lambda: elements(data, 0, len(data)),
                 lambda: oid_text(data, 0, len(data)), lambda: integer(data, 0, len(data)),
                 lambda: time_seconds(data, 0x17, 0, len(data)),
                 lambda: time_seconds(data, 0x18, 0, len(data))):
        with contextlib.suppress(DERError):
            call()


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=600))
def test_the_reader_raises_only_its_own_error_on_random_bytes(data: bytes) -> None:
    _only_der_errors(data)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 255), st.integers(0, 40), st.binary(max_size=40))
def test_the_reader_raises_only_its_own_error_on_deep_nesting(tag: int, depth: int,
                                                              core: bytes) -> None:
    data = core
    for _ in range(depth):
        data = writer.tlv(tag if tag & 0x1F != 0x1F else 0x30, data)
    _only_der_errors(data)
    assert not Verifier().verify([data]).accepted


def test_the_reader_raises_only_its_own_error_on_mutants(corpus: Path) -> None:
    for m in _mutants(corpus, 2000, 5):
        _only_der_errors(m)


# -- limits -------------------------------------------------------------------------------------

def _length(n: int) -> bytes:
    return writer.encode_length(n)


@pytest.mark.parametrize("what, data, reason", [
    ("a 200 KB OID", b"\x30" + _length(200_010) + b"\x06" + _length(200_001) + b"\x2a"
     + b"\x81" * 200_000, "limit 65536"),
    ("a 50 MB SEQUENCE of NULLs", b"\x30" + _length(50_000_000) + b"\x05\x00" * 25_000_000,
     "limit 65536"),
    ("a long OID arc", b"\x30\x20\x06\x1e\x2a" + b"\x81" * 28 + b"\x01", "arc over 20"),
])
def test_oversized_input_is_malformed_with_its_limit(what: str, data: bytes,
                                                     reason: str) -> None:
    verdict = Verifier().verify([data])
    assert verdict.error == "malformed_certificate"
    if "arc" in what:  # inside a structure the reader walks: an OID of the algorithm
        with pytest.raises(DERError, match=reason):
            oid_text(data, 4, len(data))
    else:
        assert reason in verdict.detail


def test_a_huge_oid_in_an_algorithm_identifier_is_rejected(corpus: Path) -> None:
    huge = writer.sequence(writer.tlv(0x06, b"\x2a" + b"\x81" * 5000 + b"\x01"))
    crafted = _resign(corpus, ED, _with(2, lambda f: huge), outer=huge)
    verdict = Verifier().verify([crafted])
    assert verdict.error == "malformed_certificate"
    assert "OBJECT IDENTIFIER" in verdict.detail


def test_a_huge_integer_is_rejected_by_its_length() -> None:
    content = b"\x01" + b"\x00" * 2000
    with pytest.raises(DERError, match="INTEGER of 2001 octets"):
        integer(content, 0, len(content))
    assert integer(b"\x01" + b"\x00" * 20, 0, 21) == 1 << 160


def test_chain_length_is_bounded_before_parsing(corpus: Path) -> None:
    good = (corpus / f"certs/{ED}.der").read_bytes()
    assert Verifier().verify([good, good]).error == "chain_length"
    long = Verifier().verify([good] * (MAX_CHAIN_CERTIFICATES + 1))
    assert long.error == "malformed_certificate" and "limit" in long.detail
    big = Verifier().verify([b"\x30" * (MAX_CERTIFICATE_BYTES + 1)])
    assert big.error == "malformed_certificate" and "limit 65536" in big.detail


def test_pem_scanning_is_linear_and_explains_a_missing_end() -> None:
    data = b"-----BEGIN CERTIFICATE-----\n" * 8000
    with pytest.raises(InputError, match="no END line"):
        pem_blocks(data)
    blocks = pem_blocks(b"x\n-----BEGIN A-----\nQQ==\n-----END A-----\n"
                        b"-----BEGIN CERTIFICATE-----\nQg==\n-----END CERTIFICATE-----\n")
    assert [label for label, _ in blocks] == [b"A", b"CERTIFICATE"]
    with pytest.raises(InputError, match="malformed"):
        pem_blocks(b"-----BEGIN lower case-----\n")


def test_files_are_read_bounded(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, reason in ((fifo, "not a regular file"), (Path("/dev/zero"), "not a regular"),
                         (tmp_path, "directory"), (tmp_path / "none", "cannot read")):
        with pytest.raises(InputError, match=reason):
            read_bounded(path)
    big = tmp_path / "big"
    big.write_bytes(b"\x00" * 101)
    with pytest.raises(InputError, match="limit 100"):
        read_bounded(big, limit=100)
    assert read_bounded(big, limit=101) == b"\x00" * 101


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})},
                          stdin=subprocess.DEVNULL)


def test_the_cli_answers_dev_zero_and_a_fifo_with_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    run = _cli("verify", "/dev/zero", str(fifo))
    assert run.returncode == 1 and run.stderr == ""
    lines = run.stdout.splitlines()
    assert lines == ["/dev/zero: ERROR /dev/zero is not a regular file (a FIFO, socket or device)",
                     f"{fifo}: ERROR {fifo} is not a regular file (a FIFO, socket or device)"]


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"])
def test_validation_times_outside_the_calendar_are_usage_errors(corpus: Path, at: str) -> None:
    run = _cli("verify", "--at", at, str(corpus / f"certs/{ED}.der"))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == f"fixturegen: error: --at {at!r} is outside the years 1..9999 " \
                                 "once in UTC"


def test_an_undecodable_file_name_prints_escaped(corpus: Path, tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/bad\xff.der"
    with open(name, "wb") as fh:
        fh.write((corpus / f"certs/{ED}.der").read_bytes())
    text = _cli("verify", os.fsdecode(name), env={"PYTHONIOENCODING": "ascii:strict"})
    assert text.returncode == 0 and text.stderr == "", text.stderr
    assert "bad\\udcff.der: ACCEPT" in text.stdout
    run = _cli("verify", "--json", os.fsdecode(name), env={"PYTHONIOENCODING": "ascii:strict"})
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert json.loads(run.stdout)["path"].endswith("bad\\udcff.der")


# -- generate, interrupted ----------------------------------------------------------------------

def _children(pid: int) -> list[int]:
    out = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat_file.parent.name))
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _start_generate(out: Path, session: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "fixturegen", "generate", "--out", str(out),
                             "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=session,
                            preexec_fn=default_signals)


def _wait_for_workers(proc: subprocess.Popen[str]) -> list[int]:
    for _ in range(600):  # up to a minute for the interpreter and the pool to start
        workers = _children(proc.pid)
        if len(workers) >= 2 or proc.poll() is not None:
            return workers
        time.sleep(0.1)
    return []


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def freeze_mid_build(proc: subprocess.Popen[str], workers: list[int]) -> None:
    """Stop the run and its workers (SIGSTOP) and make sure it is still building: a stopped
    parent whose pool's workers still exist is inside ``render_all`` (the pool is made there and
    joined before it returns), so nothing was installed yet, whatever the machine's load. A
    signal sent now is pending until :func:`thaw`; Python runs its handler at once then."""
    import signal

    os.kill(proc.pid, signal.SIGSTOP)
    for w in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(w, signal.SIGSTOP)
    while _state(proc.pid) not in ("T", "t", "gone", "Z"):
        os.sched_yield()  # the stop is delivered asynchronously: wait for the state, not a time
    assert proc.poll() is None, "the run ended before it was stopped"
    assert [w for w in workers if _state(w) in ("T", "t", "R", "S", "D")], \
        "the pool was gone: the run was past its build"


def thaw(proc: subprocess.Popen[str], workers: list[int]) -> None:
    import signal

    for pid in (*workers, proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_with_a_killed_generate(tmp_path: Path) -> None:
    import signal
    proc = _start_generate(tmp_path / "out")
    workers = _wait_for_workers(proc)
    assert len(workers) >= 2, "the pool never started"
    freeze_mid_build(proc, workers)
    proc.send_signal(signal.SIGKILL)
    thaw(proc, workers)
    proc.communicate(timeout=60)
    for _ in range(300):
        if not any(_running(w) for w in workers):
            break
        time.sleep(0.1)
    assert not [w for w in workers if _running(w)], "a worker outlived its parent"
    stale = list(tmp_path.glob(".out.tmp-*"))
    assert stale  # the killed run could not clean up; the next run does
    run = _cli("generate", "--out", str(tmp_path / "out"), "--only", "matrix.ed25519.*")
    assert run.returncode == 0, run.stderr
    assert not list(tmp_path.glob(".out.*")) and (tmp_path / "out/manifest.json").exists()
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize(("name", "code", "word", "group"), [
    ("SIGINT", 130, "interrupted", False),
    ("SIGTERM", 143, "terminated", False),
    ("SIGTERM", 143, "terminated", True),  # the whole process group, workers included
    ("SIGHUP", 129, "terminated", False)])
def test_a_stopping_signal_exits_with_one_line_and_keeps_the_corpus(
        tmp_path: Path, name: str, code: int, word: str, group: bool) -> None:
    import signal

    signum = getattr(signal, name)
    out = tmp_path / "out"
    first = _cli("generate", "--out", str(out), "--only", "matrix.ed25519.*")
    assert first.returncode == 0, first.stderr
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    proc = _start_generate(out, session=group)
    workers = _wait_for_workers(proc)
    assert len(workers) >= 2
    freeze_mid_build(proc, workers)  # the signal lands mid-build on any machine
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    thaw(proc, workers)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert stderr == f"fixturegen: {word}\n"
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert not list(tmp_path.glob(".out.*"))
    for _ in range(300):  # the workers end with the chunk they hold
        if not any(_running(w) for w in workers):
            break
        time.sleep(0.1)
    assert not [w for w in workers if _running(w)], "a worker outlived the run"


@pytest.mark.slow
def test_a_signal_ignored_at_start_stays_ignored(tmp_path: Path) -> None:
    """`nohup fixturegen ...`: SIGHUP was ignored when the command started, so the run goes on."""
    import signal

    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "fixturegen", "generate", "--out", str(out),
                             "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    assert len(_wait_for_workers(proc)) >= 2
    proc.send_signal(signal.SIGHUP)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert (out / "manifest.json").is_file()


def test_stale_folders_of_dead_runs_are_cleaned_and_an_old_corpus_restored(
        tmp_path: Path) -> None:
    from fixturegen.output.writer import clean_stale

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    out = tmp_path / "out"
    (tmp_path / f".out.tmp-{dead}-abc").mkdir()
    (tmp_path / f".out.tmp-{os.getpid()}-live").mkdir()  # a run still going: kept
    (tmp_path / f".out.old-{dead}").mkdir()
    (tmp_path / f".out.old-{dead}" / "manifest.json").write_text("{}")
    (tmp_path / "unrelated").mkdir()
    removed = clean_stale(out)
    assert [p.name for p in removed] == [f".out.tmp-{dead}-abc"]
    assert (out / "manifest.json").read_text() == "{}"  # killed between the renames: restored
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f".out.tmp-{os.getpid()}-live", "out", "unrelated"])


@pytest.mark.slow
def test_fuzz_the_reference_verifier_for_a_bounded_time(corpus: Path) -> None:
    """`make test-slow`: structure-aware mutants of the whole corpus for 90 seconds, each through
    a warm and a fresh verifier. Fails on any exception, on any input that takes over a second
    of this thread's CPU time (a hang; CPU time, not the wall clock, so a busy machine does not
    trip it), and on any verdict that differs between the cached and the fresh path."""
    deadline = time.monotonic() + 90
    warm = Verifier()
    seed = 1000
    tried = 0
    while time.monotonic() < deadline:
        for m in _mutants(corpus, 500, seed):
            start = time.thread_time()
            w = warm.verify([m])
            f = Verifier().verify([m])
            _only_der_errors(m)
            assert time.thread_time() - start < 1.0, f"slow input (seed {seed}): {m.hex()}"
            assert _verdict(w) == _verdict(f), f"cache changed a verdict (seed {seed})"
            tried += 1
        seed += 1
    assert tried >= 500
