"""The verifier's own libp2p identity decoding: canonical protobuf, key data, PeerIds.

Written separately from ``fixturegen.identity`` (the generator's encoder) on purpose.
"""

from __future__ import annotations

import base64
import hashlib

TYPE_NAMES = {0: "RSA", 1: "Ed25519", 2: "Secp256k1", 3: "ECDSA"}
#: The largest RSA host key the verifier computes with, in bits (OpenSSL's RSA modulus limit):
#: a larger one is refused as ``host_key_unsupported`` before any arithmetic (a receiver that
#: verifies any size pays about the square of the size: ``acceptable.cost.rsa-host-key-24kib``).
MAX_RSA_HOST_KEY_BITS = 16384
_ALPHABET = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class HostKeyMalformed(ValueError):
    pass


class HostKeyUnsupported(ValueError):
    pass


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A minimal (canonical) varint of at most 10 bytes at ``pos``."""
    value = 0
    for i in range(10):
        if pos + i >= len(buf):
            raise HostKeyMalformed("truncated varint")
        b = buf[pos + i]
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            if i and b == 0:
                raise HostKeyMalformed("non-minimal varint")
            return value, pos + i + 1
    raise HostKeyMalformed("varint longer than 10 bytes")


def decode_public_key(pb: bytes) -> tuple[int, bytes]:
    """(key type, data) of a canonical ``PublicKey``: exactly field 1 then field 2, nothing else."""
    if not pb or pb[0] != 0x08:
        raise HostKeyMalformed("PublicKey does not start with field 1 (Type, varint)")
    key_type, pos = _read_varint(pb, 1)
    if pos >= len(pb) or pb[pos] != 0x12:
        raise HostKeyMalformed("PublicKey field 2 (Data, bytes) missing or out of order")
    length, pos = _read_varint(pb, pos + 1)
    if pos + length > len(pb):
        raise HostKeyMalformed("PublicKey Data is truncated")
    if pos + length != len(pb):
        raise HostKeyMalformed("bytes after PublicKey Data (an extra field)")
    if key_type not in TYPE_NAMES:
        raise HostKeyUnsupported(f"unknown key type {key_type}")
    return key_type, pb[pos:]


ED25519_P = 2**255 - 19
#: The canonical encodings of the eight Ed25519 points of small order (the identity, the point
#: of order 2, the two of order 4 and the four of order 8).
ED25519_SMALL_ORDER = frozenset(bytes.fromhex(h) for h in (
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
))


def check_ed25519_encoding(data: bytes) -> None:
    """RFC 8032 5.1.3: a 32-byte point encoding whose y is at least p, or whose x's sign bit is
    set where x is 0 (y = 1 or y = p - 1), does not decode. (OpenSSL reads both as the point
    they are congruent to: the verifier checks them itself.)"""
    y = int.from_bytes(data, "little") & ((1 << 255) - 1)
    if y >= ED25519_P:
        raise HostKeyMalformed("Ed25519 key data is not canonical: y is not below p")
    if data[31] & 0x80 and y in (1, ED25519_P - 1):
        raise HostKeyMalformed("Ed25519 key data is not canonical: x is 0 with its sign bit set")


def _base58(data: bytes) -> str:
    digits = bytearray()
    num = int.from_bytes(data, "big")
    while num > 0:
        num, rem = divmod(num, 58)
        digits.append(_ALPHABET[rem])
    for byte in data:
        if byte:
            break
        digits.append(_ALPHABET[0])
    digits.reverse()
    return digits.decode()


def multihash(pb: bytes) -> bytes:
    if len(pb) <= 42:
        return bytes([0x00, len(pb)]) + pb
    return bytes([0x12, 0x20]) + hashlib.sha256(pb).digest()


def peer_id(pb: bytes) -> str:
    return _base58(multihash(pb))


def peer_id_forms(pb: bytes) -> tuple[str, str]:
    """The base58btc PeerId and the CIDv1 (libp2p-key, base32) form of the same key."""
    mh = multihash(pb)
    cid = "b" + base64.b32encode(bytes([0x01, 0x72]) + mh).decode().lower().rstrip("=")
    return _base58(mh), cid
