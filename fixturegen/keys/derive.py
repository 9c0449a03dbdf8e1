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

from fixturegen.keys.kinds import KeyKind

DOMAIN = b"fixturegen/throwaway-key/v1"

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
    assert kind.rsa_bits is not None
    return derive_rsa(seed, label, kind.rsa_bits)
