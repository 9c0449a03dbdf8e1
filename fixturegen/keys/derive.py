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
"""

from __future__ import annotations

import hashlib
import math

import gmpy2
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from fixturegen.keys import EC_CURVES, RSA_BITS

DOMAIN = b"fixturegen/throwaway-key/v1"

_ORDERS: dict[str, int] = {
    "p256": 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    "p384": int(
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973",
        16,
    ),
    "p521": int(
        "1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"
        "A51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409",
        16,
    ),
    "secp256k1": 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141,
}


def stream(seed: bytes, label: str, purpose: str, n: int) -> bytes:
    """``n`` derived bytes for (seed, label, purpose); distinct inputs never share a prefix."""
    h = hashlib.shake_256()
    for part in (DOMAIN, seed, label.encode(), purpose.encode()):
        h.update(len(part).to_bytes(4, "big") + part)
    return h.digest(n)


def _prime(seed: bytes, label: str, which: str, bits: int) -> int:
    counter = 0
    while True:
        raw = stream(seed, label, f"rsa-prime-{which}-{counter}", (bits + 7) // 8)
        candidate = int.from_bytes(raw, "big") >> (8 * len(raw) - bits)
        candidate |= (3 << (bits - 2)) | 1
        p = int(gmpy2.next_prime(candidate - 1))
        if p.bit_length() == bits and math.gcd(p - 1, 65537) == 1:
            return p
        counter += 1


def derive_rsa(seed: bytes, label: str, bits: int) -> rsa.RSAPrivateKey:
    e = 65537
    p = _prime(seed, label, "p", bits // 2)
    q = _prime(seed, label, "q", bits - bits // 2)
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


def derive_private_key(kind: str, seed: bytes, label: str) -> PrivateKeyTypes:
    """The throwaway private key of ``kind`` for (seed, label)."""
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.from_private_bytes(stream(seed, label, kind, 32))
    if kind == "ed448":
        return ed448.Ed448PrivateKey.from_private_bytes(stream(seed, label, kind, 57))
    if kind in EC_CURVES:
        order = _ORDERS[kind]
        raw = stream(seed, label, kind, (order.bit_length() + 7) // 8 + 8)
        scalar = int.from_bytes(raw, "big") % (order - 1) + 1
        return ec.derive_private_key(scalar, EC_CURVES[kind])
    if kind in RSA_BITS:
        return derive_rsa(seed, label, RSA_BITS[kind])
    raise ValueError(f"unknown key kind {kind!r}")
