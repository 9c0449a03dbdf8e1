"""secp256k1 public-key recovery (fixturegen.keys.secp256k1), checked against pyca/cryptography:
the point it recovers verifies the signature there, and the compact recoverable case carries
the id that recovers the host key."""

from __future__ import annotations

import hashlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    Prehashed,
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fixturegen.cases import CATALOGUE
from fixturegen.certs import der
from fixturegen.keys import secp256k1


@pytest.mark.parametrize("number", range(8))
def test_the_recovered_point_verifies_in_cryptography_and_the_other_id_does_not(
        number: int) -> None:
    key = ec.derive_private_key(1000 + number * 7919, ec.SECP256K1())
    digest = hashlib.sha256(f"message {number}".encode()).digest()
    r, s = decode_dss_signature(key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256()))))
    public = key.public_key().public_numbers()
    recid = secp256k1.recovery_id(digest, r, s, (public.x, public.y))
    point = secp256k1.recover(digest, r, s, recid)
    assert point == (public.x, public.y)
    # the other id recovers another key, for which (r, s) is a valid signature too: only the
    # id tells a recovering verifier which of the two signed
    other = secp256k1.recover(digest, r, s, 1 - recid)
    assert other is not None and other != point
    twin = ec.EllipticCurvePublicNumbers(*other, ec.SECP256K1()).public_key()
    twin.verify(encode_dss_signature(r, s), digest, ec.ECDSA(Prehashed(hashes.SHA256())))


def test_an_unrelated_key_has_no_recovery_id() -> None:
    key = ec.derive_private_key(4242, ec.SECP256K1())
    digest = hashlib.sha256(b"x").digest()
    r, s = decode_dss_signature(key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256()))))
    other = ec.derive_private_key(4243, ec.SECP256K1()).public_key().public_numbers()
    with pytest.raises(ValueError, match="neither"):
        secp256k1.recovery_id(digest, r, s, (other.x, other.y))


def test_the_compact_recoverable_case_recovers_its_host_key() -> None:
    case = next(c for c in CATALOGUE
                if c.id == "invalid.extension-signature.compact-recoverable.secp256k1")
    leaf = next(data for path, data in case.render(b"secp256k1-test").files
                if path.endswith(".der"))
    certificate = x509.load_der_x509_certificate(leaf)
    value = certificate.extensions.get_extension_for_oid(
        x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")).value.value  # type: ignore[attr-defined]
    public_key, signature = (c[der.split_tlv(c)[1]:] for c in der.children(value))
    data = public_key[public_key.index(b"\x12") + 2:]  # field 2 (Data) after Type
    host = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), data)
    assert len(signature) == 65 and signature[0] in (31, 32)
    r, s = (int.from_bytes(signature[1:33], "big"), int.from_bytes(signature[33:], "big"))
    message = b"libp2p-tls-handshake:" + certificate.public_key().public_bytes(
        Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    host.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
    digest = hashlib.sha256(message).digest()
    numbers = host.public_numbers()
    assert secp256k1.recover(digest, r, s, signature[0] - 31) == (numbers.x, numbers.y)
