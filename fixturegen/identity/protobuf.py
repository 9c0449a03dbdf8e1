"""The canonical protobuf encoding of a libp2p ``PublicKey`` (peer-ids.md, "Keys").

``message PublicKey { required KeyType Type = 1; required bytes Data = 2; }``, encoded with
minimal varints, fields in tag order, both present, nothing else: ``08 <type> 12 <len> <data>``.
"""

from __future__ import annotations

KEY_TYPE_CODES: dict[str, int] = {"RSA": 0, "Ed25519": 1, "Secp256k1": 2, "ECDSA": 3}


def varint(n: int) -> bytes:
    if n < 0:
        raise ValueError("varint of a negative number")
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_public_key(key_type: int, data: bytes) -> bytes:
    return b"\x08" + varint(key_type) + b"\x12" + varint(len(data)) + data
