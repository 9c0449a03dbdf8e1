"""Host keys: a libp2p identity key, its protobuf public key and its signature rule.

| type      | Data                      | signature                                      |
|-----------|---------------------------|------------------------------------------------|
| RSA       | DER SubjectPublicKeyInfo  | RSASSA-PKCS1-v1_5, SHA-256                     |
| Ed25519   | 32 raw bytes              | Ed25519                                        |
| Secp256k1 | 33-byte compressed point  | ECDSA, SHA-256, DER, deterministic and low-S   |
| ECDSA     | DER SubjectPublicKeyInfo  | ECDSA, SHA-256 (every curve), DER, deterministic |
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from fixturegen.identity.peerid import peer_id_base58, peer_id_cid
from fixturegen.identity.protobuf import KEY_TYPE_CODES, encode_public_key
from fixturegen.keys import HOST_KEY_TYPES, KeyPair
from fixturegen.keys.kinds import HostKeyType

__all__ = ["HOST_KEY_TYPES", "HostKey", "flip_s", "host_key_type_of"]

SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def host_key_type_of(pair: KeyPair) -> HostKeyType:
    if pair.kind.host_key_type is None:
        raise ValueError(f"a {pair.kind} key cannot be a libp2p host key")
    return pair.kind.host_key_type


def flip_s(der_signature: bytes, order: int) -> bytes:
    """The other valid ECDSA signature (r, n - s): low-S becomes high-S and back."""
    r, s = decode_dss_signature(der_signature)
    return encode_dss_signature(r, order - s)


@dataclass(frozen=True)
class HostKey:
    pair: KeyPair

    @cached_property
    def type(self) -> HostKeyType:
        return host_key_type_of(self.pair)

    @cached_property
    def data(self) -> bytes:
        """The ``Data`` field of the protobuf ``PublicKey``."""
        if self.type == "Ed25519":
            return self.pair.private.public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw
            )
        if self.type == "Secp256k1":
            return self.pair.private.public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint
            )
        return self.pair.spki

    @cached_property
    def protobuf(self) -> bytes:
        return encode_public_key(KEY_TYPE_CODES[self.type], self.data)

    @cached_property
    def peer_id(self) -> str:
        return peer_id_base58(self.protobuf)

    @cached_property
    def peer_id_cid(self) -> str:
        return peer_id_cid(self.protobuf)

    def sign(self, message: bytes) -> bytes:
        key = self.pair.private
        if isinstance(key, ed25519.Ed25519PrivateKey):
            return key.sign(message)
        if isinstance(key, rsa.RSAPrivateKey):
            return key.sign(message, padding.PKCS1v15(), hashes.SHA256())
        if isinstance(key, ec.EllipticCurvePrivateKey):
            sig = key.sign(message, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
            if self.type == "Secp256k1":
                _, s = decode_dss_signature(sig)
                if s > SECP256K1_ORDER // 2:
                    sig = flip_s(sig, SECP256K1_ORDER)
            return sig
        raise TypeError(f"cannot sign with {type(key).__name__}")
