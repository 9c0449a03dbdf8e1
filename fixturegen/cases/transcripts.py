"""TLS 1.3 CertificateVerify vectors (RFC 8446 4.4.3): the third proof of a libp2p handshake.

For every certificate the reference verifier accepts, a valid vector per context (server,
client), signed with the certificate key under the TLS scheme its :class:`KeyKind` uses for
CertificateVerify (RSA keys: rsa_pss_rsae_sha256, plus the certificate's own PSS scheme when it
has one). For the certificate keys of the proof sets, one invalid vector per fault
(:data:`FAULTS`). Handshake proof sets tie a certificate to a vector, with exactly one of the
three proofs corrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from fixturegen.cases.model import Result
from fixturegen.cases.mutate import corrupt
from fixturegen.certs.pss import sign_pss
from fixturegen.certs.schemes import SCHEMES, hash_object
from fixturegen.keys import KeyKind
from fixturegen.keys.derive import derive_private_key, stream
from fixturegen.model.manifest import Fixture
from fixturegen.model.transcripts import ProofSet, TranscriptVector, VectorExpected
from fixturegen.verify.codes import ErrorCode, Flag

Context = Literal["server", "client"]
CONTEXTS: dict[Context, bytes] = {"server": b"TLS 1.3, server CertificateVerify",
                                  "client": b"TLS 1.3, client CertificateVerify"}


@dataclass(frozen=True)
class ProofSetKeys:
    """The certificates of one proof set: valid, corrupted self-signature, corrupted extension
    signature; and a scheme that does not fit their key."""

    valid: str
    bad_certificate: str
    bad_extension: str
    mismatched_scheme: str


#: The proof sets, by the label their ids carry.
PROOF_SETS: dict[str, ProofSetKeys] = {
    "p256": ProofSetKeys("matrix.ecdsa_secp256r1_sha256.ed25519.fixed",
                         "invalid.self-signature-corrupted.ecdsa_secp256r1_sha256",
                         "invalid.extension-signature-corrupted.ed25519",
                         "ecdsa_secp384r1_sha384"),
    "p384": ProofSetKeys("matrix.ecdsa_secp384r1_sha384.ed25519.fixed",
                         "invalid.self-signature-corrupted.ecdsa_secp384r1_sha384",
                         "invalid.extension-signature-corrupted.cert-ecdsa_secp384r1_sha384",
                         "ecdsa_secp256r1_sha256"),
    "ed25519": ProofSetKeys("matrix.ed25519.ed25519.fixed",
                            "invalid.self-signature-corrupted.ed25519",
                            "invalid.extension-signature-corrupted.cert-ed25519", "ed448"),
    "rsa-pss": ProofSetKeys("matrix.rsa_pss_rsae_sha256.ed25519.fixed",
                            "invalid.self-signature-corrupted.rsa_pss_rsae_sha256",
                            "invalid.extension-signature-corrupted.cert-rsa_pss_rsae_sha256",
                            "ecdsa_secp256r1_sha256"),
}


def needed_certificates() -> set[str]:
    """The fixture ids the proof sets use (some are invalid, yet need their key)."""
    return {i for p in PROOF_SETS.values()
            for i in (p.valid, p.bad_certificate, p.bad_extension)}


def signed_content(context: Context, transcript_hash: bytes) -> bytes:
    return b"\x20" * 64 + CONTEXTS[context] + b"\x00" + transcript_hash


def sign_cv(key: PrivateKeyTypes, scheme: str, content: bytes, salt: bytes) -> bytes:
    h = SCHEMES[scheme].algorithm.hash_name
    if isinstance(key, rsa.RSAPrivateKey):
        assert h
        if scheme.startswith("rsa_pkcs1"):
            return key.sign(content, padding.PKCS1v15(), hash_object(h))
        return sign_pss(key, content, h, salt[: hash_object(h).digest_size])
    if isinstance(key, ec.EllipticCurvePrivateKey):
        assert h
        return key.sign(content, ec.ECDSA(hash_object(h), deterministic_signing=True))
    assert isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey)
    return key.sign(content)


def default_scheme(key: PrivateKeyTypes) -> str:
    scheme = KeyKind.of(key).cv_scheme
    if scheme is None:
        raise ValueError(f"a {KeyKind.of(key)} key signs no TLS 1.3 CertificateVerify")
    return scheme


@dataclass(frozen=True)
class CertificateInput:
    fixture: Fixture
    key: PrivateKeyTypes


@dataclass(frozen=True)
class Signing:
    """How a vector's signature is made, when not honestly (one fault each)."""

    key: PrivateKeyTypes | None = None
    context: Context | None = None
    scheme: str | None = None
    tamper: Callable[[bytes], bytes] | None = None
    stated_hash: bytes | None = None


