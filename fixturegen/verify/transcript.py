"""The TLS 1.3 CertificateVerify check (RFC 8446 4.4.3), after the certificate checks.

A certificate shared by many vectors is parsed, hashed and verified once (its verdict and key
are cached by its bytes); each further vector costs exactly one signature verification.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes

from fixturegen.verify.codes import ErrorCode
from fixturegen.verify.der import MAX_CERTIFICATE_BYTES
from fixturegen.verify.inputs import InputError, confined, read_bounded
from fixturegen.verify.jsonfile import load_json
from fixturegen.verify.manifest_check import Disagreement, ManifestError
from fixturegen.verify.verifier import Verdict, Verifier

_CONTEXT = {"server": b"TLS 1.3, server CertificateVerify",
            "client": b"TLS 1.3, client CertificateVerify"}
_H: dict[str, type[hashes.SHA256 | hashes.SHA384 | hashes.SHA512]] = {
    "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512,
}
#: scheme -> (code point, required key, hash)
_SCHEMES: dict[str, tuple[int, str, str | None]] = {
    "ecdsa_secp256r1_sha256": (0x0403, "secp256r1", "sha256"),
    "ecdsa_secp384r1_sha384": (0x0503, "secp384r1", "sha384"),
    "ecdsa_secp521r1_sha512": (0x0603, "secp521r1", "sha512"),
    "ed25519": (0x0807, "ed25519", None),
    "ed448": (0x0808, "ed448", None),
    "rsa_pss_rsae_sha256": (0x0804, "rsa", "sha256"),
    "rsa_pss_rsae_sha384": (0x0805, "rsa", "sha384"),
    "rsa_pss_rsae_sha512": (0x0806, "rsa", "sha512"),
}
_FORBIDDEN = {"rsa_pkcs1_sha256": 0x0401, "rsa_pkcs1_sha384": 0x0501, "rsa_pkcs1_sha512": 0x0601,
              "rsa_pkcs1_sha1": 0x0201, "ecdsa_sha1": 0x0203, "rsa_pss_pss_sha256": 0x0809,
              "rsa_pss_pss_sha384": 0x080A, "rsa_pss_pss_sha512": 0x080B}


@dataclass
class TranscriptVerdict:
    accepted: bool
    error: ErrorCode | None
    detail: str
    #: Signature verifications this call performed (certificate proofs included when new).
    signature_verifications: int


def _key_name(key: PublicKeyTypes) -> str:
    if isinstance(key, rsa.RSAPublicKey):
        return "rsa"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return key.curve.name
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "ed25519"
    return "ed448" if isinstance(key, ed448.Ed448PublicKey) else type(key).__name__


class TranscriptChecker:
    def __init__(self, verifier: Verifier | None = None) -> None:
        self.verifier = verifier or Verifier()
        self._certs: dict[bytes, Verdict] = {}

    def certificate(self, der: bytes) -> tuple[Verdict, int]:
        """The certificate's verdict, and the signature checks this call made (0 if cached)."""
        cached = self._certs.get(der)
        if cached is not None:
            return cached, 0
        verdict = self.verifier.verify([der])
        self._certs[der] = verdict
        return verdict, verdict.signature_verifications

    def verify(self, der: bytes, context: str, scheme: str, code_point: int,
               transcript_hash: bytes, signature: bytes, signed_content: bytes | None = None
               ) -> TranscriptVerdict:
        cert, sigs = self.certificate(der)
        if not cert.accepted:
            return TranscriptVerdict(False, cert.error, f"certificate: {cert.detail}", sigs)
        key = cert.certificate_key
        assert key is not None
        if context not in _CONTEXT:
            return TranscriptVerdict(False, ErrorCode.TRANSCRIPT_MALFORMED,
                                     f"context {context!r}", sigs)
        content = b"\x20" * 64 + _CONTEXT[context] + b"\x00" + transcript_hash
        if signed_content is not None and signed_content != content:
            return TranscriptVerdict(False, ErrorCode.TRANSCRIPT_MALFORMED,
                                     "signed_content is not built from context and hash", sigs)
        if scheme in _FORBIDDEN:
            ok = _FORBIDDEN[scheme] == code_point
            return TranscriptVerdict(False, ErrorCode.TRANSCRIPT_SCHEME_FORBIDDEN if ok else
                                     ErrorCode.TRANSCRIPT_MALFORMED,
                                     f"{scheme} is not allowed for a TLS 1.3 CertificateVerify",
                                     sigs)
        if scheme not in _SCHEMES or _SCHEMES[scheme][0] != code_point:
            return TranscriptVerdict(False, ErrorCode.TRANSCRIPT_MALFORMED,
                                     f"unknown scheme {scheme!r} / code point {code_point:#06x}",
                                     sigs)
        _, want, h = _SCHEMES[scheme]
        if _key_name(key) != want:
            return TranscriptVerdict(False, ErrorCode.TRANSCRIPT_SCHEME_MISMATCH,
                                     f"{scheme} with a {_key_name(key)} certificate key", sigs)
        sigs += 1
        try:
            if isinstance(key, rsa.RSAPublicKey):
                assert h
                key.verify(signature, content, padding.PSS(padding.MGF1(_H[h]()),
                                                           _H[h]().digest_size), _H[h]())
            elif isinstance(key, ec.EllipticCurvePublicKey):
                assert h
                key.verify(signature, content, ec.ECDSA(_H[h]()))
            elif isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
                key.verify(signature, content)
        except (InvalidSignature, ValueError):
            return TranscriptVerdict(False, ErrorCode.TRANSCRIPT_SIGNATURE_INVALID,
                                     f"the {scheme} CertificateVerify does not verify", sigs)
        return TranscriptVerdict(True, None, "all checks passed", sigs)


