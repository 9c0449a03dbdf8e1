"""An independent libp2p certificate check, to fuzz the reference verifier against.

It shares no code with the reference verifier: X.509 parsing and the self-signature are
`cryptography`'s (rust-asn1, strict DER), SignedKey is decoded with pyasn1, and the host-key
protobuf and the libp2p rules are re-stated here in a few lines. It checks what tls.md
requires, not the reference verifier's scheme policy (SHA-1, RSA sizes, PSS salt, curve and
hash pairing): :data:`DOCUMENTED` names the differences that are expected for that reason.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from pyasn1.codec.der import decoder
from pyasn1.error import PyAsn1Error
from pyasn1.type import namedtype, univ

LIBP2P = x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")
UNDERSTOOD = {LIBP2P, x509.oid.ExtensionOID.BASIC_CONSTRAINTS, x509.oid.ExtensionOID.KEY_USAGE,
              x509.oid.ExtensionOID.EXTENDED_KEY_USAGE,
              x509.oid.ExtensionOID.SUBJECT_ALTERNATIVE_NAME}
PREFIX = b"libp2p-tls-handshake:"

#: Expected differences: (reference verdict key, independent verdict, the operators that
#: cause it), and why. A mutant matches when one of its operators is listed.
DOCUMENTED: list[tuple[str, str, frozenset[str], str]] = [
    ("unsupported_signature_scheme", "accept",
     frozenset({"algorithm-parameters", "frankencert"}),
     "the independent check does not apply the reference's scheme policy (SHA-1, RSA "
     "2048..8192, PSS parameters, curve and hash pairing)"),
    ("malformed_certificate", "accept", frozenset({"serial"}),
     "cryptography still loads a serial number that is not positive or longer than 20 "
     "octets (deprecated); RFC 5280 4.1.2.2 forbids it and the reference rejects it"),
    ("extension_malformed", "accept", frozenset({"signed-key"}),
     "pyasn1's decoder takes BER forms (non-minimal lengths, constructed strings) where "
     "SignedKey must be DER; the reference rejects them"),
    ("signature_algorithm_mismatch", "accept",
     frozenset({"der-tag", "der-length", "algorithm-parameters", "frankencert"}),
     "cryptography's loader does not compare tbsCertificate.signature with the outer "
     "signatureAlgorithm (RFC 5280 4.1.1.2 wants them equal); the reference does"),
    ("accept", "reject", frozenset({"extension-unknown", "names"}),
     "cryptography parses the value of every extension it knows and the string types of "
     "names, and refuses malformed ones; the reference reads only the libp2p extension's value "
     "and no name (neither changes who the peer is), as rustls-webpki does for names"),
]


def documented(reference_key: str, verdict: str, operators: set[str]) -> str | None:
    """Why the reference and the independent check may differ here, or None."""
    for ref, ind, ops, why in DOCUMENTED:
        if ref == reference_key and ind == verdict and ops & operators:
            return why
    return None


class _SignedKey(univ.Sequence):  # type: ignore[misc]
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("publicKey", univ.OctetString()),
        namedtype.NamedType("signature", univ.OctetString()))


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    start = pos
    while True:
        if pos >= len(buf) or pos - start > 9:
            raise ValueError("varint")
        b = buf[pos]
        value |= (b & 0x7F) << shift
        pos += 1
        if not b & 0x80:
            if pos - start > 1 and b == 0:
                raise ValueError("non-minimal varint")
            return value, pos
        shift += 7


def _protobuf(pb: bytes) -> tuple[int, bytes]:
    """PublicKey { Type = 1; Data = 2 }, exactly those two fields in that order."""
    if pb[:1] != b"\x08":
        raise ValueError("field 1 first")
    key_type, pos = _varint(pb, 1)
    if pb[pos:pos + 1] != b"\x12":
        raise ValueError("field 2 second")
    length, pos = _varint(pb, pos + 1)
    if pos + length != len(pb):
        raise ValueError("trailing or short")
    return key_type, pb[pos:]


def _raw_spki(tbs: bytes) -> bytes:
    """The SubjectPublicKeyInfo bytes as written (the host key signed those, not a re-encoding)."""
    def tlv(data: bytes, pos: int) -> tuple[int, int]:
        n = data[pos + 1]
        start = pos + 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(data[start:start + k], "big")
            start += k
        return start, start + n

    start, end = tlv(tbs, 0)
    pos, index = start, 0
    items = []
    while pos < end:
        _, item_end = tlv(tbs, pos)
        items.append((pos, item_end))
        pos = item_end
        index += 1
    first = 1 if tbs[items[0][0]] == 0xA0 else 0
    a, b = items[first + 5]
    return tbs[a:b]


def check(der: bytes, at: datetime | None = None) -> tuple[str, str]:
    """("accept", PeerId-less detail) or ("reject", why)."""
    now = at or datetime.now(UTC)
    try:
        with warnings.catch_warnings():  # non-positive serials: a deprecation warning
            warnings.simplefilter("ignore")
            cert = x509.load_der_x509_certificate(der)
        if cert.version is not x509.Version.v3:
            return "reject", "not v3"
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            return "reject", "validity"
        key = cert.public_key()
        h = cert.signature_hash_algorithm
        try:
            if isinstance(key, rsa.RSAPublicKey):
                params = cert.signature_algorithm_parameters
                assert isinstance(params, padding.PKCS1v15 | padding.PSS) and h is not None
                key.verify(cert.signature, cert.tbs_certificate_bytes, params, h)
            elif isinstance(key, ec.EllipticCurvePublicKey):
                assert h is not None
                key.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(h))
            elif isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
                key.verify(cert.signature, cert.tbs_certificate_bytes)
            else:
                return "reject", "key type"
        except (InvalidSignature, AssertionError, TypeError):
            return "reject", "self-signature"
        ours = [e for e in cert.extensions if e.oid == LIBP2P]
        if [e for e in cert.extensions if e.critical and e.oid not in UNDERSTOOD]:
            return "reject", "unknown critical extension"
        if len(ours) != 1:
            return "reject", f"{len(ours)} libp2p extensions"
        value = ours[0].value
        assert isinstance(value, x509.UnrecognizedExtension)
        decoded, rest = decoder.decode(value.value, asn1Spec=_SignedKey())
        if rest:
            return "reject", "SignedKey trailing bytes"
        pb, sig = bytes(decoded["publicKey"]), bytes(decoded["signature"])
        key_type, data = _protobuf(pb)
        message = PREFIX + _raw_spki(cert.tbs_certificate_bytes)
        if key_type == 1:
            if len(data) != 32:
                return "reject", "ed25519 length"
            ed25519.Ed25519PublicKey.from_public_bytes(data).verify(sig, message)
        elif key_type == 2:
            if len(data) != 33:
                return "reject", "secp256k1 not compressed"
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), data).verify(
                sig, message, ec.ECDSA(hashes.SHA256()))
        elif key_type in (0, 3):
            host = serialization.load_der_public_key(data)
            if host.public_bytes(serialization.Encoding.DER,
                                 serialization.PublicFormat.SubjectPublicKeyInfo) != data:
                return "reject", "host key not canonical DER"
            if key_type == 0 and isinstance(host, rsa.RSAPublicKey):
                host.verify(sig, message, padding.PKCS1v15(), hashes.SHA256())
            elif key_type == 3 and isinstance(host, ec.EllipticCurvePublicKey):
                host.verify(sig, message, ec.ECDSA(hashes.SHA256()))
            else:
                return "reject", "host key type and data differ"
        else:
            return "reject", f"host key type {key_type}"
    except InvalidSignature:
        return "reject", "extension signature"
    except (ValueError, TypeError, IndexError, PyAsn1Error, UnsupportedAlgorithm,
            AssertionError, x509.DuplicateExtension, x509.UnsupportedGeneralNameType,
            x509.InvalidVersion) as exc:
        return "reject", f"{type(exc).__name__}: {str(exc)[:80]}"
    return "accept", ""