def _vector(seed: bytes, vid: str, cert: CertificateInput, context: Context, scheme: str,
            comment: str, flags: tuple[Flag, ...], expected: VectorExpected,
            how: Signing = Signing()) -> TranscriptVector:
    named = SCHEMES[scheme]
    th = stream(seed, vid, "transcript-hash", named.hash_length)
    salt = stream(seed, vid, "cv-pss-salt", 64)
    sig = sign_cv(how.key or cert.key, how.scheme or scheme,
                  signed_content(how.context or context, th), salt)
    if how.tamper:
        sig = how.tamper(sig)
    th = how.stated_hash if how.stated_hash is not None else th
    return TranscriptVector(
        id=vid, certificate=cert.fixture.id, certificate_path=cert.fixture.path,
        context=context, signature_scheme=scheme, code_point=named.code_point,
        transcript_hash=th.hex(), signed_content=signed_content(context, th).hex(),
        signature=sig.hex(), comment=comment, flags=list(flags), expected=expected)


def valid_vectors(seed: bytes, c: CertificateInput) -> list[TranscriptVector]:
    """The valid vectors of an accepted certificate: per context, its key's scheme and, for an
    RSA-PSS certificate, its own scheme too."""
    f = c.fixture
    own = f.certificate.signature_scheme
    schemes = [default_scheme(c.key)]
    if own.startswith("rsa_pss_rsae_") and own not in schemes:
        schemes.append(own)
    out = []
    for context in CONTEXTS:
        for scheme in schemes:
            differs = scheme != own
            flag = (Flag.CV_SCHEME_DIFFERS_FROM_CERTIFICATE if differs
                    else Flag.CV_SCHEME_EQUALS_CERTIFICATE)
            result: Result = ("acceptable" if differs or f.expected.result == "acceptable"
                              else "valid")
            suffix = "" if scheme == schemes[0] else f".{scheme}"
            out.append(_vector(
                seed, f"cv.{f.id}.{context}{suffix}", c, context, scheme,
                f"A valid {context} CertificateVerify with {scheme}.", (flag, *f.flags),
                VectorExpected(result=result, error=None)))
    return out


def _other_key(key: PrivateKeyTypes, other: PrivateKeyTypes, seed: bytes) -> PrivateKeyTypes:
    """Another key of the same family as ``key`` (``other`` when it already is)."""
    kind = KeyKind.of(key)
    if KeyKind.of(other).family == kind.family:
        return other
    return derive_private_key(KeyKind.RSA_2048 if kind.rsa_bits else kind, seed,
                              "transcripts/other-key")