def check_transcripts(path: Path, checker: TranscriptChecker | None = None
                      ) -> tuple[list[Disagreement], int]:
    """Every vector and proof set of a transcripts file against its expectation."""
    try:
        data = load_json(path, "transcripts", "transcripts file")
        vectors, proof_sets = data["vectors"], data["proof_sets"]
    except InputError as exc:
        raise ManifestError(str(exc)) from None
    except (KeyError, TypeError) as exc:
        raise ManifestError(f"{path} is not a transcripts file: no {exc}") from None
    checker = checker or TranscriptChecker()
    files: dict[str, bytes] = {}
    results: dict[str, tuple[str, str | None]] = {}
    problems: list[Disagreement] = []
    for v in vectors:
        try:
            # One read per file, however its path is spelled; a vector's certificate is DER.
            where = confined(path.parent, v["certificate_path"])
            if str(where) not in files:
                files[str(where)] = read_bounded(where, MAX_CERTIFICATE_BYTES)
            verdict = checker.verify(
                files[str(where)], v["context"], v["signature_scheme"], int(v["code_point"]),
                bytes.fromhex(v["transcript_hash"]), bytes.fromhex(v["signature"]),
                bytes.fromhex(v["signed_content"]))
            want = v["expected"]["error"]
        except InputError as exc:
            problems.append(Disagreement(str(v.get("id")), "file", "readable", str(exc)))
            continue
        except (KeyError, TypeError, ValueError) as exc:
            raise ManifestError(f"{path}: a vector is incomplete: {exc}") from None
        results[v["id"]] = (v["certificate"], verdict.error)
        if verdict.error != want:
            problems.append(Disagreement(v["id"], "error", str(want), str(verdict.error)))
    for s in proof_sets:
        try:
            cert, got = results[s["transcript_vector"]]
            want = s["expected"]["error"]
        except (KeyError, TypeError):
            problems.append(Disagreement(str(s.get("id")), "transcript_vector", "a vector",
                                         "missing"))
            continue
        if cert != s["certificate"]:
            problems.append(Disagreement(s["id"], "certificate", s["certificate"], cert))
        if got != want:
            problems.append(Disagreement(s["id"], "error", str(want), str(got)))
    return problems, len(vectors) + len(proof_sets)


def scheme_name(code_point: int) -> str:
    """The RFC 8446 name of a SignatureScheme code point (``unknown_0x....`` if none)."""
    for name, (point, _, _) in _SCHEMES.items():
        if point == code_point:
            return name
    for name, point in _FORBIDDEN.items():
        if point == code_point:
            return name
    return f"unknown_{code_point:#06x}"


def transcript_hash_of(context: str, signed_content: bytes) -> bytes:
    """The transcript hash inside an RFC 8446 4.4.3 signed content (empty if malformed)."""
    prefix = b"\x20" * 64 + _CONTEXT.get(context, b"?") + b"\x00"
    return signed_content[len(prefix):] if signed_content.startswith(prefix) else b""
