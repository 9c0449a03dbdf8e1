"""secp256k1 public-key recovery: which of the two candidate nonce points an ECDSA signature
was made with (the recovery id of the 65-byte compact form Bitcoin and Ethereum tooling use).
Only what the catalogue needs: affine arithmetic over the curve's field, never used to sign."""

from __future__ import annotations

P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)
Point = tuple[int, int] | None


def _add(a: Point, b: Point) -> Point:
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        slope = 3 * a[0] * a[0] * pow(2 * a[1], -1, P)
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], -1, P)
    x = (slope * slope - a[0] - b[0]) % P
    return x, (slope * (a[0] - x) - a[1]) % P


def _multiply(k: int, point: Point) -> Point:
    result: Point = None
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


def recover(digest: bytes, r: int, s: int, recovery_id: int) -> Point:
    """The public point that signed ``digest`` with (r, s), taking the nonce point's y of
    parity ``recovery_id`` (SEC1 4.1.6). The nonce point's x is taken to be r itself: for
    r < p - n it could also be r + n (recovery ids 2 and 3), which this never tries."""
    y = pow((r**3 + 7) % P, (P + 1) // 4, P)
    if y % 2 != recovery_id:
        y = P - y
    e = int.from_bytes(digest, "big") % N
    inverse = pow(r, -1, N)
    return _add(_multiply(s * inverse % N, (r, y)), _multiply((-e * inverse) % N, G))


def recovery_id(digest: bytes, r: int, s: int, public: tuple[int, int]) -> int:
    """The recovery id (0 or 1) under which (r, s) over ``digest`` recovers ``public``."""
    for candidate in (0, 1):
        if recover(digest, r, s, candidate) == public:
            return candidate
    raise ValueError("the signature recovers neither candidate key")
