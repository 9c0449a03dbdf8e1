"""Deterministic RSASSA-PSS (RFC 8017 section 8.1.1 with EMSA-PSS-ENCODE, section 9.1.1).

`cryptography` always draws a random salt; a reproducible corpus needs the salt to be derived.
This module encodes the message itself and applies the RSA private operation
(:mod:`fixturegen.certs.rsa_raw`). Any standard PSS verifier accepts the result.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives.asymmetric import rsa

from fixturegen.certs.rsa_raw import private_op


def mgf1(seed: bytes, length: int, hash_name: str) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hashlib.new(hash_name, seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return bytes(out[:length])


def emsa_pss_encode(message: bytes, em_bits: int, salt: bytes, hash_name: str) -> bytes:
    m_hash = hashlib.new(hash_name, message).digest()
    h_len = len(m_hash)
    em_len = (em_bits + 7) // 8
    if em_len < h_len + len(salt) + 2:
        raise ValueError("encoding error: modulus too small for this hash and salt")
    h = hashlib.new(hash_name, b"\x00" * 8 + m_hash + salt).digest()
    db = b"\x00" * (em_len - len(salt) - h_len - 2) + b"\x01" + salt
    masked = bytearray(a ^ b for a, b in zip(db, mgf1(h, em_len - h_len - 1, hash_name),
                                             strict=True))
    masked[0] &= 0xFF >> (8 * em_len - em_bits)
    return bytes(masked) + h + b"\xbc"


def sign_pss(key: rsa.RSAPrivateKey, message: bytes, hash_name: str, salt: bytes) -> bytes:
    """RSASSA-PSS-SIGN with MGF1 over the same hash and the given salt."""
    mod_bits = key.key_size
    em = emsa_pss_encode(message, mod_bits - 1, salt, hash_name)
    s = private_op(key, int.from_bytes(em, "big"))
    return s.to_bytes((mod_bits + 7) // 8, "big")
