"""Fixed keys match their documented fingerprints; throwaway keys are derived deterministically
and are real keys of the requested kind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from fixturegen.keys import FIXED_KINDS, KeyKind, KeyPair
from fixturegen.keys.derive import derive_private_key
from fixturegen.keys.fixed import fingerprint, load_fixed

ROOT = Path(__file__).resolve().parents[1]


def test_fixed_keys_match_the_readme() -> None:
    text = (ROOT / "keys" / "README.md").read_text()
    rows = dict(re.findall(r"\| `([\w-]+)\.pem` \| [\w-]+ \| `([0-9a-f]{64})` \|", text))
    assert set(rows) == set(FIXED_KINDS)
    for kind in FIXED_KINDS:
        assert fingerprint(load_fixed(kind)) == rows[kind], kind
    assert "TEST ONLY" in text and "fixturegen keys generate" in text


@pytest.mark.parametrize("kind", ["ed25519", "ed448", "p256", "p384", "p521", "secp256k1",
                                  "rsa-1024", "rsa-2048"])
def test_derivation_is_deterministic_and_label_bound(kind: str) -> None:
    a = KeyPair.of(kind, derive_private_key(kind, b"seed", "fixture/certificate"), "throwaway")
    b = KeyPair.of(kind, derive_private_key(kind, b"seed", "fixture/certificate"), "throwaway")
    c = KeyPair.of(kind, derive_private_key(kind, b"seed", "fixture/host"), "throwaway")
    d = KeyPair.of(kind, derive_private_key(kind, b"other", "fixture/certificate"), "throwaway")
    assert a.spki == b.spki
    assert len({a.spki, c.spki, d.spki}) == 3


@pytest.mark.parametrize("bits", [1024, 2048, 3072])
def test_derived_rsa_keys_pass_openssl_validation(bits: int) -> None:
    key = derive_private_key(f"rsa-{bits}", b"seed", "label")
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == bits
    n = key.private_numbers()
    # the full consistency check that derivation skips for speed
    again = rsa.RSAPrivateNumbers(n.p, n.q, n.d, n.dmp1, n.dmq1, n.iqmp, n.public_numbers)
    again.private_key()
    assert n.public_numbers.e == 65537


@pytest.mark.parametrize("kind", [k for k in KeyKind if k.curve_name])
def test_curve_orders_are_the_group_orders(kind: KeyKind) -> None:
    """(n - 1) * G = -G only if n is the order of G."""
    curve, order = kind.curve, kind.order
    assert curve is not None and order is not None
    g = ec.derive_private_key(1, curve).public_key().public_numbers()
    minus_g = ec.derive_private_key(order - 1, curve).public_key().public_numbers()
    assert minus_g.x == g.x and minus_g.y != g.y
    with pytest.raises(ValueError):
        ec.derive_private_key(order, curve)
