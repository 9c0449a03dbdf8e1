"""``make bench``: generation and verification speed, each against its floor.

It uses the toolkit's public API only (``generate``, ``render_all``, ``Verifier``,
``TranscriptChecker``, the harness driver) and reads what it needs from the manifest, as any
user could.

Generation floor: the private-key operations the manifest shows (a key generation per
throwaway certificate or host key, a self-signature per certificate file, a host signature per
fixture), done with `cryptography` directly. A few invalid cases derive a third key or sign
twice: the floor leaves those out, so it stays a lower bound. Verification floor: the bare
signature verifications of the same certificates with `cryptography`, keys already loaded. Both
are measured in the same run as what they bound.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.serialization import load_der_public_key

from fixturegen.cases import CATALOGUE
from fixturegen.certs.schemes import SCHEMES, hash_object
from fixturegen.fuzz.campaign import (
    Maker,
    implementation_verdicts,
    make_mutants,
    parents,
    reference,
)
from fixturegen.harness import driver
from fixturegen.harness.requests import load_cases
from fixturegen.keys import KeyKind
from fixturegen.output.writer import generate, render_all
from fixturegen.verify import Verifier
from fixturegen.verify.identity import decode_public_key
from fixturegen.verify.transcript import TranscriptChecker
from fixturegen.versions.profile import run_id

OPENSSL_PIPELINE_MS = 230.0  # SPEC section 5, measured on this machine kind
SEED = b"libp2p-fixturegen"


def _best(fn: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


Operation = tuple[KeyKind, str, int]  # (key kind, scheme or host signature, message size)


def manifest_operations(manifest: dict[str, Any], root: Path
                        ) -> tuple[Counter[KeyKind], Counter[Operation]]:
    """The throwaway keys and the signatures the manifest's fixtures show."""
    keys: Counter[KeyKind] = Counter()
    sigs: Counter[Operation] = Counter()
    for f in manifest["fixtures"]:
        cert, host = f["certificate"], f["host_key"]
        for info in (cert["key"], host):
            if info["source"] == "throwaway":
                keys[KeyKind(info["type"] if info is cert["key"] else info["kind"])] += 1
        kind = KeyKind(cert["key"]["type"])
        for path in f["chain"]:  # the file's size stands for its TBS's (signing cost hardly
            # depends on it, and malformed fixtures do not parse)
            sigs[(kind, cert["signature_scheme"], (root / path).stat().st_size)] += 1
        sigs[(KeyKind(host["kind"]), "host", len(b"libp2p-tls-handshake:") + 100)] += 1
    return keys, sigs


def floor_generation(keys: Counter[KeyKind], sigs: Counter[Operation]) -> float:
    signers = {kind: kind.generate() for kind in {k for k, *_ in sigs}}

    def run() -> None:
        for kind, n in keys.items():
            for _ in range(n):
                kind.generate()
        for (kind, scheme, size), n in sigs.items():
            key, data = signers[kind], b"\x5a" * size
            h = hash_object(SCHEMES[scheme].algorithm.hash_name or "sha256"
                            if scheme in SCHEMES else "sha256")
            for _ in range(n):
                if isinstance(key, rsa.RSAPrivateKey):
                    pad = padding.PSS(padding.MGF1(h), padding.PSS.DIGEST_LENGTH) if (
                        "pss" in scheme) else padding.PKCS1v15()
                    key.sign(data, pad, h)
                elif isinstance(key, ec.EllipticCurvePrivateKey):
                    key.sign(data, ec.ECDSA(h))
                elif isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey):
                    key.sign(data)

    return _best(run)


def openssl_sample(n: int = 5) -> float | None:
    """ms per `openssl req -x509 -newkey ec` subprocess (one step of the SPEC's pipeline)."""
    if not shutil.which("openssl"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        for i in range(n):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                            "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=x",
                            "-keyout", f"{tmp}/k{i}", "-out", f"{tmp}/c{i}"],
                           check=True, capture_output=True)
        return (time.perf_counter() - t) / n * 1000


