"""The cost case (fixturegen/cases/cost.py), checked from the outside: cryptography reads the
certificate and the 24 KiB RSA host key, and Python's own integers verify the PKCS#1 v1.5
SHA-256 host signature that no OpenSSL build will compute with (its RSA limit is 16384 bits)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_der_public_key,
)

from fixturegen.verify import Verifier
from fixturegen.verify.codes import ErrorCode, Flag
from tests.outside import read_protobuf, signed_key

CASE = "acceptable.cost.rsa-host-key-24kib"
DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


def test_the_largest_rsa_host_key_is_an_ordinary_key_whose_signature_verifies(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    der = (corpus / "certs" / f"{CASE}.der").read_bytes()
    assert 48 * 1024 < len(der) < 64 * 1024  # under the certificate bound, near it
    cert = x509.load_der_x509_certificate(der)
    protobuf, signature = signed_key(cert)
    key_type, data = read_protobuf(protobuf)
    assert key_type == 0  # RSA
    host = load_der_public_key(data)
    assert isinstance(host, rsa.RSAPublicKey)
    numbers = host.public_numbers()
    assert numbers.e == 65537 and 196_000 < numbers.n.bit_length() <= 196_608
    spki = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    k = (numbers.n.bit_length() + 7) // 8
    digest = DIGEST_INFO + hashlib.sha256(b"libp2p-tls-handshake:" + spki).digest()
    encoded = b"\x00\x01" + b"\xff" * (k - len(digest) - 3) + b"\x00" + digest
    assert len(signature) == k
    assert pow(int.from_bytes(signature, "big"), numbers.e, numbers.n) == int.from_bytes(
        encoded, "big")
    fixture = fixtures[CASE]
    assert bytes.fromhex(fixture["host_key"]["public_key_protobuf_hex"]) == protobuf
    assert fixture["expected"] == {"result": "acceptable", "error": "host_key_unsupported",
                                   "peer_id": fixture["expected"]["peer_id"]}


def test_the_reference_verifier_refuses_it_before_any_arithmetic(corpus: Path) -> None:
    der = (corpus / "certs" / f"{CASE}.der").read_bytes()
    verdict = Verifier().verify([der])
    assert (verdict.accepted, verdict.error) == (False, ErrorCode.HOST_KEY_UNSUPPORTED)
    assert Flag.RSA_HOST_KEY_SIZE in verdict.flags
    # The certificate's self-signature is verified; the refusal comes before the host key's.
    assert verdict.signature_verifications == 1
