"""The reference verifier: spec vectors, the corpus, proof counting, independence, robustness."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixturegen.verify import ERROR_CODES, Verifier
from fixturegen.verify.codes import Check, ErrorCode
from fixturegen.verify.manifest_check import check_manifest
from fixturegen.verify.x509 import parse_certificate

ROOT = Path(__file__).resolve().parents[1]
#: One valid fixture per scheme family, for the bit-flip checks.
FAMILIES = [
    "matrix.ecdsa_secp256r1_sha256.ed25519.fixed",
    "matrix.rsa_pkcs1_sha256.ecdsa-p256.fixed",
    "matrix.rsa_pss_rsae_sha256.secp256k1.fixed",
    "matrix.ed25519.rsa-2048.fixed",
]
def test_spec_vectors(vectors: dict[str, Any]) -> None:
    v = Verifier()
    for t in vectors["tls_certificates"]:
        verdict = v.verify([bytes.fromhex(t["certificate_der_hex"])])
        if t["expected"]["result"] == "valid":
            assert verdict.accepted, (t["id"], verdict.detail)
            assert verdict.peer_id == t["expected"]["peer_id"]
            assert verdict.signature_verifications == 2
        else:
            assert verdict.error == "extension_signature_invalid", t["id"]


def test_the_corpus_agrees_with_its_manifest(corpus: Path) -> None:
    problems, count = check_manifest(corpus / "manifest.json")
    assert problems == [] and count > 150


def test_each_proof_is_checked_once_and_the_first_failure_is_the_verdict(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    v = Verifier()
    order = list(Check)
    for f in fixtures.values():
        certs = [(corpus / p).read_bytes() for p in f["chain"]]
        verdict = v.verify(certs, expect_peer_id=f["expect_peer_id"])
        if verdict.accepted:
            assert verdict.signature_verifications == 2, f["id"]
            # every certificate check ran, in order (the PeerId one when a PeerId is expected)
            last = Check.PEER_ID if f["expect_peer_id"] else Check.EXTENSION_SIGNATURE
            assert verdict.checks == order[:last.position], f["id"]
        else:
            assert verdict.error is not None
            assert verdict.checks[-1] is ErrorCode(verdict.error).check, f["id"]
            ran = list(verdict.checks)
            assert ran == sorted(ran, key=order.index) and len(set(ran)) == len(ran)
            # signatures are verified only by the signature checks, once each
            assert verdict.signature_verifications == sum(c.is_signature for c in ran)


def test_caches_do_not_change_verdicts(corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    warm = Verifier()
    for f in list(fixtures.values()) * 2:
        certs = [(corpus / p).read_bytes() for p in f["chain"]]
        a = warm.verify(certs, expect_peer_id=f["expect_peer_id"])
        b = Verifier().verify(certs, expect_peer_id=f["expect_peer_id"])
        assert (a.error, a.peer_id, a.flags) == (b.error, b.peer_id, b.flags)


def test_validation_time(corpus: Path) -> None:
    der = (corpus / "certs/matrix.ed25519.ed25519.fixed.der").read_bytes()
    v = Verifier()
    assert v.verify([der], at=datetime(1998, 12, 31, tzinfo=UTC)).error == "not_yet_valid"
    assert v.verify([der], at=datetime(3000, 1, 1, 0, 0, 1, tzinfo=UTC)).error == "expired"
    assert v.verify([der], at=datetime(2500, 6, 1, tzinfo=UTC)).accepted


def test_verifier_does_not_import_the_generator() -> None:
    for path in (ROOT / "fixturegen" / "verify").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for n in names:
                if n.startswith("fixturegen"):
                    assert n.startswith("fixturegen.verify"), f"{path.name} imports {n}"


def _flips(der: bytes, step: int) -> list[bytes]:
    out = []
    for bit in range(0, len(der) * 8, step):
        b = bytearray(der)
        b[bit // 8] ^= 1 << (bit % 8)
        out.append(bytes(b))
    return out


@pytest.mark.parametrize("fid", FAMILIES)
def test_sampled_bit_flips_are_rejected(corpus: Path, fid: str) -> None:
    der = (corpus / f"certs/{fid}.der").read_bytes()
    v = Verifier()
    for flipped in _flips(der, 13):
        assert not v.verify([flipped]).accepted


@pytest.mark.slow
@pytest.mark.parametrize("fid", FAMILIES)
def test_every_bit_flip_is_rejected(corpus: Path, fid: str) -> None:
    der = (corpus / f"certs/{fid}.der").read_bytes()
    v = Verifier()
    for flipped in _flips(der, 1):
        verdict = v.verify([flipped])
        assert not verdict.accepted and verdict.error in ERROR_CODES


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048))
def test_random_bytes_are_rejected_without_raising(data: bytes) -> None:
    verdict = Verifier().verify([data])
    assert not verdict.accepted and verdict.error in ERROR_CODES


@st.composite
def mutated(draw: st.DrawFn, corpus: Path) -> tuple[str, bytes]:
    fid = draw(st.sampled_from([*FAMILIES, "matrix.ecdsa_secp384r1_sha384.secp256k1.throwaway"]))
    der = bytearray((corpus / f"certs/{fid}.der").read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set", "insert", "delete", "truncate", "splice"]))
        pos = draw(st.integers(0, len(der) - 1))
        if kind == "set":
            der[pos] = draw(st.integers(0, 255))
        elif kind == "insert":
            der[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del der[pos : pos + draw(st.integers(1, 8))]
        elif kind == "truncate":
            del der[pos:]
        else:
            der[pos:pos] = der[draw(st.integers(0, len(der) - 1)):][:32]
        if not der:
            der = bytearray(b"\x30")
    return fid, bytes(der)


def test_structure_aware_mutations_never_raise_or_change_identity(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    v = Verifier()

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
    @given(mutated(corpus))
    def check(case: tuple[str, bytes]) -> None:
        fid, der = case
        verdict = v.verify([der])
        assert verdict.error in ERROR_CODES or verdict.accepted
        if verdict.accepted:  # only a no-op mutation can be accepted, with the same identity
            assert verdict.peer_id == fixtures[fid]["expected"]["peer_id"]

    check()


def test_parser_is_strict_about_der(corpus: Path) -> None:
    der = (corpus / "certs/matrix.ed25519.ed25519.fixed.der").read_bytes()
    parse_certificate(der)
    for bad in (der + b"\x00", der[:-1], b"\x30\x80" + der[2:]):
        with pytest.raises(ValueError):
            parse_certificate(bad)


def test_cached_failures_keep_no_caller_alive(corpus: Path, manifest: dict[str, Any]) -> None:
    """A Verifier caches failed key decodings and scheme checks; what it keeps must not be an
    exception object, whose traceback would keep the caller's frames (and, in a fuzzing
    campaign, each batch of mutants) alive as long as the cache."""
    import gc
    import weakref

    class Held:
        pass

    v = Verifier()

    def verify_holding(chain: list[bytes]) -> weakref.ref[Held]:
        held = Held()  # something the caller has in hand while it verifies
        v.verify(chain)
        return weakref.ref(held)

    refs = []
    for f in manifest["fixtures"]:
        chain = [(corpus / p).read_bytes() for p in f["chain"]]
        refs += [verify_holding(chain), verify_holding(chain)]  # the second: from the cache
    gc.collect()
    assert [r for r in refs if r() is not None] == []
    rejected = [f for f in manifest["fixtures"] if f["expected"]["result"] == "invalid"]
    assert len(rejected) > 50  # the failure paths ran


def test_ed25519_encodings_rfc_8032_says_do_not_decode_are_refused() -> None:
    """RFC 8032 5.1.3: y >= p fails, and x = 0 (y = 1 or p - 1) with its sign bit set fails;
    OpenSSL reads both as the point they are congruent to, so the verifier checks them."""
    from fixturegen.verify.identity import (
        ED25519_P,
        ED25519_SMALL_ORDER,
        HostKeyMalformed,
        check_ed25519_encoding,
    )

    def encoded(y: int, sign: bool = False) -> bytes:
        return (y | (sign << 255)).to_bytes(32, "little")

    for bad in (encoded(ED25519_P), encoded(ED25519_P + 1), encoded(2**255 - 1),
                encoded(1, sign=True), encoded(ED25519_P - 1, sign=True)):
        with pytest.raises(HostKeyMalformed, match="not canonical"):
            check_ed25519_encoding(bad)
    # the edges that still decode: y = p - 1 (the point of order 2), y = 2 with x's sign bit
    for good in (encoded(ED25519_P - 1), encoded(1), encoded(2, sign=True)):
        check_ed25519_encoding(good)
    # the flag's eight encodings are canonical, distinct points whose 8-fold is the identity
    # (the Edwards addition law, RFC 8032 5.1.4, written out here)
    p, d = ED25519_P, -121665 * pow(121666, -1, ED25519_P) % ED25519_P

    def decode(b: bytes) -> tuple[int, int]:
        y = int.from_bytes(b, "little") & ((1 << 255) - 1)
        x2 = (y * y - 1) * pow(d * y * y + 1, -1, p) % p
        x = pow(x2, (p + 3) // 8, p)
        if (x * x - x2) % p:
            x = x * pow(2, (p - 1) // 4, p) % p
        assert (x * x - x2) % p == 0
        return (p - x if x & 1 != b[31] >> 7 else x), y

    def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        t = d * a[0] * b[0] * a[1] * b[1]
        return ((a[0] * b[1] + b[0] * a[1]) * pow(1 + t, -1, p) % p,
                (a[1] * b[1] + a[0] * b[0]) * pow(1 - t, -1, p) % p)

    points = set()
    for encoding in ED25519_SMALL_ORDER:
        check_ed25519_encoding(encoding)
        q = point = decode(encoding)
        for _ in range(3):
            q = add(q, q)
        assert q == (0, 1), encoding.hex()
        points.add(point)
    assert len(points) == 8


def test_key_purposes_are_flagged_from_what_an_outside_parser_reads(corpus: Path) -> None:
    """extKeyUsage read with cryptography: clientAuth alone is flagged (acceptable: Go's
    crypto/x509 refuses it for a TLS peer), anyExtendedKeyUsage or serverAuth beside clientAuth
    is not; the libp2p extension critical beside an unknown critical extension, in either order,
    is refused at the critical-extensions check."""
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    from fixturegen.verify.codes import Flag

    verifier = Verifier()
    expect = {"acceptable.extended-key-usage-client-auth": ([ExtendedKeyUsageOID.CLIENT_AUTH],
                                                            True),
              "valid.extended-key-usage-any": ([ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE],
                                               False),
              "valid.libp2p-extension-among-others": ([ExtendedKeyUsageOID.SERVER_AUTH,
                                                       ExtendedKeyUsageOID.CLIENT_AUTH], False)}
    for case_id, (purposes, flagged) in expect.items():
        der = (corpus / "certs" / f"{case_id}.der").read_bytes()
        eku = x509.load_der_x509_certificate(der).extensions.get_extension_for_class(
            x509.ExtendedKeyUsage)
        assert list(eku.value) == purposes and not eku.critical, case_id
        verdict = verifier.verify([der])
        assert verdict.accepted, case_id
        assert (Flag.EXTENDED_KEY_USAGE_WITHOUT_SERVER_AUTH in verdict.flags) == flagged, case_id
    for order in ("after", "before"):
        der = (corpus / "certs" /
               f"invalid.unknown-critical-extension.{order}-critical-libp2p.der").read_bytes()
        exts = x509.load_der_x509_certificate(der).extensions
        critical = [e.oid.dotted_string for e in exts if e.critical]
        libp2p, unknown = "1.3.6.1.4.1.53594.1.1", "1.3.6.1.4.1.53594.99.1"
        assert critical == ([libp2p, unknown] if order == "after" else [unknown, libp2p])
        verdict = verifier.verify([der])
        assert (verdict.accepted, verdict.error) == (False, ErrorCode.UNKNOWN_CRITICAL_EXTENSION)
