"""PeerIds (peer-ids.md, "Peer Ids"): multihash of the protobuf public key, and its text forms."""

from __future__ import annotations

import base64
import hashlib

from fixturegen.identity.protobuf import varint

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
#: Keys whose protobuf encoding is at most this long are inlined (identity multihash).
MAX_INLINE_KEY_LENGTH = 42
LIBP2P_KEY_CODEC = 0x72


def peer_id_multihash(public_key_protobuf: bytes) -> bytes:
    if len(public_key_protobuf) <= MAX_INLINE_KEY_LENGTH:
        return b"\x00" + varint(len(public_key_protobuf)) + public_key_protobuf
    return b"\x12\x20" + hashlib.sha256(public_key_protobuf).digest()


def base58btc(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    digits = []
    while n:
        n, r = divmod(n, 58)
        digits.append(_B58[r])
    zeros = len(data) - len(data.lstrip(b"\x00"))
    return "1" * zeros + "".join(reversed(digits))


def peer_id_base58(public_key_protobuf: bytes) -> str:
    return base58btc(peer_id_multihash(public_key_protobuf))


def peer_id_cid(public_key_protobuf: bytes) -> str:
    """CIDv1, multicodec ``libp2p-key``, multibase base32 (lower case, no padding: ``b...``)."""
    cid = b"\x01" + varint(LIBP2P_KEY_CODEC) + peer_id_multihash(public_key_protobuf)
    return "b" + base64.b32encode(cid).decode().lower().rstrip("=")
