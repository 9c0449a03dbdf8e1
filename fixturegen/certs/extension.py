"""The libp2p Public Key Extension (tls.md, "libp2p Public Key Extension")."""

from __future__ import annotations

from fixturegen.certs import der
from fixturegen.identity.hostkey import HostKey

LIBP2P_EXTENSION_OID = "1.3.6.1.4.1.53594.1.1"
SIGNATURE_PREFIX = b"libp2p-tls-handshake:"


def signed_key(public_key_protobuf: bytes, signature: bytes) -> bytes:
    """``SignedKey ::= SEQUENCE { publicKey OCTET STRING, signature OCTET STRING }``."""
    return der.sequence(der.octet_string(public_key_protobuf), der.octet_string(signature))


def extension(oid: str, value: bytes, critical: bool = False) -> bytes:
    """``Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue }``."""
    parts = [der.oid(oid)]
    if critical:
        parts.append(der.boolean(True))
    parts.append(der.octet_string(value))
    return der.sequence(*parts)


SUBJECT_ALT_NAME = "2.5.29.17"


def subject_alt_name(dns_name: bytes = b"libp2p.example", critical: bool = False) -> bytes:
    """A subjectAltName extension with one dNSName (RFC 5280 4.2.1.6), as an AutoTLS (ACME)
    certificate of a libp2p peer carries."""
    return extension(SUBJECT_ALT_NAME, der.sequence(der.tlv(0x82, dns_name)), critical)


def handshake_message(spki: bytes) -> bytes:
    return SIGNATURE_PREFIX + spki


def libp2p_extension(host: HostKey, spki: bytes, critical: bool = False) -> bytes:
    value = signed_key(host.protobuf, host.sign(handshake_message(spki)))
    return extension(LIBP2P_EXTENSION_OID, value, critical)