def bench_verification(root: Path, manifest: dict[str, Any]) -> dict[str, float]:
    fixtures = manifest["fixtures"]
    inputs = [([(root / p).read_bytes() for p in f["chain"]], f["expect_peer_id"])
              for f in fixtures]
    accepted = [(c, e) for (c, e), f in zip(inputs, fixtures, strict=True)
                if f["expected"]["error"] is None]

    def verify(items: list[tuple[list[bytes], str | None]]) -> None:
        v = Verifier()
        for certs, expect in items:
            v.verify(certs, expect_peer_id=expect)

    floor_items = [_proofs(certs[0]) for certs, _ in accepted]

    def bare() -> None:
        for (k1, s1, d1, a1), (k2, s2, d2, a2) in floor_items:
            k1.verify(s1, d1, *a1)
            k2.verify(s2, d2, *a2)

    encoded = [_encoded(certs[0]) for certs, _ in accepted]

    def cold() -> None:
        """What any verifier meeting these certificates for the first time must do: load both
        keys from their encodings, then the two verify() calls."""
        for (spki, pb), ((_, s1, d1, a1), (_, s2, d2, a2)) in zip(encoded, floor_items,
                                                                  strict=True):
            load_der_public_key(spki).verify(s1, d1, *a1)  # type: ignore[union-attr]
            _host_public_key(pb).verify(s2, d2, *a2)

    t_all = _best(lambda: verify(inputs), rounds=7)
    t_acc = _best(lambda: verify(accepted), rounds=7)
    t_floor = _best(bare, rounds=7)
    t_cold = _best(cold, rounds=7)
    return {"all": t_all, "all_n": len(inputs), "accepted": t_acc, "accepted_n": len(accepted),
            "floor": t_floor, "cold_floor": t_cold}


def bench_transcripts(root: Path, data: dict[str, Any]) -> dict[str, float]:
    vectors = [v for v in data["vectors"] if v["expected"]["error"] is None]
    items = [((root / v["certificate_path"]).read_bytes(), v["context"], v["signature_scheme"],
              v["code_point"], bytes.fromhex(v["transcript_hash"]), bytes.fromhex(v["signature"]))
             for v in vectors]
    checker = TranscriptChecker()
    for it in items:  # the certificates, verified once (the first two proofs)
        checker.verify(*it)

    def run() -> None:
        for it in items:
            checker.verify(*it)

    bare_items = []
    for der, ctx, scheme, _, th, sig in items:
        key = x509.load_der_x509_certificate(der).public_key()
        content = b"\x20" * 64 + f"TLS 1.3, {ctx} CertificateVerify".encode() + b"\x00" + th
        h = scheme.rsplit("_", 1)[-1]
        hs: dict[str, type[hashes.SHA256 | hashes.SHA384 | hashes.SHA512]] = {
            "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}
        if isinstance(key, rsa.RSAPublicKey):
            args: tuple[Any, ...] = (padding.PSS(padding.MGF1(hs[h]()), hs[h]().digest_size),
                                     hs[h]())
        elif isinstance(key, ec.EllipticCurvePublicKey):
            args = (ec.ECDSA(hs[h]()),)
        else:
            args = ()
        bare_items.append((key, sig, content, args))

    def bare() -> None:
        for key, sig, content, args in bare_items:
            key.verify(sig, content, *args)  # type: ignore[union-attr]

    return {"n": len(items), "verifier": _best(run, 7), "floor": _best(bare, 7)}


LIBP2P_OID = x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")
PREFIX = b"libp2p-tls-handshake:"


def _tlv(data: bytes, pos: int) -> tuple[int, int]:
    """(content start, content end) of the DER TLV at ``pos`` (the corpus's valid DER)."""
    length = data[pos + 1]
    start = pos + 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(data[start:start + n], "big")
        start += n
    return start, start + length


def _host_public_key(pb: bytes) -> Any:
    key_type, data = decode_public_key(pb)
    if key_type == 1:
        return ed25519.Ed25519PublicKey.from_public_bytes(data)
    if key_type == 2:
        return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), data)
    return serialization.load_der_public_key(data)


