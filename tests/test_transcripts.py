"""CertificateVerify vectors and proof sets, checked from the outside with cryptography."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa

from fixturegen.model.transcripts import transcripts_schema
from fixturegen.verify.transcript import TranscriptChecker, check_transcripts
from tests import outside

ROOT = Path(__file__).resolve().parents[1]
CONTEXTS = {"server": b"TLS 1.3, server CertificateVerify",
            "client": b"TLS 1.3, client CertificateVerify"}
CODE_POINTS = {"ecdsa_secp256r1_sha256": 0x0403, "ecdsa_secp384r1_sha384": 0x0503,
               "ecdsa_secp521r1_sha512": 0x0603, "ed25519": 0x0807, "ed448": 0x0808,
               "rsa_pss_rsae_sha256": 0x0804, "rsa_pss_rsae_sha384": 0x0805,
               "rsa_pss_rsae_sha512": 0x0806, "rsa_pkcs1_sha256": 0x0401}
H = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


@pytest.fixture(scope="module")
def transcripts(corpus: Path) -> dict[str, Any]:
    return json.loads((corpus / "transcripts.json").read_text())


def cert_of(corpus: Path, v: dict[str, Any]) -> x509.Certificate:
    return x509.load_der_x509_certificate((corpus / v["certificate_path"]).read_bytes())


def outside_verify(cert: x509.Certificate, v: dict[str, Any]) -> None:
    """Raises InvalidSignature unless the signature verifies over the stated content."""
    key = cert.public_key()
    content = bytes.fromhex(v["signed_content"])
    sig = bytes.fromhex(v["signature"])
    scheme = v["signature_scheme"]
    h = scheme.rsplit("_", 1)[-1]
    if isinstance(key, rsa.RSAPublicKey):
        pad = padding.PKCS1v15() if scheme.startswith("rsa_pkcs1") else padding.PSS(
            padding.MGF1(H[h]()), H[h]().digest_size)
        key.verify(sig, content, pad, H[h]())
    elif isinstance(key, ec.EllipticCurvePublicKey):
        key.verify(sig, content, ec.ECDSA(H[h]() if h in H else hashes.SHA256()))
    else:
        assert isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey)
        key.verify(sig, content)


def test_schema_and_shipped_schema(corpus: Path, transcripts: dict[str, Any]) -> None:
    schema = json.loads((corpus / "transcripts.schema.json").read_text())
    jsonschema.validate(transcripts, schema)
    shipped = json.loads((ROOT / "fixturegen/schemas/transcripts.schema.json").read_text())
    assert shipped == schema == transcripts_schema()


def test_vectors_from_the_outside(corpus: Path, transcripts: dict[str, Any],
                                  fixtures: dict[str, dict[str, Any]]) -> None:
    accepted = {fid for fid, f in fixtures.items() if f["expected"]["error"] is None}
    covered = set()
    mismatched: set[str] = set()
    for v in transcripts["vectors"]:
        th = bytes.fromhex(v["transcript_hash"])
        assert bytes.fromhex(v["signed_content"]) == b" " * 64 + CONTEXTS[v["context"]] + \
            b"\x00" + th
        assert v["code_point"] == CODE_POINTS[v["signature_scheme"]]
        cert = cert_of(corpus, v)
        error = v["expected"]["error"]
        if error is None:
            outside_verify(cert, v)
            covered.add((v["certificate"], v["context"]))
        elif error == "transcript_signature_invalid":
            with pytest.raises((InvalidSignature, ValueError)):
                outside_verify(cert, v)
        elif error == "transcript_scheme_forbidden":
            assert v["signature_scheme"].startswith("rsa_pkcs1")
            outside_verify(cert, v)  # a real PKCS#1 signature: only the scheme is wrong
        elif error == "transcript_scheme_mismatch":
            # The scheme names another key family (or curve) than the certificate's key.
            family = key_family(cert.public_key())
            assert not v["signature_scheme"].startswith(family), (v["id"], family)
            mismatched.add(family)
        else:  # the certificate is at fault; the CertificateVerify itself is good
            assert error in ("certificate_signature_invalid", "extension_signature_invalid")
            outside_verify(cert, v)
    # every accepted certificate has a valid vector in both contexts
    assert {(fid, c) for fid in accepted for c in CONTEXTS} <= covered
    # the mismatch vectors cover every key family
    assert mismatched >= {"rsa", "ecdsa_secp256r1", "ed25519"}


def key_family(key: object) -> str:
    """The SignatureScheme name prefix that fits a certificate key (RFC 8446 4.2.3)."""
    if isinstance(key, rsa.RSAPublicKey):
        return "rsa"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"ecdsa_{key.curve.name}"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "ed25519"
    assert isinstance(key, ed448.Ed448PublicKey), type(key)
    return "ed448"


def test_proof_sets_corrupt_exactly_one_proof(corpus: Path, transcripts: dict[str, Any],
                                              fixtures: dict[str, dict[str, Any]]) -> None:
    vectors = {v["id"]: v for v in transcripts["vectors"]}
    seen = set()
    for s in transcripts["proof_sets"]:
        v = vectors[s["transcript_vector"]]
        f = fixtures[s["certificate"]]
        assert v["certificate"] == s["certificate"] and v["context"] == s["sender"]
        cert = x509.load_der_x509_certificate((corpus / f["path"]).read_bytes())
        scheme = f["certificate"]["signature_scheme"]
        proofs = {
            "certificate": lambda: outside.verify_self_signature(cert, scheme),  # noqa: B023
            "extension": lambda: outside.verify_extension_signature(cert),  # noqa: B023
            "transcript": lambda: outside_verify(cert, v),  # noqa: B023
        }
        for name, check in proofs.items():
            if name == s["corrupted"]:
                with pytest.raises((InvalidSignature, ValueError)):
                    check()
            else:
                check()
        seen.add((s["id"].split(".")[1], s["sender"], s["corrupted"]))
    assert len(seen) == 4 * 2 * 4


def test_reference_verifier_agrees_and_counts_one_check_per_cached_certificate(
        corpus: Path, transcripts: dict[str, Any]) -> None:
    problems, count = check_transcripts(corpus / "transcripts.json")
    assert problems == [] and count == len(transcripts["vectors"]) + len(
        transcripts["proof_sets"])
    checker = TranscriptChecker()
    firsts = {}
    for v in transcripts["vectors"]:
        der = (corpus / v["certificate_path"]).read_bytes()
        verdict = checker.verify(der, v["context"], v["signature_scheme"], v["code_point"],
                                 bytes.fromhex(v["transcript_hash"]), bytes.fromhex(v["signature"]))
        if v["certificate"] in firsts and firsts[v["certificate"]]:
            # the certificate was verified already: at most the one CertificateVerify check
            assert verdict.signature_verifications == (
                1 if verdict.error is None or verdict.error.startswith("transcript_signature")
                else 0), v["id"]
        firsts.setdefault(v["certificate"], True)
