"""Key material: the key kinds (:class:`KeyKind`), fixed keys committed under ``keys/``, and
throwaway keys.

A :class:`KeyPair` is an immutable value: its kind, the private key, where it came from, and its
DER SubjectPublicKeyInfo (computed once).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from fixturegen.keys.kinds import FIXED_KINDS, HOST_KEY_TYPES, KeyKind

__all__ = ["FIXED_KINDS", "HOST_KEY_TYPES", "KeyKind", "KeyPair", "Source"]

Source = Literal["fixed", "throwaway", "user"]

@dataclass(frozen=True)
class KeyPair:
    kind: KeyKind
    private: PrivateKeyTypes
    source: Source
    spki: bytes
    #: The file under keys/ for a fixed key, relative to the repository root.
    file: str | None = None

    @classmethod
    def of(cls, kind: KeyKind, private: PrivateKeyTypes, source: Source, file: str | None = None
           ) -> KeyPair:
        spki = private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return cls(kind=kind, private=private, source=source, spki=spki, file=file)

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the DER SubjectPublicKeyInfo, hex (keys/README.md, user keys)."""
        return hashlib.sha256(self.spki).hexdigest()

    def pkcs8_pem(self) -> bytes:
        return self.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
