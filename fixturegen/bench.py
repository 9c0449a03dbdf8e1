"""``make bench``: generation and verification speed, each against its floor.

Generation floor: the same private-key operations (one key generation per throwaway key of the
same kind, one signature per signature the corpus makes), done with `cryptography` directly.
Verification floor: the bare signature verifications of the same certificates with
`cryptography`, keys already loaded. Both are measured in the same run as what they bound.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from fixturegen.cases import CATALOGUE
from fixturegen.cases import context as case_context
from fixturegen.certs.schemes import SigningAlgorithm, hash_object
from fixturegen.identity.hostkey import HostKey, host_key_type_of
from fixturegen.keys import EC_CURVES, RSA_BITS, kind_of
from fixturegen.output.writer import render_all
from fixturegen.verify import Verifier

OPENSSL_PIPELINE_MS = 230.0  # SPEC section 5, measured on this machine kind
SEED = b"libp2p-fixturegen"


def _best(fn: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def record_operations() -> tuple[Counter[str], Counter[tuple[str, str, str | None, int]]]:
    """The throwaway key kinds and the signatures one serial corpus build performs."""
    keys: Counter[str] = Counter()
    sigs: Counter[tuple[str, str, str | None, int]] = Counter()
    derive = case_context.derive_private_key  # type: ignore[attr-defined]
    sign, host_sign = SigningAlgorithm.sign, HostKey.sign

    def rec_derive(kind: str, seed: bytes, label: str) -> PrivateKeyTypes:
        keys[kind] += 1
        return derive(kind, seed, label)

    def rec_sign(self: SigningAlgorithm, key: PrivateKeyTypes, data: bytes,
                 pss_salt: bytes = b"") -> bytes:
        sigs[(kind_of(key), self.family, self.hash_name, len(data))] += 1
        return sign(self, key, data, pss_salt)

    def rec_host(self: HostKey, message: bytes) -> bytes:
        family = {"RSA": "rsa_pkcs1", "Ed25519": "ed25519"}.get(host_key_type_of(self.pair),
                                                               "ecdsa")
        sigs[(self.pair.kind, family, "sha256", len(message))] += 1
        return host_sign(self, message)

    case_context.derive_private_key = rec_derive  # type: ignore[attr-defined]
    SigningAlgorithm.sign = rec_sign  # type: ignore[method-assign]
    HostKey.sign = rec_host  # type: ignore[method-assign]
    try:
        render_all(list(CATALOGUE), SEED, workers=1)
    finally:
        case_context.derive_private_key = derive  # type: ignore[attr-defined]
        SigningAlgorithm.sign = sign  # type: ignore[method-assign]
        HostKey.sign = host_sign  # type: ignore[method-assign]
    return keys, sigs


def fresh_key(kind: str) -> PrivateKeyTypes:
    if kind in RSA_BITS:
        return rsa.generate_private_key(65537, RSA_BITS[kind])
    if kind in EC_CURVES:
        return ec.generate_private_key(EC_CURVES[kind])
    return ed25519.Ed25519PrivateKey.generate() if kind == "ed25519" else (
        ed448.Ed448PrivateKey.generate())


def floor_generation(keys: Counter[str], sigs: Counter[tuple[str, str, str | None, int]]
                     ) -> float:
    signers = {kind: fresh_key(kind) for kind in {k for k, *_ in sigs}}

    def run() -> None:
        for kind, n in keys.items():
            for _ in range(n):
                fresh_key(kind)
        for (kind, family, h, size), n in sigs.items():
            key, data = signers[kind], b"\x5a" * size
            for _ in range(n):
                if isinstance(key, rsa.RSAPrivateKey):
                    pad = padding.PKCS1v15() if family == "rsa_pkcs1" else padding.PSS(
                        padding.MGF1(hash_object(h or "sha256")), padding.PSS.DIGEST_LENGTH)
                    key.sign(data, pad, hash_object(h or "sha256"))
                elif isinstance(key, ec.EllipticCurvePrivateKey):
                    key.sign(data, ec.ECDSA(hash_object(h or "sha256")))
                else:
                    key.sign(data)  # type: ignore[call-arg, union-attr]

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

    t_all = _best(lambda: verify(inputs), rounds=7)
    t_acc = _best(lambda: verify(accepted), rounds=7)
    t_floor = _best(bare, rounds=7)
    return {"all": t_all, "all_n": len(inputs), "accepted": t_acc, "accepted_n": len(accepted),
            "floor": t_floor}


def bench_transcripts(root: Path, data: dict[str, Any]) -> dict[str, float]:
    from fixturegen.verify.transcript import TranscriptChecker

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


def _proofs(der: bytes) -> tuple[tuple[Any, bytes, bytes, tuple[Any, ...]], ...]:
    """The two proofs of a certificate, keys loaded, ready for bare verify() calls."""
    from fixturegen.verify.identity import decode_public_key
    from fixturegen.verify.verifier import PREFIX, _Run, _signed_key
    from fixturegen.verify.x509 import LIBP2P_OID, parse_certificate

    v = Verifier()
    cert = parse_certificate(der)
    key = x509.load_der_x509_certificate(der).public_key()
    scheme = v._scheme(cert.signature_algorithm, key, _Run())
    value = next(e.value for e in cert.extensions if e.oid == LIBP2P_OID)
    pb, sig = _signed_key(value)
    _, host = v._host_key(pb)
    decode_public_key(pb)
    if isinstance(host, rsa.RSAPublicKey):
        args: tuple[Any, ...] = (padding.PKCS1v15(), hashes.SHA256())
    elif isinstance(host, ec.EllipticCurvePublicKey):
        args = (ec.ECDSA(hashes.SHA256()),)
    else:
        args = ()
    return ((key, cert.signature, cert.tbs, scheme.verify_args), (host, sig, PREFIX + cert.spki,
                                                                  args))


def main() -> None:
    print("fixturegen bench (2-core machine; best of several rounds)\n")
    n = len(CATALOGUE)
    keys, sigs = record_operations()
    serial = _best(lambda: render_all(list(CATALOGUE), SEED, workers=1), rounds=2)
    parallel = _best(lambda: render_all(list(CATALOGUE), SEED), rounds=2)
    floor = floor_generation(keys, sigs)
    print(f"generation: {n} fixtures, {sum(keys.values())} throwaway keys "
          f"({dict(sorted(keys.items()))}), {sum(sigs.values())} signatures")
    print(f"  serial      {serial / n * 1000:7.2f} ms/fixture   "
          f"ratio to floor {serial / floor:5.2f}")
    print(f"  parallel    {parallel / n * 1000:7.2f} ms/fixture   (all cores: {os.cpu_count()})")
    print(f"  floor       {floor / n * 1000:7.2f} ms/fixture   (same private-key operations, "
          "cryptography)")
    print(f"  vs the openssl pipeline ({OPENSSL_PIPELINE_MS:.0f} ms/certificate): "
          f"{OPENSSL_PIPELINE_MS / (parallel / n * 1000):.1f}x faster in parallel, "
          f"{OPENSSL_PIPELINE_MS / (serial / n * 1000):.1f}x serial (target: 20x)")
    sample = openssl_sample()
    if sample is not None:
        print(f"  (one `openssl req -x509 -newkey ec` subprocess here: {sample:.1f} ms)")

    import json

    from fixturegen.output.writer import generate

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        generate(out)
        r = bench_verification(out, json.loads((out / "manifest.json").read_text()))
        t = bench_transcripts(out, json.loads((out / "transcripts.json").read_text()))
        from fixturegen.harness.requests import load_cases

        out_cases = load_cases(out)
    print("\nverification (a fresh Verifier per round; each distinct key decoded once):")
    print(f"  whole corpus  {r['all_n'] / r['all']:8.0f} certificates/s ({r['all_n']} fixtures)")
    print(f"  accepted set  {r['accepted_n'] / r['accepted']:8.0f} certificates/s "
          f"({r['accepted_n']} fixtures, 2 signature checks each)")
    print(f"  floor         {r['accepted_n'] / r['floor']:8.0f} certificates/s "
          "(bare verify() calls, keys preloaded)")
    print(f"  ratio to floor {r['accepted'] / r['floor']:.2f} (target: at most 1.5)")
    print("\ntranscript vectors (certificates already verified, as in a handshake's third proof):")
    print(f"  verifier      {t['n'] / t['verifier']:8.0f} vectors/s ({t['n']} valid vectors)")
    print(f"  floor         {t['n'] / t['floor']:8.0f} vectors/s (bare CertificateVerify checks)")
    print(f"  ratio to floor {t['verifier'] / t['floor']:.2f} (target: at most 1.3)")
    d = bench_driver(out_cases)
    print("\nharness driver (an adapter that answers at once; the corpus and its vectors):")
    print(f"  wall          {d['wall'] * 1000:8.3f} ms/case ({d['n']} cases; adapter and pipes "
          "included)")
    print(f"  driver CPU    {d['cpu'] * 1000:8.3f} ms/case (the driver process alone; "
          "target: under 5)")


_INSTANT = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    sys.stdout.write(json.dumps({'id': r['id'], 'verdict': 'reject', 'peer_id': None,"
    " 'error': 'x'}) + '\\n')\n"
    "    sys.stdout.flush()\n")


def bench_driver(cases: list[Any]) -> dict[str, float]:
    """The driver's own cost per case, against an adapter that does no work."""
    import sys

    from fixturegen.harness import driver

    requests = [c.request for c in cases]
    best_wall = best_cpu = float("inf")
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        driver.run([sys.executable, "-c", _INSTANT], requests)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return {"n": len(requests), "wall": best_wall / len(requests),
            "cpu": best_cpu / len(requests)}


if __name__ == "__main__":
    main()
