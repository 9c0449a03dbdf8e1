"""TLS 1.3 CertificateVerify vectors (RFC 8446 4.4.3): the third proof of a libp2p handshake.

For every certificate the reference verifier accepts, a valid vector per context (server,
client), signed with the certificate key under the TLS scheme that key uses for
CertificateVerify (RSA keys: rsa_pss_rsae_sha256, plus the certificate's own PSS scheme when it
has one). For the certificate keys of the proof sets, one invalid vector per fault. Handshake
proof sets tie a certificate to a vector, with exactly one of the three proofs corrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from fixturegen.cases.mutate import corrupt
from fixturegen.certs.pss import sign_pss
from fixturegen.keys.derive import stream
from fixturegen.output.manifest import Fixture
from fixturegen.output.transcripts import ProofSet, TranscriptVector, VectorExpected

CONTEXTS = {"server": b"TLS 1.3, server CertificateVerify",
            "client": b"TLS 1.3, client CertificateVerify"}
#: TLS SignatureScheme -> (code point, key kind family, hash, transcript hash length)
CV_SCHEMES: dict[str, tuple[int, str, str | None, int]] = {
    "ecdsa_secp256r1_sha256": (0x0403, "p256", "sha256", 32),
    "ecdsa_secp384r1_sha384": (0x0503, "p384", "sha384", 48),
    "ecdsa_secp521r1_sha512": (0x0603, "p521", "sha512", 64),
    "ed25519": (0x0807, "ed25519", None, 32),
    "ed448": (0x0808, "ed448", None, 64),
    "rsa_pss_rsae_sha256": (0x0804, "rsa", "sha256", 32),
    "rsa_pss_rsae_sha384": (0x0805, "rsa", "sha384", 48),
    "rsa_pss_rsae_sha512": (0x0806, "rsa", "sha512", 64),
    "rsa_pkcs1_sha256": (0x0401, "rsa", "sha256", 32),
}
_HASHES: dict[str, type[hashes.SHA256 | hashes.SHA384 | hashes.SHA512]] = {
    "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512,
}
#: The certificates of the proof sets: key type -> (valid, corrupted self-signature,
#: corrupted extension signature) fixture ids.
PROOF_SET_CERTIFICATES = {
    "p256": ("matrix.ecdsa_secp256r1_sha256.ed25519.fixed",
             "invalid.self-signature-corrupted.ecdsa_secp256r1_sha256",
             "invalid.extension-signature-corrupted.ed25519"),
    "p384": ("matrix.ecdsa_secp384r1_sha384.ed25519.fixed",
             "invalid.self-signature-corrupted.ecdsa_secp384r1_sha384",
             "invalid.extension-signature-corrupted.cert-ecdsa_secp384r1_sha384"),
    "ed25519": ("matrix.ed25519.ed25519.fixed", "invalid.self-signature-corrupted.ed25519",
                "invalid.extension-signature-corrupted.cert-ed25519"),
    "rsa-pss": ("matrix.rsa_pss_rsae_sha256.ed25519.fixed",
                "invalid.self-signature-corrupted.rsa_pss_rsae_sha256",
                "invalid.extension-signature-corrupted.cert-rsa_pss_rsae_sha256"),
}
NOTES = {
    "cv-scheme-differs-from-certificate": (
        "The CertificateVerify scheme (rsa_pss_rsae_sha256 for an RSA key) differs from the "
        "scheme that signed the certificate. RFC 8446 allows it; some implementations require "
        "the two to be equal, so the vector is acceptable rather than valid."
    ),
    "cv-scheme-equals-certificate": (
        "The CertificateVerify scheme is the certificate's own signature scheme."
    ),
}


def key_family(key: PrivateKeyTypes) -> str:
    if isinstance(key, rsa.RSAPrivateKey):
        return "rsa"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp256r1": "p256", "secp384r1": "p384", "secp521r1": "p521"}.get(
            key.curve.name, key.curve.name)
    return "ed25519" if isinstance(key, ed25519.Ed25519PrivateKey) else "ed448"


def signed_content(context: str, transcript_hash: bytes) -> bytes:
    return b"\x20" * 64 + CONTEXTS[context] + b"\x00" + transcript_hash


def sign_cv(key: PrivateKeyTypes, scheme: str, content: bytes, salt: bytes) -> bytes:
    _, _, h, _ = CV_SCHEMES[scheme]
    if isinstance(key, rsa.RSAPrivateKey):
        assert h
        if scheme.startswith("rsa_pkcs1"):
            return key.sign(content, padding.PKCS1v15(), _HASHES[h]())
        return sign_pss(key, content, h, salt[: _HASHES[h]().digest_size])
    if isinstance(key, ec.EllipticCurvePrivateKey):
        assert h
        return key.sign(content, ec.ECDSA(_HASHES[h](), deterministic_signing=True))
    assert isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey)
    return key.sign(content)


@dataclass(frozen=True)
class CertificateInput:
    fixture: Fixture
    key: PrivateKeyTypes


def _vector(seed: bytes, vid: str, cert: CertificateInput, context: str, scheme: str,
            comment: str, flags: tuple[str, ...], expected: VectorExpected, *,
            sign_key: PrivateKeyTypes | None = None, sign_context: str | None = None,
            sign_scheme: str | None = None, tamper: Callable[[bytes], bytes] | None = None,
            stated_hash: bytes | None = None) -> TranscriptVector:
    code, _, _, hash_len = CV_SCHEMES[scheme]
    th = stream(seed, vid, "transcript-hash", hash_len)
    salt = stream(seed, vid, "cv-pss-salt", 64)
    sig = sign_cv(sign_key or cert.key, sign_scheme or scheme,
                  signed_content(sign_context or context, th), salt)
    if tamper:
        sig = tamper(sig)
    th = stated_hash if stated_hash is not None else th
    return TranscriptVector(
        id=vid, certificate=cert.fixture.id, certificate_path=cert.fixture.path,
        context=context,  # type: ignore[arg-type]
        signature_scheme=scheme, code_point=code, transcript_hash=th.hex(),
        signed_content=signed_content(context, th).hex(), signature=sig.hex(),
        comment=comment, flags=list(flags), expected=expected)


def default_scheme(key: PrivateKeyTypes) -> str:
    return {"p256": "ecdsa_secp256r1_sha256", "p384": "ecdsa_secp384r1_sha384",
            "p521": "ecdsa_secp521r1_sha512", "ed25519": "ed25519", "ed448": "ed448",
            "rsa": "rsa_pss_rsae_sha256"}[key_family(key)]


def build_vectors(seed: bytes, certs: list[CertificateInput], other_key: PrivateKeyTypes
                  ) -> tuple[list[TranscriptVector], list[ProofSet]]:
    vectors: list[TranscriptVector] = []
    by_id = {c.fixture.id: c for c in certs}
    for c in certs:
        f = c.fixture
        if f.expected.error is not None:
            continue
        own = f.certificate.signature_scheme
        schemes = [default_scheme(c.key)]
        if own.startswith("rsa_pss_rsae_") and own not in schemes:
            schemes.append(own)
        for context in CONTEXTS:
            for scheme in schemes:
                differs = scheme != own
                flags = ("cv-scheme-differs-from-certificate",) if differs else (
                    "cv-scheme-equals-certificate",)
                result = "acceptable" if differs or f.expected.result == "acceptable" else "valid"
                suffix = "" if scheme == schemes[0] else f".{scheme}"
                vectors.append(_vector(
                    seed, f"cv.{f.id}.{context}{suffix}", c, context, scheme,
                    f"A valid {context} CertificateVerify with {scheme}.",
                    (*flags, *f.flags), VectorExpected(result=result, error=None)))  # type: ignore[arg-type]
    proof_sets: list[ProofSet] = []
    for label, (valid_id, bad_cert_id, bad_ext_id) in PROOF_SET_CERTIFICATES.items():
        if not {valid_id, bad_cert_id, bad_ext_id} <= set(by_id):
            continue  # a partial build (--only) without this set's certificates
        c = by_id[valid_id]
        scheme = default_scheme(c.key)
        bad = VectorExpected(result="invalid", error="transcript_signature_invalid")
        for context in CONTEXTS:
            other_context = "client" if context == "server" else "server"
            base = f"cv-invalid.{label}.{context}"
            faults = [
                ("signature-corrupted", "One bit of the signature is flipped.", bad,
                 {"tamper": corrupt}),
                ("wrong-context", f"Signed with the {other_context} context string, presented "
                 f"as a {context} CertificateVerify.", bad, {"sign_context": other_context}),
                ("transcript-hash-changed", "The stated transcript hash is not the one signed.",
                 bad, {"stated_hash": b"\xff" * CV_SCHEMES[scheme][3]}),
                ("other-key", "Signed by another key than the certificate's.", bad,
                 {"sign_key": other_key}),
                ("wrong-length", "The signature is cut by one byte.", bad,
                 {"tamper": lambda s: s[:-1]}),
            ]
            for name, comment, expected, kw in faults:
                if name == "other-key" and key_family(other_key) != key_family(c.key):
                    kw = {"sign_key": _other_of(c.key, seed)}
                vectors.append(_vector(seed, f"{base}.{name}", c, context, scheme, comment, (),
                                       expected, **kw))  # type: ignore[arg-type]
            mismatch = {"p256": "ecdsa_secp384r1_sha384", "p384": "ecdsa_secp256r1_sha256",
                        "ed25519": "ed448", "rsa-pss": "ecdsa_secp256r1_sha256"}[label]
            vectors.append(_vector(
                seed, f"{base}.scheme-mismatch", c, context, mismatch,
                f"The scheme {mismatch} does not fit the certificate key.", (),
                VectorExpected(result="invalid", error="transcript_scheme_mismatch"),
                sign_scheme=scheme))
            if label == "rsa-pss":
                vectors.append(_vector(
                    seed, f"{base}.pkcs1", c, context, "rsa_pkcs1_sha256",
                    "A valid RSASSA-PKCS1-v1_5 signature: TLS 1.3 forbids PKCS#1 v1.5 for "
                    "CertificateVerify (RFC 8446 4.4.3).", (),
                    VectorExpected(result="invalid", error="transcript_scheme_forbidden")))
            # proof sets: the valid set, and one per corrupted proof
            sets = [(None, valid_id, f"cv.{valid_id}.{context}", None),
                    ("certificate", bad_cert_id, f"ps.{label}.{context}.certificate-cv",
                     "certificate_signature_invalid"),
                    ("extension", bad_ext_id, f"ps.{label}.{context}.extension-cv",
                     "extension_signature_invalid"),
                    ("transcript", valid_id, f"{base}.signature-corrupted",
                     "transcript_signature_invalid")]
            for corrupted, cert_id, vector_id, error in sets:
                if corrupted in ("certificate", "extension"):
                    vectors.append(_vector(
                        seed, vector_id, by_id[cert_id], context, scheme,
                        f"A valid {context} CertificateVerify by the key of {cert_id} (whose "
                        f"{corrupted} proof is corrupted).", (),
                        VectorExpected(result="invalid", error=error)))
                proof_sets.append(ProofSet(
                    id=f"ps.{label}.{context}.{corrupted or 'valid'}",
                    sender=context,  # type: ignore[arg-type]
                    corrupted=corrupted,  # type: ignore[arg-type]
                    certificate=cert_id, transcript_vector=vector_id,
                    expected=VectorExpected(result="invalid" if error else "valid", error=error)))
    return vectors, proof_sets


def _other_of(key: PrivateKeyTypes, seed: bytes) -> PrivateKeyTypes:
    from fixturegen.keys.derive import derive_private_key

    kind = {"p256": "p256", "p384": "p384", "p521": "p521", "ed25519": "ed25519",
            "ed448": "ed448", "rsa": "rsa-2048"}[key_family(key)]
    return derive_private_key(kind, seed, "transcripts/other-key")


def load_key(pem: bytes) -> PrivateKeyTypes:
    return serialization.load_pem_private_key(pem, None, unsafe_skip_rsa_key_validation=True)