def _spki(cert: x509.Certificate) -> bytes:
    """The SubjectPublicKeyInfo as the certificate has it (an id-RSASSA-PSS key re-encoded by
    `cryptography` would say rsaEncryption, and the host signature is over the original)."""
    tbs = cert.tbs_certificate_bytes
    pos, _ = _tlv(tbs, 0)
    if tbs[pos] == 0xA0:  # [0] version
        pos = _tlv(tbs, pos)[1]
    for _field in range(5):  # serial, signature, issuer, validity, subject
        pos = _tlv(tbs, pos)[1]
    return tbs[pos:_tlv(tbs, pos)[1]]


def _encoded(der: bytes) -> tuple[bytes, bytes]:
    """(the certificate's SPKI, the host key's protobuf), as a verifier meets them."""
    cert = x509.load_der_x509_certificate(der)
    spki = _spki(cert)
    ext = cert.extensions.get_extension_for_oid(LIBP2P_OID).value
    assert isinstance(ext, x509.UnrecognizedExtension)
    start, _ = _tlv(ext.value, 0)
    pb_start, pb_end = _tlv(ext.value, start)
    return spki, ext.value[pb_start:pb_end]


def _proofs(der: bytes) -> tuple[tuple[Any, bytes, bytes, tuple[Any, ...]], ...]:
    """The two proofs of a certificate, keys loaded, ready for bare verify() calls (parsed
    with `cryptography` and the public protobuf decoder, not with the verifier's internals)."""
    cert = x509.load_der_x509_certificate(der)
    key = cert.public_key()
    h = cert.signature_hash_algorithm
    if isinstance(key, rsa.RSAPublicKey):
        assert h is not None
        self_args: tuple[Any, ...] = (cert.signature_algorithm_parameters, h)
    elif isinstance(key, ec.EllipticCurvePublicKey):
        self_args = (cert.signature_algorithm_parameters,)
    else:
        self_args = ()
    ext = cert.extensions.get_extension_for_oid(LIBP2P_OID).value
    assert isinstance(ext, x509.UnrecognizedExtension)
    value = ext.value
    start, _ = _tlv(value, 0)
    pb_start, pb_end = _tlv(value, start)
    sig_start, sig_end = _tlv(value, pb_end)
    pb, sig = value[pb_start:pb_end], value[sig_start:sig_end]
    host = _host_public_key(pb)
    if isinstance(host, rsa.RSAPublicKey):
        args: tuple[Any, ...] = (padding.PKCS1v15(), hashes.SHA256())
    elif isinstance(host, ec.EllipticCurvePublicKey):
        args = (ec.ECDSA(hashes.SHA256()),)
    else:
        args = ()
    spki = _spki(cert)
    return ((key, cert.signature, cert.tbs_certificate_bytes, self_args),
            (host, sig, PREFIX + spki, args))


