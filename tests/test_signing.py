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


def _mapped_libcrypto3() -> bool:
    """Whether this process already has libcrypto 3 mapped (Linux: Python's ssl and hashlib
    load the system's), in which case the loader must find it too."""
    import hashlib
    import ssl

    assert hashlib and ssl
    try:
        with open("/proc/self/maps") as maps:
            return "libcrypto.so.3" in maps.read()
    except OSError:
        return False


@pytest.fixture(scope="module")
def fast() -> rsa_raw._LibCrypto:
    """libcrypto's path alone (a None answer is a failure here, not a fallback)."""
    lib = rsa_raw._LibCrypto()
    if lib._load() is None:
        if _mapped_libcrypto3():
            pytest.fail("libcrypto.so.3 is mapped in this process, yet it did not load")
        pytest.skip("no libcrypto 3 on this machine: GMP alone")
    return lib


def test_openssl_and_gmp_give_m_to_the_d(keys: list[rsa.RSAPrivateKey],
                                         fast: rsa_raw._LibCrypto) -> None:
    r = random.Random(7)
    for key in keys:
        nums = key.private_numbers()
        n, d = nums.public_numbers.n, nums.d
        for m in (0, 1, 2, n - 1, *(r.randrange(n) for _ in range(5))):
            want = pow(m, d, n)
            assert fast.private_op(key, m) == want
            assert rsa_raw.crt_private_op(key, m) == want
            assert rsa_raw.private_op(key, m) == want
        assert fast.private_op(key, n) is None  # out of range: the caller's GMP path decides


def test_without_libcrypto_the_signatures_are_the_same_bytes(
        keys: list[rsa.RSAPrivateKey], fast: rsa_raw._LibCrypto,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert rsa_raw._LIBCRYPTO.private_op(keys[0], 5) is not None  # signing goes through it
    message, salt = b"tbsCertificate bytes", bytes(range(32))
    fast = [sign_pss(key, message, "sha256", salt) for key in keys]
    unusable = rsa_raw._LibCrypto()
    unusable.loaded = True  # and found nothing
    monkeypatch.setattr(rsa_raw, "_LIBCRYPTO", unusable)
    assert [sign_pss(key, message, "sha256", salt) for key in keys] == fast
    for key, signature in zip(keys, fast, strict=True):
        key.public_key().verify(signature, message, padding.PSS(
            mgf=padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256())


def test_the_contexts_kept_are_bounded(keys: list[rsa.RSAPrivateKey],
                                       fast: rsa_raw._LibCrypto,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert fast.lib is not None
    lib = rsa_raw._LibCrypto()  # none kept yet
    monkeypatch.setattr(rsa_raw, "CONTEXTS_KEPT", 2)
    for round_ in range(3):
        for key in keys:
            nums = key.private_numbers()
            m = 1000 + round_
            assert lib.private_op(key, m) == pow(m, nums.d, nums.public_numbers.n)
            assert len(lib.contexts) <= 2