def fault_vectors(seed: bytes, label: str, c: CertificateInput, context: Context,
                  other: PrivateKeyTypes) -> list[TranscriptVector]:
    """The invalid vectors of one proof set's certificate key in one context: each is an
    honest signature but for one fault."""
    scheme = default_scheme(c.key)
    other_context: Context = "client" if context == "server" else "server"
    base = f"cv-invalid.{label}.{context}"
    bad = VectorExpected(result="invalid", error=ErrorCode.TRANSCRIPT_SIGNATURE_INVALID)
    faults: list[tuple[str, str, Signing]] = [
        ("signature-corrupted", "One bit of the signature is flipped.", Signing(tamper=corrupt)),
        ("wrong-context", f"Signed with the {other_context} context string, presented as a "
         f"{context} CertificateVerify.", Signing(context=other_context)),
        ("transcript-hash-changed", "The stated transcript hash is not the one signed.",
         Signing(stated_hash=b"\xff" * SCHEMES[scheme].hash_length)),
        ("other-key", "Signed by another key than the certificate's.",
         Signing(key=_other_key(c.key, other, seed))),
        ("wrong-length", "The signature is cut by one byte.", Signing(tamper=lambda s: s[:-1])),
    ]
    out = [_vector(seed, f"{base}.{name}", c, context, scheme, comment, (), bad, how)
           for name, comment, how in faults]
    mismatch = PROOF_SETS[label].mismatched_scheme
    out.append(_vector(
        seed, f"{base}.scheme-mismatch", c, context, mismatch,
        f"The scheme {mismatch} does not fit the certificate key.", (),
        VectorExpected(result="invalid", error=ErrorCode.TRANSCRIPT_SCHEME_MISMATCH),
        Signing(scheme=scheme)))
    if KeyKind.of(c.key).rsa_bits:
        out.append(_vector(
            seed, f"{base}.pkcs1", c, context, "rsa_pkcs1_sha256",
            "A valid RSASSA-PKCS1-v1_5 signature: TLS 1.3 forbids PKCS#1 v1.5 for "
            "CertificateVerify (RFC 8446 4.4.3).", (),
            VectorExpected(result="invalid", error=ErrorCode.TRANSCRIPT_SCHEME_FORBIDDEN)))
    return out


def proof_set(seed: bytes, label: str, by_id: dict[str, CertificateInput], context: Context
              ) -> tuple[list[TranscriptVector], list[ProofSet]]:
    """The four proof sets of one key in one context (all valid, then each proof corrupted
    alone), and the two vectors they need beyond the others: a valid CertificateVerify by the
    key of each certificate whose own proof is corrupted."""
    keys = PROOF_SETS[label]
    scheme = default_scheme(by_id[keys.valid].key)
    vectors: list[TranscriptVector] = []
    sets: list[ProofSet] = []
    parts: list[tuple[Literal["certificate", "extension", "transcript"] | None, str, str,
                      ErrorCode | None]] = [
        (None, keys.valid, f"cv.{keys.valid}.{context}", None),
        ("certificate", keys.bad_certificate, f"ps.{label}.{context}.certificate-cv",
         ErrorCode.CERTIFICATE_SIGNATURE_INVALID),
        ("extension", keys.bad_extension, f"ps.{label}.{context}.extension-cv",
         ErrorCode.EXTENSION_SIGNATURE_INVALID),
        ("transcript", keys.valid, f"cv-invalid.{label}.{context}.signature-corrupted",
         ErrorCode.TRANSCRIPT_SIGNATURE_INVALID),
    ]
    for corrupted, cert_id, vector_id, error in parts:
        if corrupted in ("certificate", "extension"):
            vectors.append(_vector(
                seed, vector_id, by_id[cert_id], context, scheme,
                f"A valid {context} CertificateVerify by the key of {cert_id} (whose "
                f"{corrupted} proof is corrupted).", (),
                VectorExpected(result="invalid", error=error)))
        sets.append(ProofSet(
            id=f"ps.{label}.{context}.{corrupted or 'valid'}", sender=context,
            corrupted=corrupted, certificate=cert_id, transcript_vector=vector_id,
            expected=VectorExpected(result="invalid" if error else "valid", error=error)))
    return vectors, sets


def build_vectors(seed: bytes, certs: list[CertificateInput], other_key: PrivateKeyTypes
                  ) -> tuple[list[TranscriptVector], list[ProofSet]]:
    """Every vector and proof set for these certificates (a partial build, ``--only``, gets
    the proof sets whose certificates it has)."""
    vectors: list[TranscriptVector] = []
    for c in certs:
        if c.fixture.expected.error is None:
            vectors += valid_vectors(seed, c)
    by_id = {c.fixture.id: c for c in certs}
    sets: list[ProofSet] = []
    for label, keys in PROOF_SETS.items():
        if not {keys.valid, keys.bad_certificate, keys.bad_extension} <= set(by_id):
            continue
        for context in CONTEXTS:
            vectors += fault_vectors(seed, label, by_id[keys.valid], context, other_key)
            more, these = proof_set(seed, label, by_id, context)
            vectors += more
            sets += these
    return vectors, sets


def load_key(pem: bytes) -> PrivateKeyTypes:
    return serialization.load_pem_private_key(pem, None, unsafe_skip_rsa_key_validation=True)