def main() -> None:
    print("fixturegen bench (2-core machine; best of several rounds)\n")
    n = len(CATALOGUE)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        generate(out)
        manifest = json.loads((out / "manifest.json").read_text())
        keys, sigs = manifest_operations(manifest, out)
        r = bench_verification(out, manifest)
        t = bench_transcripts(out, json.loads((out / "transcripts.json").read_text()))
        out_cases = load_cases(out)
        out_corpus = Path(tempfile.mkdtemp(prefix="fixturegen-bench-"))
        shutil.copytree(out, out_corpus, dirs_exist_ok=True)
    serial = _best(lambda: render_all(list(CATALOGUE), SEED, workers=1), rounds=2)
    parallel = _best(lambda: render_all(list(CATALOGUE), SEED), rounds=2)
    floor = floor_generation(keys, sigs)
    print(f"generation: {n} fixtures, {sum(keys.values())} throwaway keys "
          f"({ {str(k): n for k, n in sorted(keys.items())} }), {sum(sigs.values())} signatures")
    print(f"  serial      {serial / n * 1000:7.2f} ms/fixture   "
          f"ratio to floor {serial / floor:5.2f}")
    print(f"  parallel    {parallel / n * 1000:7.2f} ms/fixture   (all cores: {os.cpu_count()})")
    print(f"  floor       {floor / n * 1000:7.2f} ms/fixture   (the manifest's private-key "
          "operations, cryptography)")
    print(f"  vs the openssl pipeline ({OPENSSL_PIPELINE_MS:.0f} ms/certificate): "
          f"{OPENSSL_PIPELINE_MS / (parallel / n * 1000):.1f}x faster in parallel, "
          f"{OPENSSL_PIPELINE_MS / (serial / n * 1000):.1f}x serial (target: 20x)")
    sample = openssl_sample()
    if sample is not None:
        print(f"  (one `openssl req -x509 -newkey ec` subprocess here: {sample:.1f} ms)")

    print("\nverification (a fresh Verifier per round; each distinct key decoded once):")
    print(f"  whole corpus  {r['all_n'] / r['all']:8.0f} certificates/s ({r['all_n']} fixtures)")
    print(f"  accepted set  {r['accepted_n'] / r['accepted']:8.0f} certificates/s "
          f"({r['accepted_n']} fixtures, 2 signature checks each)")
    print(f"  floor         {r['accepted_n'] / r['floor']:8.0f} certificates/s "
          "(bare verify() calls, keys preloaded)")
    print(f"  cold floor    {r['accepted_n'] / r['cold_floor']:8.0f} certificates/s "
          "(both keys loaded from their encodings, then the same verify() calls)")
    print(f"  ratio to floor {r['accepted'] / r['floor']:.2f} (keys preloaded and already used)")
    print(f"  ratio to cold floor {r['accepted'] / r['cold_floor']:.2f} (target: at most 1.1; "
          "the verifier decodes each key, as any verifier must)")
    print("\ntranscript vectors (certificates already verified, as in a handshake's third proof):")
    print(f"  verifier      {t['n'] / t['verifier']:8.0f} vectors/s ({t['n']} valid vectors)")
    print(f"  floor         {t['n'] / t['floor']:8.0f} vectors/s (bare CertificateVerify checks)")
    print(f"  ratio to floor {t['verifier'] / t['floor']:.2f} (target: at most 1.3)")
    f = bench_fuzz()
    print("\nfuzzing (mutants of the valid certificates; target: over 1,000/s through the "
          "reference):")
    print(f"  made          {f['parallel_n'] / f['parallel']:8.0f} mutants/s on {f['jobs']} cores "
          f"({f['parallel_n']} mutants, the workers' start included, as `fixturegen fuzz` "
          "makes them; target: over 5,000)")
    print(f"  one process   {f['n'] / f['make']:8.0f} mutants/s ({f['n']} mutants)")
    print(f"  of which re-signing {100 * f['signing'] / f['make']:5.1f}% (each mutant signed "
          "with its parent's own key: RSA for most parents; without it "
          f"{f['n'] / (f['make'] - f['signing']):.0f}/s)")
    print(f"  reference     {f['n'] / f['reference']:8.0f} mutants/s (the verifier alone, "
          "time limit armed)")
    if f["adapters"]:
        for name, rate in f["adapters"].items():
            print(f"  {name:13} {rate:8.0f} mutants/s (through its adapter process, "
                  f"{ADAPTER_MUTANTS} mutants, start included)")
    else:
        print("  (no shipped adapter is built: `make adapters` for each one's rate)")
    d = bench_driver(out_cases)
    print("\nharness driver (an adapter that answers at once; the corpus and its vectors):")
    print(f"  wall          {d['wall'] * 1000:8.3f} ms/case ({d['n']} cases; adapter and pipes "
          "included)")
    print(f"  driver CPU    {d['cpu'] * 1000:8.3f} ms/case (the driver process alone; "
          "target: under 5)")
    bench_conformance(out_corpus)
    mutation_costs(Path(__file__).resolve().parents[1] / "out" / "mutation")


def mutation_costs(folder: Path) -> None:
    """Seconds per mutant of each implementation's last campaign (``make mutation`` writes
    out/mutation/NAME; a campaign is hours, so the bench reads its report, not runs one)."""
    print("\nmutation campaigns (median seconds per mutant, from out/mutation/NAME/mutation.json):")
    reports = sorted(folder.glob("*/mutation.json")) if folder.is_dir() else []
    if not reports:
        print("  (no campaign report: `make mutation` runs the campaigns)")
        return
    for report in reports:
        data = json.loads(report.read_text())
        per = data.get("seconds_per_mutant") or {}
        parts = ", ".join(f"{k} {v:.1f}" for k, v in per.items() if v is not None) or "-"
        counts = data.get("counts") or {}
        print(f"  {data.get('implementation', report.parent.name):15} {parts} "
              f"({counts.get('generated', '?')} mutants)")


