"""Throwaway keys, derived from a seed and a label (fixture id and role).

Every byte comes from SHAKE-256 over a domain-separated input, so the same seed and label give
the same key on every machine:

* Ed25519 / Ed448: the private key bytes are the first 32 / 57 derived bytes (RFC 8032 keys are
  arbitrary byte strings).
* EC (P-256, P-384, P-521, secp256k1): a scalar from 8 bytes more than the order needs, reduced
  into [1, n-1] (FIPS 186-5 A.2.1, "extra random bits").
* RSA: each prime is the next prime (GMP, ``mpz_nextprime``) after a derived odd candidate with
  its two top bits set, so that p*q has exactly the requested size; e = 65537 and
  d = e^-1 mod lcm(p-1, q-1) (FIPS 186-5 A.1.1). Derived keys skip OpenSSL's slow consistency
  check: the primes were just proven probable primes by GMP.
* DSA-2048: the private value x from 8 bytes more than q needs, reduced into [1, q-1], over
  fixed domain parameters (:data:`DSA_P`, :data:`DSA_Q`, :data:`DSA_G`: public, generated once
  with ``cryptography``, 2048/256 bits; every DSA key of the toolkit shares them).
* X25519 / X448: the private key bytes are the first 32 / 56 derived bytes (RFC 7748).
"""

from __future__ import annotations

import hashlib
import math

import gmpy2
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa, x448, x25519
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from fixturegen.keys.kinds import KeyKind

DOMAIN = b"fixturegen/throwaway-key/v1"

DSA_P = int(
    "ed5557138276accd99be08bb79261f391711b38bf89bf9aaea961ce2e91e1d49f6e810b7828909a2f375"
    "0bcbb04b863221a9ea84a41d16d676d8ed0bd4c1a045b52c5183a9d65db25dcf402cf494181c9a942c30"
    "c54f769801a8fce62f280a0cb2e645e5a20b9b404019d72a485f1077dc74c65402cda06aeeada00b0a98"
    "9121abc6f02849da12ac78d39b189703346ada71cd7aed4aa6d0f36381d948c52f96a1bf0a53d468f703"
    "05b4fbb48b47e2fa9cce57756b402e93d2e51bb1f7c2dfe6a3d9422c17fc413757433dba71b689e7e1fa"
    "1effffc02b471a55cb51a6dbd824bebe796f4ab9c98aa68a735c2ac2a075481d3a6ef26a4d20cf0b38cd"
    "eb061bdb", 16)
DSA_Q = int(
    "f8c6aaeaf19dad5a6c008a64203ffd92db3f2208d401e92664b4b4c8fc135f49", 16)
DSA_G = int(
    "8617380c36a213b546d2587a4ce49b1ab9f2d86c75af48971c5b44bb85e0d31d8bb7004705c94758df1e"
    "2b4e7eb2e84bab0df4176e54d7990d59b2ba05634ada975d119ddf28ab4ff24c1983987572d7763b48a8"
    "29ab5ccb3a9609c0e3a79b8f50020c101aa52034981b560f49a03345fa4022aaffd13df16a7a6926eee0"
    "8f68c5a45dc0b58845a341bc1d85345223d05a7dad68e1f32aed27b41f1d95419fc431032bb658943016"
    "780dac684415ab720da8700120b5181e87459d8efc227c4d0b7dfab9e079a11fd8402f9e7fa5bccb3308"
    "4623101fc3f01d418598e284c83b46be6b75d7bc3402713a2b6f10980ca5f00e1e2ad6e0b329079780d4"
    "4d9ac00f", 16)

def stream(seed: bytes, label: str, purpose: str, n: int) -> bytes:
    """``n`` derived bytes for (seed, label, purpose); distinct inputs never share a prefix."""
    h = hashlib.shake_256()
    for part in (DOMAIN, seed, label.encode(), purpose.encode()):
        h.update(len(part).to_bytes(4, "big") + part)
    return h.digest(n)


def _prime(seed: bytes, label: str, which: str, bits: int, exponent: int = 65537) -> int:
    counter = 0
    while True:
        raw = stream(seed, label, f"rsa-prime-{which}-{counter}", (bits + 7) // 8)
        candidate = int.from_bytes(raw, "big") >> (8 * len(raw) - bits)
        candidate |= (3 << (bits - 2)) | 1
        p = int(gmpy2.next_prime(candidate - 1))
        if p.bit_length() == bits and math.gcd(p - 1, exponent) == 1:
            return p
        counter += 1


def derive_rsa(seed: bytes, label: str, bits: int, exponent: int = 65537) -> rsa.RSAPrivateKey:
    """The RSA key of ``bits`` for (seed, label), with the public exponent ``exponent`` (65537
    unless a case needs another: the primes are those of the same stream coprime to it)."""
    e = exponent
    p = _prime(seed, label, "p", bits // 2, e)
    q = _prime(seed, label, "q", bits - bits // 2, e)
    if p == q:  # pragma: no cover - would need a SHAKE collision
        raise ValueError("derived equal primes")
    if p < q:
        p, q = q, p
    lam = (p - 1) * (q - 1) // math.gcd(p - 1, q - 1)
    d = pow(e, -1, lam)
    public = rsa.RSAPublicNumbers(e, p * q)
    numbers = rsa.RSAPrivateNumbers(
        p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), public
    )
    return numbers.private_key(unsafe_skip_rsa_key_validation=True)


def derive_private_key(kind: KeyKind | str, seed: bytes, label: str) -> PrivateKeyTypes:
    """The throwaway private key of ``kind`` for (seed, label)."""
    kind = KeyKind(kind)
    if kind is KeyKind.ED25519:
        return ed25519.Ed25519PrivateKey.from_private_bytes(stream(seed, label, kind, 32))
    if kind is KeyKind.ED448:
        return ed448.Ed448PrivateKey.from_private_bytes(stream(seed, label, kind, 57))
    if kind.order is not None and (curve := kind.curve) is not None:
        order = kind.order
        raw = stream(seed, label, kind, (order.bit_length() + 7) // 8 + 8)
        scalar = int.from_bytes(raw, "big") % (order - 1) + 1
        return ec.derive_private_key(scalar, curve)
    if kind is KeyKind.X25519:
        return x25519.X25519PrivateKey.from_private_bytes(stream(seed, label, kind, 32))
    if kind is KeyKind.X448:
        return x448.X448PrivateKey.from_private_bytes(stream(seed, label, kind, 56))
    if kind is KeyKind.DSA_2048:
        raw = stream(seed, label, kind, (DSA_Q.bit_length() + 7) // 8 + 8)
        x = int.from_bytes(raw, "big") % (DSA_Q - 1) + 1
        params = dsa.DSAParameterNumbers(DSA_P, DSA_Q, DSA_G)
        return dsa.DSAPrivateNumbers(x, dsa.DSAPublicNumbers(pow(DSA_G, x, DSA_P), params)
                                     ).private_key()
    assert kind.rsa_bits is not None
    return derive_rsa(seed, label, kind.rsa_bits)
