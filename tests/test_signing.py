"""The raw RSA private operation behind deterministic PSS: OpenSSL's (through ctypes) and GMP's
give the same numbers, and the signatures verify with `cryptography`."""

from __future__ import annotations

import random

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from fixturegen.certs import rsa_raw
from fixturegen.certs.pss import sign_pss
from fixturegen.keys.derive import derive_rsa


@pytest.fixture(scope="module")
def keys() -> list[rsa.RSAPrivateKey]:
    return [derive_rsa(b"signing test", f"rsa-{bits}", bits) for bits in (1024, 2048, 3072)]


def test_openssl_and_gmp_give_m_to_the_d(keys: list[rsa.RSAPrivateKey]) -> None:
    r = random.Random(7)
    for key in keys:
        nums = key.private_numbers()
        n, d = nums.public_numbers.n, nums.d
        for m in (0, 1, 2, n - 1, *(r.randrange(n) for _ in range(5))):
            want = pow(m, d, n)
            assert rsa_raw.crt_private_op(key, m) == want
            assert rsa_raw.private_op(key, m) == want


def test_libcrypto_is_used_where_python_loads_it(keys: list[rsa.RSAPrivateKey]) -> None:
    """Where libcrypto 3 is there (as for Python's ssl module here), the fast path answers
    itself rather than falling back."""
    import ssl

    if not ssl.OPENSSL_VERSION.startswith("OpenSSL 3"):
        pytest.skip(f"Python's ssl uses {ssl.OPENSSL_VERSION}")
    lib = rsa_raw._LibCrypto()
    assert lib.lib is not None
    n = keys[1].private_numbers().public_numbers.n
    assert lib.private_op(keys[1], 12345) == pow(12345, keys[1].private_numbers().d, n)
    assert lib.private_op(keys[1], n) is None  # out of range: the caller's GMP path decides


def test_without_libcrypto_the_signatures_are_the_same_bytes(
        keys: list[rsa.RSAPrivateKey], monkeypatch: pytest.MonkeyPatch) -> None:
    message, salt = b"tbsCertificate bytes", bytes(range(32))
    fast = [sign_pss(key, message, "sha256", salt) for key in keys]
    unusable = rsa_raw._LibCrypto()
    unusable.lib = None
    monkeypatch.setattr(rsa_raw, "_LIBCRYPTO", unusable)
    assert [sign_pss(key, message, "sha256", salt) for key in keys] == fast
    for key, signature in zip(keys, fast, strict=True):
        key.public_key().verify(signature, message, padding.PSS(
            mgf=padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256())


def test_the_contexts_kept_are_bounded(keys: list[rsa.RSAPrivateKey],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    lib = rsa_raw._LibCrypto()
    if lib.lib is None:
        pytest.skip("no libcrypto 3 here")
    monkeypatch.setattr(rsa_raw, "CONTEXTS_KEPT", 2)
    for round_ in range(3):
        for key in keys:
            nums = key.private_numbers()
            m = 1000 + round_
            assert lib.private_op(key, m) == pow(m, nums.d, nums.public_numbers.n)
            assert len(lib.contexts) <= 2
