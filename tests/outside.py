"""Checks from the outside: cryptography's X.509 parser, pyasn1, the base58 package and a
protobuf reader written here. Nothing in this file imports fixturegen."""

from __future__ import annotations

import hashlib

import base58
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes
from pyasn1.codec.der import decoder, encoder
from pyasn1.type import namedtype, univ
from pyasn1_modules import rfc5280

LIBP2P_OID = x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")
PREFIX = b"libp2p-tls-handshake:"
HASHES = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


class SignedKey(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("publicKey", univ.OctetString()),
        namedtype.NamedType("signature", univ.OctetString()),
    )


def verify_self_signature(cert: x509.Certificate, scheme: str) -> None:
    """Raises InvalidSignature unless the certificate's own key signed it with ``scheme``."""
    key = cert.public_key()
    tbs, sig = cert.tbs_certificate_bytes, cert.signature
    h = scheme.rsplit("_", 1)[-1]
    if scheme.startswith("rsa_pkcs1_"):
        assert isinstance(key, rsa.RSAPublicKey)
        key.verify(sig, tbs, padding.PKCS1v15(), HASHES[h]())
    elif scheme.startswith(("rsa_pss_rsae_", "rsa_pss_pss_")):
        assert isinstance(key, rsa.RSAPublicKey)
        key.verify(sig, tbs, padding.PSS(padding.MGF1(HASHES[h]()), HASHES[h]().digest_size),
                   HASHES[h]())
    elif scheme.startswith("ecdsa_"):
        assert isinstance(key, ec.EllipticCurvePublicKey)
        key.verify(sig, tbs, ec.ECDSA(HASHES[h]()))
    elif scheme in ("ed25519", "ed448"):
        assert isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey)
        key.verify(sig, tbs)
    else:
        raise AssertionError(scheme)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = buf[pos]
        n |= (b & 0x7F) << shift
        shift += 7
        pos += 1
        if not b & 0x80:
            return n, pos


def read_protobuf(pb: bytes) -> tuple[int, bytes]:
    """A plain reader for the canonical two-field PublicKey."""
    assert pb[0] == 0x08
    key_type, pos = _varint(pb, 1)
    assert pb[pos] == 0x12
    length, pos = _varint(pb, pos + 1)
    assert len(pb) == pos + length
    return key_type, pb[pos:]


def host_public_key(pb: bytes) -> PublicKeyTypes:
    key_type, data = read_protobuf(pb)
    if key_type == 1:
        return ed25519.Ed25519PublicKey.from_public_bytes(data)
    if key_type == 2:
        return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), data)
    return serialization.load_der_public_key(data)


def signed_key(cert: x509.Certificate) -> tuple[bytes, bytes]:
    ext = cert.extensions.get_extension_for_oid(LIBP2P_OID)
    value = ext.value.value  # type: ignore[attr-defined]
    decoded, rest = decoder.decode(value, asn1Spec=SignedKey())
    assert rest == b""
    return bytes(decoded["publicKey"]), bytes(decoded["signature"])


def spki(cert: x509.Certificate) -> bytes:
    """The certificate's SubjectPublicKeyInfo as written (pyasn1 over the TBS, not the key
    re-encoded: an id-RSASSA-PSS key would come back as rsaEncryption)."""
    tbs, _ = decoder.decode(cert.tbs_certificate_bytes, asn1Spec=rfc5280.TBSCertificate())
    return encoder.encode(tbs["subjectPublicKeyInfo"])


def verify_extension_signature(cert: x509.Certificate) -> None:
    pb, sig = signed_key(cert)
    key = host_public_key(pb)
    message = PREFIX + spki(cert)
    if isinstance(key, ed25519.Ed25519PublicKey):
        key.verify(sig, message)
    elif isinstance(key, ec.EllipticCurvePublicKey):
        key.verify(sig, message, ec.ECDSA(hashes.SHA256()))
    elif isinstance(key, rsa.RSAPublicKey):
        key.verify(sig, message, padding.PKCS1v15(), hashes.SHA256())
    else:
        raise AssertionError(type(key))


def peer_id(pb: bytes) -> str:
    mh = bytes([0, len(pb)]) + pb if len(pb) <= 42 else b"\x12\x20" + hashlib.sha256(pb).digest()
    return base58.b58encode(mh).decode()
