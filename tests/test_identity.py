"""The generator's identity layer against the peer-ids.md key vectors, and the verifier's own
decoder against the same vectors."""

from __future__ import annotations

import base64
from typing import Any

import base58
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from fixturegen.identity import HostKey, encode_public_key, peer_id_base58, peer_id_cid
from fixturegen.identity.protobuf import varint
from fixturegen.keys import KeyKind, KeyPair
from fixturegen.verify import identity as vid
from tests.outside import read_protobuf


def _private_from_vector(pb_hex: str) -> KeyPair:
    """The private key protobufs: Ed25519 seed||public, secp256k1 scalar, ECDSA SEC1 DER,
    RSA PKCS#1 DER."""
    key_type, data = read_protobuf(bytes.fromhex(pb_hex))
    if key_type == 1:
        private = ed25519.Ed25519PrivateKey.from_private_bytes(data[:32])
    elif key_type == 2:
        private = ec.derive_private_key(int.from_bytes(data, "big"), ec.SECP256K1())
    else:
        private = serialization.load_der_private_key(data, None)
    return KeyPair.of(KeyKind.of(private), private, "fixed")


def test_key_vectors_give_their_peer_ids(vectors: dict[str, Any]) -> None:
    keys = vectors["peer_id_keys"]
    publics = {k["name"].replace(" public key", "").lower(): k for k in keys if "peer_id" in k}
    privates = [k for k in keys if "private" in k["name"]]
    assert len(publics) == 4 and len(privates) == 4
    for priv in privates:
        label = priv["name"].replace(" private key", "").lower()
        host = HostKey(_private_from_vector(priv["protobuf_hex"]))
        assert host.protobuf.hex() == publics[label]["protobuf_hex"], label
        assert host.peer_id == publics[label]["peer_id"], label


def test_public_key_vectors_decode_in_the_verifier(vectors: dict[str, Any]) -> None:
    for k in vectors["peer_id_keys"]:
        if "peer_id" not in k:
            continue
        pb = bytes.fromhex(k["protobuf_hex"])
        key_type, data = vid.decode_public_key(pb)
        assert encode_public_key(key_type, data) == pb
        assert vid.peer_id(pb) == k["peer_id"] == peer_id_base58(pb)


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 16383, 16384, 2**35])
def test_varint_is_minimal_and_read_back(n: int) -> None:
    encoded = varint(n)
    assert vid._read_varint(encoded, 0) == (n, len(encoded))
    if n < 128:
        assert len(encoded) == 1
    # the same value padded with a continuation byte is refused as non-minimal
    padded = encoded[:-1] + bytes([encoded[-1] | 0x80, 0x00])
    with pytest.raises(vid.HostKeyMalformed):
        vid._read_varint(padded, 0)


def test_cid_form_wraps_the_same_multihash(vectors: dict[str, Any]) -> None:
    for k in vectors["peer_id_keys"]:
        if "peer_id" not in k:
            continue
        pb = bytes.fromhex(k["protobuf_hex"])
        cid = peer_id_cid(pb)
        assert cid.startswith("b")
        body = cid[1:].upper()
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
        assert raw[:2] == b"\x01\x72"
        assert raw[2:] == base58.b58decode(k["peer_id"])
        assert vid.peer_id_forms(pb) == (k["peer_id"], cid)