def bench_fuzz(n: int = 4000) -> dict[str, Any]:
    from fixturegen.certs import schemes

    pool = parents(SEED)
    signing = [0.0]
    plain = schemes.SigningAlgorithm.sign

    def timed(self: schemes.SigningAlgorithm, *args: Any, **kwargs: Any) -> bytes:
        t = time.perf_counter()
        try:
            return plain(self, *args, **kwargs)
        finally:
            signing[0] += time.perf_counter() - t

    schemes.SigningAlgorithm.sign = timed  # type: ignore[method-assign]
    try:
        t = time.perf_counter()
        mutants = make_mutants(SEED, pool, 0, n)
        made = time.perf_counter() - t
    finally:
        schemes.SigningAlgorithm.sign = plain  # type: ignore[method-assign]

    def verify() -> None:
        v = Verifier()
        for m in mutants:
            reference(v, m.der)  # as a campaign calls it: time limit armed, never raises

    with Maker(SEED, pool, os.cpu_count() or 1) as maker:
        t = time.perf_counter()
        parallel = maker.make(n, 2 * n)  # other numbers than above: no memo shared
        parallel_seconds = time.perf_counter() - t
    return {"n": len(mutants), "make": made, "signing": signing[0], "jobs": maker.jobs,
            "parallel_n": len(parallel), "parallel": parallel_seconds,
            "reference": _best(verify, 3),
            "adapters": _adapter_rates(mutants[:ADAPTER_MUTANTS])}


ADAPTER_MUTANTS = 1000


def _adapter_rates(mutants: list[Any]) -> dict[str, float]:
    """Mutants per second through each built shipped adapter (API mode, one process)."""
    from fixturegen.harness.adapters import SHIPPED, AdaptersNotFound, adapters_dir

    try:
        base = adapters_dir()
    except AdaptersNotFound:
        return {}
    rates = {}
    for adapter in SHIPPED:
        if not adapter.built(base):
            continue
        target = adapter.target(base)
        _, seconds = implementation_verdicts(target, mutants, timeout=30.0, startup=120.0)
        rates[adapter.name] = len(mutants) / seconds
    return rates


