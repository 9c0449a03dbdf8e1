"""Key material: the key kinds, fixed keys committed under ``keys/``, and throwaway keys.

A :class:`KeyPair` is an immutable value: its kind, the private key, where it came from, and its
DER SubjectPublicKeyInfo (computed once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

Source = Literal["fixed", "throwaway"]

#: Every key kind the toolkit can make, with the curve or modulus it stands for.
RSA_BITS: dict[str, int] = {"rsa-1024": 1024, "rsa-2048": 2048, "rsa-3072": 3072, "rsa-4096": 4096}
EC_CURVES: dict[str, ec.EllipticCurve] = {
    "p256": ec.SECP256R1(),
    "p384": ec.SECP384R1(),
    "p521": ec.SECP521R1(),
    "secp256k1": ec.SECP256K1(),
}
EDWARDS = ("ed25519", "ed448")
KINDS: tuple[str, ...] = (*RSA_BITS, *EC_CURVES, *EDWARDS)

#: The fixed keys committed under keys/, one per kind that certificates and host keys use.
FIXED_KINDS: tuple[str, ...] = (
    "rsa-2048", "rsa-3072", "rsa-4096", "p256", "p384", "p521", "ed25519", "ed448", "secp256k1",
)


@dataclass(frozen=True)
class KeyPair:
    kind: str
    private: PrivateKeyTypes
    source: Source
    spki: bytes
    #: The file under keys/ for a fixed key, relative to the repository root.
    file: str | None = None

    @classmethod
    def of(cls, kind: str, private: PrivateKeyTypes, source: Source, file: str | None = None
           ) -> KeyPair:
        spki = private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return cls(kind=kind, private=private, source=source, spki=spki, file=file)

    def pkcs8_pem(self) -> bytes:
        return self.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def kind_of(private: PrivateKeyTypes) -> str:
    """The kind name of a private key object (used when loading fixed keys)."""
    if isinstance(private, rsa.RSAPrivateKey):
        return f"rsa-{private.key_size}"
    if isinstance(private, ec.EllipticCurvePrivateKey):
        for name, curve in EC_CURVES.items():
            if curve.name == private.curve.name:
                return name
    if isinstance(private, ed25519.Ed25519PrivateKey):
        return "ed25519"
    if isinstance(private, ed448.Ed448PrivateKey):
        return "ed448"
    raise ValueError(f"unsupported private key type {type(private).__name__}")
