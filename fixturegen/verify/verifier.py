"""The reference verifier: strict libp2p TLS certificate verification (tls.md).

One :class:`Verifier` holds caches of decoded public keys (many fixtures share a certificate
key or a host key). :meth:`Verifier.verify` runs the checks of ``codes.Check`` in order
and stops at the first that fails; each proof (self-signature, extension signature) is checked
at most once per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import NoReturn

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_der_public_key,
)

from fixturegen.verify.codes import Check, ErrorCode, Flag
from fixturegen.verify.der import (
    MAX_CERTIFICATE_BYTES,
    MAX_CHAIN_CERTIFICATES,
    DERError,
    elements,
    expect,
    integer,
    oid_text,
    tlv,
)
from fixturegen.verify.identity import (
    ED25519_SMALL_ORDER,
    MAX_RSA_HOST_KEY_BITS,
    TYPE_NAMES,
    HostKeyMalformed,
    HostKeyUnsupported,
    check_ed25519_encoding,
    decode_public_key,
    peer_id,
    peer_id_forms,
)
from fixturegen.verify.x509 import LIBP2P_OID, Memo, ParsedCertificate, parse_certificate

PREFIX = b"libp2p-tls-handshake:"
#: The host signature's algorithms (made once: they hold no state).
_ECDSA_SHA256 = ec.ECDSA(hashes.SHA256())
_PKCS1_SHA256 = (padding.PKCS1v15(), hashes.SHA256())
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
#: Critical extensions the verifier understands (and so does not reject for being critical).
EXTENDED_KEY_USAGE = "2.5.29.37"
SERVER_AUTH = "1.3.6.1.5.5.7.3.1"
ANY_EXTENDED_KEY_USAGE = "2.5.29.37.0"
UNDERSTOOD_CRITICAL = {
    "2.5.29.19": "basicConstraints",
    "2.5.29.15": "keyUsage",
    "2.5.29.37": "extKeyUsage",
    "2.5.29.17": "subjectAltName",  # RFC 5280 4.2.1.6: critical when the subject is empty
}

_HASH: dict[str, type[hashes.SHA256 | hashes.SHA384 | hashes.SHA512]] = {
    "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512,
}
_HASH_OID = {
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
}
_HASH_LEN = {"sha256": 32, "sha384": 48, "sha512": 64}
_PKCS1 = {
    "1.2.840.113549.1.1.11": "sha256",
    "1.2.840.113549.1.1.12": "sha384",
    "1.2.840.113549.1.1.13": "sha512",
}
_WEAK = {
    "1.2.840.113549.1.1.4": "md5WithRSAEncryption",
    "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
    "1.2.840.10045.4.1": "ecdsa-with-SHA1",
    "1.2.840.10040.4.3": "dsa-with-sha1",
}
_ECDSA = {"1.2.840.10045.4.3.2": "sha256", "1.2.840.10045.4.3.3": "sha384",
          "1.2.840.10045.4.3.4": "sha512"}
_CURVE_SCHEME = {"secp256r1": ("sha256", "ecdsa_secp256r1_sha256"),
                 "secp384r1": ("sha384", "ecdsa_secp384r1_sha384"),
                 "secp521r1": ("sha512", "ecdsa_secp521r1_sha512")}
PSS_OID = "1.2.840.113549.1.1.10"
#: The AlgorithmIdentifiers of an RSA SubjectPublicKeyInfo: rsaEncryption (NULL parameters),
#: and id-RSASSA-PSS without parameters (RFC 4055: a key for RSASSA-PSS, any hash).
_RSA_ENCRYPTION_ID = bytes.fromhex("300d06092a864886f70d0101010500")
_RSA_PSS_KEY_ID = bytes.fromhex("300b06092a864886f70d01010a")
MGF1_OID = "1.2.840.113549.1.1.8"
ED25519_OID = "1.3.101.112"
ED448_OID = "1.3.101.113"


class Reject(Exception):
    def __init__(self, code: ErrorCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class _Failed:
    """A failure kept in a cache and raised anew on each use. (An exception object kept in a
    cache would keep alive the frames of its raise, and through them whatever the caller had
    in hand: in a long fuzzing run, every batch of mutants.)"""

    kind: type[Exception]
    message: str
    code: ErrorCode | None = None  # for a Reject

    def throw(self) -> NoReturn:
        if self.code is not None:
            raise Reject(self.code, self.message)
        raise self.kind(self.message)


@dataclass
class Verdict:
    accepted: bool
    error: ErrorCode | None
    detail: str
    peer_id: str | None = None
    #: The host key's protobuf, once decoded (the CID form is derived from it on demand).
    public_key_protobuf: bytes | None = None
    host_key_type: str | None = None
    signature_scheme: str | None = None
    validation_time: str = ""
    checks: list[Check] = field(default_factory=list)
    signature_verifications: int = 0
    flags: list[Flag] = field(default_factory=list)
    #: The certificate's public key once decoded (for the CertificateVerify check).
    certificate_key: PublicKeyTypes | None = field(default=None, repr=False)

    @property
    def peer_id_cid(self) -> str | None:
        if self.public_key_protobuf is None:
            return None
        return peer_id_forms(self.public_key_protobuf)[1]

    def to_json(self) -> dict[str, object]:
        return {
            "result": "accept" if self.accepted else "reject",
            "error": self.error,
            "detail": self.detail,
            "peer_id": self.peer_id,
            "peer_id_cid": self.peer_id_cid,
            "host_key_type": self.host_key_type,
            "signature_scheme": self.signature_scheme,
            "validation_time": self.validation_time,
            "checks": self.checks,
            "signature_verifications": self.signature_verifications,
            "flags": self.flags,
        }


@dataclass(slots=True)
class _Scheme:
    name: str
    verify_args: tuple[object, ...]


class _Run:
    """The state of one verification: the checks passed so far and the proofs counted."""

    __slots__ = ("checks", "flags", "sigs")

    def __init__(self) -> None:
        self.checks: list[Check] = []
        self.flags: list[Flag] = []
        self.sigs = 0


class Verifier:
    def __init__(self, cache_size: int = 4096) -> None:
        self._keys: dict[bytes, PublicKeyTypes | _Failed] = {}
        #: host key protobuf -> (type name, key, PeerId), or why it does not decode
        self._host: dict[bytes, tuple[str, PublicKeyTypes, str] | _Failed] = {}
        self._cache_size = cache_size
        #: Sub-structures of certificates already proven well-formed (keyed by kind and bytes).
        self._memo = Memo(2 * cache_size)
        self._schemes: dict[tuple[bytes, tuple[object, ...]], tuple[_Scheme | _Failed, list[Flag]]
                            ] = {}

    # -- key decoding, each distinct key once -------------------------------------------------
    def _spki_key(self, spki: bytes) -> PublicKeyTypes:
        cached = self._keys.get(spki)
        if cached is None:
            try:
                # An RSASSA-PSS key is the same RSAPublicKey under another identifier: read
                # (and compare) it as rsaEncryption; _pss_only says what it may sign.
                plain = _as_rsa_encryption(spki) if _pss_only(spki) else spki
                key = load_der_public_key(plain)
                if key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo) != plain:
                    raise ValueError("not the canonical DER of this key")
                cached = key
            except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
                cached = _Failed(ValueError, f"the public key does not decode: {exc}")
            if len(self._keys) >= self._cache_size:
                self._keys.clear()
            self._keys[spki] = cached
        if isinstance(cached, _Failed):
            cached.throw()
        return cached

    def _host_key(self, pb: bytes) -> tuple[str, PublicKeyTypes, str]:
        cached = self._host.get(pb)
        if cached is None:
            try:
                cached = (*self._decode_host_key(pb), peer_id(pb))
            except (HostKeyMalformed, HostKeyUnsupported) as exc:
                cached = _Failed(type(exc), str(exc))
            if len(self._host) >= self._cache_size:
                self._host.clear()
            self._host[pb] = cached
        if isinstance(cached, _Failed):
            cached.throw()
        return cached

    def _decode_host_key(self, pb: bytes) -> tuple[str, PublicKeyTypes]:
        key_type, data = decode_public_key(pb)
        name = TYPE_NAMES[key_type]
        key: PublicKeyTypes
        try:
            if name == "Ed25519":
                if len(data) != 32:
                    raise HostKeyMalformed(f"Ed25519 key data of {len(data)} bytes, not 32")
                check_ed25519_encoding(data)
                key = ed25519.Ed25519PublicKey.from_public_bytes(data)
            elif name == "Secp256k1":
                if len(data) != 33 or data[0] not in (2, 3):
                    raise HostKeyMalformed("Secp256k1 key data is not a 33-byte compressed point")
                key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), data)
            else:
                if _names_pss(data):  # a host key signs PKCS#1 v1.5 (RSA) or ECDSA
                    raise HostKeyMalformed(f"{name} key data is an RSASSA-PSS key")
                key = self._spki_key(data)
                if name == "RSA" and not isinstance(key, rsa.RSAPublicKey):
                    raise HostKeyMalformed("RSA key data is not an RSA SubjectPublicKeyInfo")
                if name == "ECDSA" and not isinstance(key, ec.EllipticCurvePublicKey):
                    raise HostKeyMalformed("ECDSA key data is not an EC SubjectPublicKeyInfo")
        except HostKeyMalformed:
            raise
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise HostKeyMalformed(f"{name} key data does not decode: {exc}") from exc
        return name, key

    # -- the checks -----------------------------------------------------------------------------
    def verify(
        self,
        certificates: Sequence[bytes],
        *,
        expect_peer_id: str | None = None,
        at: datetime | None = None,
    ) -> Verdict:
        at = at or datetime.now(UTC)
        now = int(at.timestamp())
        run = _Run()
        verdict = Verdict(False, None, "", validation_time=at.astimezone(UTC).isoformat())
        try:
            self._checks(certificates, expect_peer_id, now, run, verdict)
            verdict.accepted = True
            verdict.detail = "all checks passed"
        except Reject as r:
            verdict.error = r.code
            verdict.detail = r.detail
        verdict.checks = run.checks
        verdict.flags = run.flags
        verdict.signature_verifications = run.sigs
        return verdict

    def _checks(self, certificates: Sequence[bytes], expect_peer_id: str | None, now: int,
                run: _Run, verdict: Verdict) -> None:
        checks = run.checks
        checks.append(Check.STRUCTURE)
        if not certificates:
            raise Reject(ErrorCode.MALFORMED_CERTIFICATE, "no certificate presented")
        if len(certificates) > MAX_CHAIN_CERTIFICATES:
            raise Reject(ErrorCode.MALFORMED_CERTIFICATE,
                         f"{len(certificates)} certificates presented "
                         f"(limit {MAX_CHAIN_CERTIFICATES})")
        if len(certificates[0]) > MAX_CERTIFICATE_BYTES:
            raise Reject(ErrorCode.MALFORMED_CERTIFICATE,
                         f"certificate of {len(certificates[0])} bytes "
                         f"(limit {MAX_CERTIFICATE_BYTES})")
        try:
            cert = parse_certificate(certificates[0], self._memo)
            # A curve spelled out (specifiedCurve) is well-formed DER that cryptography does not
            # load: judged at the signature scheme, where it fails (no TLS 1.3 scheme names it).
            explicit = _explicit_ec_parameters(cert.spki)
            key = None if explicit else self._spki_key(cert.spki)
        except (DERError, ValueError, TypeError) as exc:
            raise Reject(ErrorCode.MALFORMED_CERTIFICATE, str(exc)) from None
        verdict.certificate_key = key
        checks.append(Check.CHAIN_LENGTH)
        if len(certificates) != 1:
            raise Reject(ErrorCode.CHAIN_LENGTH,
                         f"{len(certificates)} certificates presented, not 1")
        checks.append(Check.VALIDITY)
        if cert.generalized_time_before_2050:
            _flag(run, Flag.GENERALIZED_TIME_BEFORE_2050)
        if now < cert.not_before:
            raise Reject(ErrorCode.NOT_YET_VALID,
                         f"notBefore {_iso(cert.not_before)} is in the future")
        if now > cert.not_after:
            raise Reject(ErrorCode.EXPIRED, f"notAfter {_iso(cert.not_after)} has passed")
        checks.append(Check.SIGNATURE_SCHEME)
        if key is None:
            _flag(run, Flag.EC_EXPLICIT_PARAMETERS)
            raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                         "the certificate key's curve is given by explicit parameters, not "
                         "named: no TLS 1.3 signature scheme names it")
        scheme = self._scheme(cert.signature_algorithm, key, run, _pss_only(cert.spki))
        verdict.signature_scheme = scheme.name
        checks.append(Check.SIGNATURE_ALGORITHM_MATCH)
        if cert.tbs_signature_algorithm != cert.signature_algorithm:
            raise Reject(ErrorCode.SIGNATURE_ALGORITHM_MISMATCH,
                         "tbsCertificate.signature differs from signatureAlgorithm")
        checks.append(Check.SELF_SIGNATURE)
        run.sigs += 1
        try:
            key.verify(cert.signature, cert.tbs, *scheme.verify_args)  # type: ignore[arg-type, union-attr]
        except (InvalidSignature, ValueError):
            raise Reject(ErrorCode.CERTIFICATE_SIGNATURE_INVALID,
                         f"the {scheme.name} self-signature does not verify") from None
        self._name_flags(cert, run)
        checks.append(Check.CRITICAL_EXTENSIONS)
        for ext in cert.extensions:
            if ext.critical and ext.oid != LIBP2P_OID:
                if ext.oid not in UNDERSTOOD_CRITICAL:
                    raise Reject(ErrorCode.UNKNOWN_CRITICAL_EXTENSION,
                                 f"critical extension {ext.oid} is not understood")
                _flag(run, Flag.CRITICAL_KNOWN_EXTENSION)
        checks.append(Check.EXTENSION_PRESENT)
        found = [e for e in cert.extensions if e.oid == LIBP2P_OID]
        if not found:
            raise Reject(ErrorCode.EXTENSION_MISSING, "no libp2p Public Key Extension")
        checks.append(Check.EXTENSION_UNIQUE)
        if len(found) > 1:
            raise Reject(ErrorCode.EXTENSION_DUPLICATE,
                         f"the libp2p extension appears {len(found)} times")
        if found[0].critical:
            _flag(run, Flag.CRITICAL_LIBP2P_EXTENSION)
        checks.append(Check.SIGNED_KEY)
        public_key_pb, host_signature = _signed_key(found[0].value)
        checks.append(Check.HOST_KEY)
        try:
            host_type, host_key, verdict.peer_id = self._host_key(public_key_pb)
        except HostKeyUnsupported as exc:
            raise Reject(ErrorCode.HOST_KEY_UNSUPPORTED, str(exc)) from None
        except HostKeyMalformed as exc:
            raise Reject(ErrorCode.HOST_KEY_MALFORMED, str(exc)) from None
        verdict.host_key_type = host_type
        verdict.public_key_protobuf = public_key_pb
        if isinstance(host_key, rsa.RSAPublicKey) and not 2048 <= host_key.key_size <= 8192:
            _flag(run, Flag.RSA_HOST_KEY_SIZE)
            if host_key.key_size > MAX_RSA_HOST_KEY_BITS:
                raise Reject(ErrorCode.HOST_KEY_UNSUPPORTED,
                             f"RSA-{host_key.key_size} host key: over the {MAX_RSA_HOST_KEY_BITS} "
                             "bits the reference verifier computes with (OpenSSL's limit)")
        if host_type == "Ed25519" and public_key_pb[-32:] in ED25519_SMALL_ORDER:
            _flag(run, Flag.ED25519_SMALL_ORDER_KEY)
        checks.append(Check.EXTENSION_SIGNATURE)
        run.sigs += 1
        message = PREFIX + cert.spki
        try:
            if isinstance(host_key, ed25519.Ed25519PublicKey):
                host_key.verify(host_signature, message)
            elif isinstance(host_key, ec.EllipticCurvePublicKey):
                host_key.verify(host_signature, message, _ECDSA_SHA256)
                if host_type == "Secp256k1" and _high_s(host_signature):
                    _flag(run, Flag.HIGH_S_HOST_SIGNATURE)
            elif isinstance(host_key, rsa.RSAPublicKey):
                host_key.verify(host_signature, message, *_PKCS1_SHA256)
            else:  # pragma: no cover - _decode_host_key returns only these types
                raise InvalidSignature
        except (InvalidSignature, ValueError):
            raise Reject(ErrorCode.EXTENSION_SIGNATURE_INVALID,
                         f"the {host_type} host key's signature does not verify") from None
        if expect_peer_id is not None:
            checks.append(Check.PEER_ID)
            if expect_peer_id != verdict.peer_id and expect_peer_id != verdict.peer_id_cid:
                raise Reject(ErrorCode.PEER_ID_MISMATCH,
                             f"expected {expect_peer_id}, the certificate is {verdict.peer_id}")

    def _scheme(self, algorithm: bytes, key: PublicKeyTypes, run: _Run, pss_only: bool = False
                ) -> _Scheme:
        """The scheme of (algorithm, key shape), classified once per distinct pair."""
        if isinstance(key, rsa.RSAPublicKey):
            shape: tuple[object, ...] = ("rsa", key.key_size, pss_only)
        elif isinstance(key, ec.EllipticCurvePublicKey):
            shape = ("ec", key.curve.name)
        else:
            shape = (type(key),)
        memo = self._schemes.get((algorithm, shape))
        if memo is None:
            probe = _Run()
            try:
                memo = (self._classify(algorithm, key, probe, pss_only), probe.flags)
            except Reject as r:
                memo = (_Failed(Reject, r.detail, r.code), probe.flags)
            if len(self._schemes) >= self._cache_size:
                self._schemes.clear()
            self._schemes[(algorithm, shape)] = memo
        result, flags = memo
        for f in flags:
            _flag(run, f)
        if isinstance(result, _Failed):
            result.throw()
        return result

    def _classify(self, algorithm: bytes, key: PublicKeyTypes, run: _Run,
                  pss_only: bool = False) -> _Scheme:
        s, e = expect(algorithm, 0, len(algorithm), 0x30, "AlgorithmIdentifier")
        parts = elements(algorithm, s, e)
        oid = oid_text(algorithm, parts[0][2], parts[0][3])
        params = algorithm[parts[1][1] : parts[1][3]] if len(parts) == 2 else None
        if oid in _WEAK:
            raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, f"{_WEAK[oid]} is not allowed")
        if isinstance(key, rsa.RSAPublicKey):
            if oid in _PKCS1 or oid == PSS_OID:
                if key.key_size < 2048:
                    _flag(run, Flag.WEAK_RSA_KEY)
                    raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                                 f"RSA-{key.key_size} is under 2048 bits")
                if key.key_size > 8192:
                    _flag(run, Flag.LARGE_RSA_KEY)
                    raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                                 f"RSA-{key.key_size} is over 8192 bits")
            if pss_only:
                _flag(run, Flag.RSA_PSS_KEY)
                if oid != PSS_OID:
                    raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                                 "an RSASSA-PSS key makes RSASSA-PSS signatures only")
            if oid in _PKCS1:
                if params != b"\x05\x00":
                    raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                                 "RSA PKCS#1 parameters must be NULL")
                h = _PKCS1[oid]
                return _Scheme(f"rsa_pkcs1_{h}", (padding.PKCS1v15(), _HASH[h]()))
            if oid == PSS_OID:
                h = _pss_hash(params, run)
                pss = padding.PSS(mgf=padding.MGF1(_HASH[h]()), salt_length=_HASH_LEN[h])
                kind = "pss" if pss_only else "rsae"
                return _Scheme(f"rsa_pss_{kind}_{h}", (pss, _HASH[h]()))
        elif isinstance(key, ec.EllipticCurvePublicKey):
            if oid in _ECDSA and params is None:
                want = _CURVE_SCHEME.get(key.curve.name)
                if want is None:
                    raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                                 f"certificate key on unsupported curve {key.curve.name}")
                if want[0] != _ECDSA[oid]:
                    raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                                 f"a {key.curve.name} key with {_ECDSA[oid]}: curve and hash "
                                 "do not pair")
                if want[1] == "ecdsa_secp521r1_sha512":
                    _flag(run, Flag.P521_CERTIFICATE)
                return _Scheme(want[1], (ec.ECDSA(_HASH[want[0]]()),))
        elif isinstance(key, ed25519.Ed25519PublicKey):
            if oid == ED25519_OID and params is None:
                return _Scheme("ed25519", ())
        elif isinstance(key, ed448.Ed448PublicKey) and oid == ED448_OID and params is None:
            _flag(run, Flag.ED448_CERTIFICATE)
            return _Scheme("ed448", ())
        raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                     f"signature algorithm {oid} with a {type(key).__name__.removeprefix('_')} "
                     "key is not a supported scheme")

    @staticmethod
    def _name_flags(cert: ParsedCertificate, run: _Run) -> None:
        if cert.issuer != cert.subject:
            _flag(run, Flag.ISSUER_DIFFERS_FROM_SUBJECT)
        if cert.subject == b"\x30\x00" or cert.issuer == b"\x30\x00":
            _flag(run, Flag.EMPTY_NAME)
        if cert.unique_ids:
            _flag(run, Flag.UNIQUE_ID_PRESENT)
        for ext in cert.extensions:
            if ext.oid == EXTENDED_KEY_USAGE and not _serves_tls_server(ext.value):
                _flag(run, Flag.EXTENDED_KEY_USAGE_WITHOUT_SERVER_AUTH)


def _serves_tls_server(value: bytes) -> bool:
    """Whether an extKeyUsage value (a SEQUENCE of purpose OIDs) allows a TLS server: it names
    serverAuth or anyExtendedKeyUsage. A value that does not decode is not judged here (True):
    the flag describes a purpose, and the verifier does not parse non-critical extensions."""
    try:
        start, end = expect(value, 0, len(value), 0x30, "extKeyUsage")
        purposes = {oid_text(value, s, e) for t, _, s, e in elements(value, start, end)
                    if t == 0x06}
    except DERError:
        return True
    return bool(purposes & {SERVER_AUTH, ANY_EXTENDED_KEY_USAGE})


_EC_PUBLIC_KEY = "1.2.840.10045.2.1"
#: id-ecPublicKey's DER, then a SEQUENCE tag (explicit parameters, not a curve OID).
_EC_KEY_THEN_SEQUENCE = bytes.fromhex("06072a8648ce3d020130")


def _explicit_ec_parameters(spki: bytes) -> bool:
    """Whether the SubjectPublicKeyInfo is an EC key whose parameters are a SEQUENCE (RFC 3279
    specifiedCurve) rather than a curve OID. False for anything else, malformed included (the
    key decoder says what is wrong with it). On the hot path: a byte search decides for every
    key but an EC key followed by a SEQUENCE, which alone is parsed."""
    if _EC_KEY_THEN_SEQUENCE not in spki[:32]:
        return False
    try:
        start, end = expect(spki, 0, len(spki), 0x30, "SubjectPublicKeyInfo")
        inner = elements(spki, start, end)
        if not inner or inner[0][0] != 0x30:
            return False
        algorithm = elements(spki, inner[0][2], inner[0][3])
        return (len(algorithm) == 2 and algorithm[0][0] == 0x06
                and oid_text(spki, algorithm[0][2], algorithm[0][3]) == _EC_PUBLIC_KEY
                and algorithm[1][0] == 0x30)
    except DERError:
        return False


def _pss_only(spki: bytes) -> bool:
    """Whether the SubjectPublicKeyInfo names id-RSASSA-PSS (without parameters)."""
    if len(spki) < 2:
        return False
    header = 2 if spki[1] < 0x80 else 2 + (spki[1] & 0x7F)
    return spki[header : header + len(_RSA_PSS_KEY_ID)] == _RSA_PSS_KEY_ID


def _names_pss(spki: bytes) -> bool:
    """Whether the SubjectPublicKeyInfo's algorithm is id-RSASSA-PSS, with or without
    parameters (False for anything that is not a SubjectPublicKeyInfo)."""
    try:
        _, start, end = tlv(spki, 0, len(spki))
        _, alg_start, alg_end = tlv(spki, start, end)
        tag, oid_start, oid_end = tlv(spki, alg_start, alg_end)
        return tag == 0x06 and oid_text(spki, oid_start, oid_end) == PSS_OID
    except DERError:
        return False


def _as_rsa_encryption(spki: bytes) -> bytes:
    """The same key under rsaEncryption (its BIT STRING unchanged)."""
    header = 2 if spki[1] < 0x80 else 2 + (spki[1] & 0x7F)
    content = _RSA_ENCRYPTION_ID + spki[header + len(_RSA_PSS_KEY_ID):]
    n = len(content)
    length = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + (
        n.to_bytes((n.bit_length() + 7) // 8, "big"))
    return b"\x30" + length + content


def _flag(run: _Run, name: Flag) -> None:
    if name not in run.flags:
        run.flags.append(name)


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pss_hash(params: bytes | None, run: _Run) -> str:
    """The hash of RSASSA-PSS-params that are exactly MGF1 over the same hash, salt = hLen."""
    bad = Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                 "RSA-PSS parameters are not MGF1 with the same hash and salt = hash length")
    if params is None:
        raise bad
    try:
        s, e = expect(params, 0, len(params), 0x30, "RSASSA-PSS-params")
        fields = {t: (cs, ce) for t, _, cs, ce in elements(params, s, e)}
        if set(fields) != {0xA0, 0xA1, 0xA2}:
            raise bad
        h = _digest_algorithm(params, *fields[0xA0])
        ms, me = expect(params, fields[0xA1][0], fields[0xA1][1], 0x30, "maskGenAlgorithm")
        mgf = elements(params, ms, me)
        if (len(mgf) != 2 or mgf[0][0] != 0x06
                or oid_text(params, mgf[0][2], mgf[0][3]) != MGF1_OID
                or _digest_algorithm(params, mgf[1][1], mgf[1][3]) != h):
            raise bad
        ss, se = expect(params, fields[0xA2][0], fields[0xA2][1], 0x02, "saltLength")
        salt = integer(params, ss, se)
    except DERError:
        raise bad from None
    if salt != _HASH_LEN[h]:
        _flag(run, Flag.PSS_SALT_LENGTH)
        raise Reject(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                     f"RSA-PSS salt length {salt}, not the {h} length {_HASH_LEN[h]}")
    return h


def _digest_algorithm(buf: bytes, start: int, end: int) -> str:
    s, e = expect(buf, start, end, 0x30, "hash AlgorithmIdentifier")
    parts = elements(buf, s, e)
    if len(parts) != 2 or buf[parts[1][1] : parts[1][3]] != b"\x05\x00":
        raise DERError("hash AlgorithmIdentifier parameters must be NULL")
    h = _HASH_OID.get(oid_text(buf, parts[0][2], parts[0][3]))
    if h is None:
        raise DERError("unsupported PSS hash")
    return h


def _signed_key(value: bytes) -> tuple[bytes, bytes]:
    try:
        s, e = expect(value, 0, len(value), 0x30, "SignedKey")
        if e != len(value):
            raise DERError("bytes after SignedKey")
        parts = elements(value, s, e)
        if len(parts) != 2 or parts[0][0] != 0x04 or parts[1][0] != 0x04:
            raise DERError("SignedKey is not { OCTET STRING, OCTET STRING }")
    except DERError as exc:
        raise Reject(ErrorCode.EXTENSION_MALFORMED, str(exc)) from None
    return value[parts[0][2] : parts[0][3]], value[parts[1][2] : parts[1][3]]


def _high_s(signature: bytes) -> bool:
    try:
        s, e = expect(signature, 0, len(signature), 0x30, "ECDSA signature")
        parts = elements(signature, s, e)
        _, ss, se = tlv(signature, parts[1][1], e)
        return integer(signature, ss, se) > SECP256K1_N // 2
    except (DERError, IndexError):
        return False