_INSTANT = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    sys.stdout.write(json.dumps({'id': r['id'], 'verdict': 'reject', 'peer_id': None,"
    " 'error': 'x'}) + '\\n')\n"
    "    sys.stdout.flush()\n")


def bench_driver(cases: list[Any]) -> dict[str, float]:
    """The driver's own cost per case, against an adapter that does no work."""
    requests = [c.request for c in cases]
    best_wall = best_cpu = float("inf")
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        driver.run([sys.executable, "-c", _INSTANT], requests)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return {"n": len(requests), "wall": best_wall / len(requests),
            "cpu": best_cpu / len(requests)}




def bench_conformance(corpus: Path) -> None:
    """The harness stage of ``make conformance`` (every built adapter, both modes, interop
    included), once: per handshake entry, wall ms per case against the fixture peer's own CPU
    per handshake (the floor: what the peer's TLS stack needs, whatever the implementation
    does); QUIC against TCP per implementation and direction; the whole stage's wall time
    against the sum of its cases' floors. ``corpus`` (a copy made for this) is removed."""
    try:
        _conformance(corpus)
    finally:
        shutil.rmtree(corpus, ignore_errors=True)


def _conformance(corpus: Path) -> None:
    from fixturegen.harness.adapters import SHIPPED, AdaptersNotFound, adapters_dir

    try:
        base = adapters_dir()
    except AdaptersNotFound:
        base = None
    if base is None or not any(a.built(base) for a in SHIPPED):
        print("\nconformance: no shipped adapter is built (make adapters)")
        return
    out = corpus / "conformance"
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--impl", "all",
                           "--mode", "all", "--corpus", str(corpus), "--out", str(out)],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t
    if done.returncode not in (0, 1):  # 1: divergences, which are findings
        print(f"\nconformance: the harness failed: {done.stderr.strip()[-300:]}")
        return
    results = json.loads((out / "results.json").read_text())
    print("\nconformance harness stage (harness run --impl all --mode all, --jobs 2, interop "
          f"included): {wall:.1f} s wall (target: under 60)")
    print("| entry | cases | wall ms/case | peer CPU ms/handshake (floor) | ratio |")
    print("|---|---|---|---|---|")
    floors = 0.0
    per_case: dict[tuple[str, str, str], float] = {}
    for e in results["implementations"]:
        if e["mode"] != "handshake":
            continue
        cpu = [c["peer"]["cpu_seconds"] for c in e["cases"]
               if c["outcome"] != "skip" and c.get("peer")]
        floor = sum(cpu) / len(cpu) if cpu else 0.0
        floors += sum(cpu)
        ms = 1000 * e["seconds"] / max(1, len(e["cases"]))
        # keyed by package: py-libp2p's TCP and QUIC stacks are two adapters of one package
        per_case[(e["package"], e["transport"], e["direction"])] = ms
        ratio = f"{ms / (1000 * floor):.1f}" if floor else "-"
        print(f"| {e['name']}@{e['transport']}-{e['direction']} | {len(e['cases'])} | {ms:.2f} "
              f"| {1000 * floor:.3f} | {ratio} |")
    print("QUIC against TCP, same package and direction (target: at most 2x):")
    for (name, transport, direction), ms in sorted(per_case.items()):
        tcp = per_case.get((name, "tcp", direction))
        if transport == "quic" and tcp:
            print(f"  {name} {direction}: {ms / tcp:.2f}x ({ms:.2f} against {tcp:.2f} ms/case)")
        elif transport == "quic":
            print(f"  {name} {direction}: no TCP transport to compare")
    if floors:
        print(f"stage wall {wall:.1f} s against the sum of its handshakes' floors {floors:.2f} s "
              f"({wall / floors:.0f}x)")


def bench_handshakes(out: Path, names: list[str], n: int = 50) -> None:
    """The handshake profile: n full handshakes per (adapter, transport, direction, certificate
    scheme); median wall time on the implementation's side and the fixture peer's own CPU."""
    from dataclasses import replace
    from statistics import median

    from fixturegen.harness.adapters import BY_NAME, PEER, adapters_dir
    from fixturegen.harness.handshake import DIRECTIONS, PROFILE_CASES, handshake_cases
    from fixturegen.harness.session import run_handshake

    base = adapters_dir()
    print(f"\nhandshake profile ({n} handshakes per row; medians; wall: request to the "
          "implementation's answer; peer CPU: the fixture peer's own, per handshake)\n")
    print("| entry | certificate scheme | accepted | median wall ms | median peer CPU ms |")
    print("|---|---|---|---|---|")
    for name in names:
        adapter = BY_NAME[name]
        if not adapter.built(base) or not (base / PEER).is_file():
            print(f"  {name}: not built (make adapters)")
            continue
        target = adapter.target(base)
        for transport in adapter.transports:
            for direction in DIRECTIONS:
                by_id = {c.id: c for c in handshake_cases(out, transport, direction, 10.0)}
                for fixture in PROFILE_CASES:
                    case = by_id[fixture]
                    request = case.case.request
                    runs = [replace(case, case=replace(case.case, request=request.model_copy(
                        update={"id": run_id(fixture, i)}))) for i in range(n)]
                    entry = run_handshake(target, [str(base / PEER)], runs, transport,
                                          direction, timeout=20.0, startup=60.0,
                                          stderr_path=None)
                    done = [c for c in entry.cases if c.verdict == "accept" and c.peer]
                    scheme = fixture.split(".")[1]
                    if not done:
                        print(f"| {entry.label} | {scheme} | 0 | (none accepted: "
                              f"{entry.cases[0].outcome}) | |", flush=True)
                        continue
                    wall = 1000 * median(c.seconds for c in done)
                    cpu = 1000 * median(c.peer.cpu_seconds for c in done if c.peer)
                    print(f"| {entry.label} | {scheme} | {len(done)} | {wall:.2f} | {cpu:.3f} |",
                          flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--handshake"]:
        from fixturegen.harness.adapters import SHIPPED

        chosen = sys.argv[2:] or [a.name for a in SHIPPED if a.transports]
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "out"
            generate(corpus)
            bench_handshakes(corpus, chosen)
    else:
        main()
