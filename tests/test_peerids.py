"""The expected PeerId as a dimension (fixturegen/cases/peerids.py), checked from the outside:
each case's ``expect_peer_id`` is decoded with the base58 package and the standard library's
base32, and compared with the multihash of the host key the certificate really carries
(cryptography's X.509 parser and the protobuf reader of tests/outside.py)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import base58
from cryptography import x509

from tests.outside import read_protobuf, signed_key

HOSTS = ("ed25519", "secp256k1", "ecdsa", "rsa")
KEY_TYPE = {"ed25519": 1, "secp256k1": 2, "ecdsa": 3, "rsa": 0}


def _host_protobuf(corpus: Path, fixture: dict[str, Any]) -> bytes:
    cert = x509.load_der_x509_certificate((corpus / fixture["chain"][0]).read_bytes())
    return signed_key(cert)[0]


def _multihash(text: str) -> bytes:
    """The multihash a PeerId text names: base58btc, or a CIDv1 libp2p-key in base32."""
    if text.startswith("b"):
        body = text[1:].upper()
        cid = base64.b32decode(body + "=" * (-len(body) % 8))
        assert cid[:2] == b"\x01\x72", cid[:2].hex()  # CIDv1, multicodec libp2p-key
        return cid[2:]
    return base58.b58decode(text)


def _identity(pb: bytes) -> bytes:
    return bytes([0x00, len(pb)]) + pb if len(pb) < 128 else b"\x00" + _uvarint(len(pb)) + pb


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _sha256(pb: bytes) -> bytes:
    return b"\x12\x20" + hashlib.sha256(pb).digest()


def _peer_id_multihash(pb: bytes) -> bytes:
    return _identity(pb) if len(pb) <= 42 else _sha256(pb)


def test_every_host_type_has_every_expected_peer_id_form(
        fixtures: dict[str, dict[str, Any]]) -> None:
    forms = {"valid.peer-id.expected": "valid", "valid.peer-id.expected-cid": "valid",
             "invalid.peer-id.other-key": "invalid", "invalid.peer-id.other-type": "invalid",
             "invalid.peer-id.other-multihash": "invalid"}
    for form, result in forms.items():
        for host in HOSTS:
            f = fixtures[f"{form}.{host}"]
            assert f["expected"]["result"] == result
            assert f["expect_peer_id"], f["id"]
            if result == "invalid":
                assert f["expected"]["error"] == "peer_id_mismatch"


def test_the_right_peer_id_names_the_certificates_host_key_in_both_text_forms(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    for host in HOSTS:
        plain, cid = fixtures[f"valid.peer-id.expected.{host}"], fixtures[
            f"valid.peer-id.expected-cid.{host}"]
        pb = _host_protobuf(corpus, plain)
        assert read_protobuf(pb)[0] == KEY_TYPE[host]
        assert _multihash(plain["expect_peer_id"]) == _peer_id_multihash(pb)
        assert plain["expected"]["peer_id"] == plain["expect_peer_id"]
        assert cid["expect_peer_id"].startswith("b")
        assert _multihash(cid["expect_peer_id"]) == _peer_id_multihash(_host_protobuf(corpus,
                                                                                      cid))


def test_the_wrong_peer_ids_are_wrong_in_exactly_the_declared_way(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    right = {h: _peer_id_multihash(_host_protobuf(corpus, fixtures[f"valid.peer-id.expected.{h}"]))
             for h in HOSTS}
    for host in HOSTS:
        pb = _host_protobuf(corpus, fixtures[f"invalid.peer-id.other-multihash.{host}"])
        other = _multihash(fixtures[f"invalid.peer-id.other-multihash.{host}"]["expect_peer_id"])
        # the same key, under the hash function its length does not call for
        assert other == (_sha256(pb) if len(pb) <= 42 else _identity(pb)) != right[host]

        pb = _host_protobuf(corpus, fixtures[f"invalid.peer-id.other-key.{host}"])
        expected = _multihash(fixtures[f"invalid.peer-id.other-key.{host}"]["expect_peer_id"])
        assert expected != _peer_id_multihash(pb)
        if expected[0] == 0x00:  # an inlined key: it is of the same type
            assert read_protobuf(expected[2:])[0] == KEY_TYPE[host]

        wrong_type = _multihash(fixtures[f"invalid.peer-id.other-type.{host}"]["expect_peer_id"])
        assert wrong_type in right.values() and wrong_type != right[host]


def test_a_case_changed_peer_id_is_another_multihash_of_the_same_length(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    for host in HOSTS:
        right = fixtures[f"valid.peer-id.expected.{host}"]["expect_peer_id"]
        f = fixtures[f"invalid.peer-id.case-changed.{host}"]
        changed = f["expect_peer_id"]
        assert (f["expected"]["result"], f["expected"]["error"]) == ("invalid",
                                                                      "peer_id_mismatch")
        differ = [i for i, (a, b) in enumerate(zip(right, changed, strict=True)) if a != b]
        assert len(differ) == 1 and right[differ[0]].swapcase() == changed[differ[0]]
        mine, theirs = base58.b58decode(right), base58.b58decode(changed)
        assert len(mine) == len(theirs) and mine != theirs
        assert theirs[:2] == mine[:2]  # the same multihash function and length: a valid one


def test_a_byte_case_folded_peer_id_differs_in_one_byte_by_0x20(
        fixtures: dict[str, dict[str, Any]]) -> None:
    for host in HOSTS:
        right = base58.b58decode(fixtures[f"valid.peer-id.expected.{host}"]["expect_peer_id"])
        f = fixtures[f"invalid.peer-id.byte-case-folded.{host}"]
        folded = base58.b58decode(f["expect_peer_id"])
        assert f["expected"]["error"] == "peer_id_mismatch" and len(folded) == len(right)
        differ = [i for i, (a, b) in enumerate(zip(right, folded, strict=True)) if a != b]
        assert len(differ) == 1 and right[differ[0]] ^ folded[differ[0]] == 0x20
        assert chr(right[differ[0]]).isalpha() and differ[0] >= 2  # in the digest
        assert right.decode("latin-1").lower() == folded.decode("latin-1").lower()
