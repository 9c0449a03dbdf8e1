"""Small, explicit mutations that the invalid catalogue applies to a valid draft."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from fixturegen.certs import der
from fixturegen.certs.builder import Draft, assemble
from fixturegen.certs.extension import (
    LIBP2P_EXTENSION_OID,
    extension,
    handshake_message,
    signed_key,
)
from fixturegen.certs.schemes import SigningAlgorithm
from fixturegen.identity.hostkey import HostKey


def corrupt(signature: bytes) -> bytes:
    """Flip one bit of the last byte: inside ``s`` for DER ECDSA, inside S for EdDSA."""
    return signature[:-1] + bytes([signature[-1] ^ 0x01])


def with_corrupted_self_signature(d: Draft) -> bytes:
    tbs = d.tbs_der()
    return assemble(tbs, d.algorithm.algorithm_identifier(), corrupt(d.signature(tbs)))


def self_signed_by(d: Draft, algorithm: SigningAlgorithm) -> bytes:
    """The certificate of ``d`` declaring its own algorithm, with a self-signature that is
    valid under ``algorithm`` instead (the same key)."""
    tbs = d.tbs_der()
    return assemble(tbs, d.algorithm.algorithm_identifier(),
                    algorithm.sign(d.cert_key.private, tbs))


def host_signature(host: HostKey, d: Draft) -> bytes:
    """A correct host-key signature for this draft's certificate key."""
    return host.sign(handshake_message(d.cert_key.spki))


def with_libp2p_value(d: Draft, value: bytes, critical: bool = False) -> Draft:
    """The draft with its libp2p extension's extnValue replaced (then re-signed by .sign())."""
    ext = extension(LIBP2P_EXTENSION_OID, value, critical)
    return d.but(extensions=(ext, *d.tbs.extensions[1:]))


def raw_ecdsa(signature: bytes, size: int) -> bytes:
    """The IEEE P1363 form r || s (what WebCrypto produces) of a DER ECDSA signature."""
    r, s = decode_dss_signature(signature)
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def ber_outer_length(certificate: bytes) -> bytes:
    """The certificate with its outer SEQUENCE length in a non-minimal (BER) long form."""
    _, start, _ = der.split_tlv(certificate)
    return der.ber_long_length(0x30, certificate[start:])


RSA_PSS_KEY_ALGORITHM = der.sequence(der.oid("1.2.840.113549.1.1.10"))


def with_rsa_pss_key(d: Draft) -> Draft:
    """The draft with its RSA certificate key's SubjectPublicKeyInfo under id-RSASSA-PSS (no
    parameters, RFC 4055) instead of rsaEncryption, and an extension signed over that SPKI."""
    _, bits = der.children(d.cert_key.spki)
    spki = der.sequence(RSA_PSS_KEY_ALGORITHM, bits)
    value = signed_key(d.host.protobuf, d.host.sign(handshake_message(spki)))
    ext = extension(LIBP2P_EXTENSION_OID, value)
    return d.but(spki=spki, extensions=(ext, *d.tbs.extensions[1:]))
