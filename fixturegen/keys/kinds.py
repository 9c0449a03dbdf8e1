"""The one enum of key kinds. A :class:`KeyKind` owns everything the toolkit knows about a kind:
its curve or modulus, whether it can be a libp2p host key and of which type, the TLS 1.3 scheme
it signs a CertificateVerify with, whether a fixed key of it is committed under ``keys/``, how
to make a fresh one, and the parameters its seeded derivation needs (``keys/derive.py``).

A new key kind is one member here, its fixed key under ``keys/`` (``fixturegen keys generate
--only KIND``), and, if a certificate scheme uses it, its row in ``certs/schemes.py``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa, x448, x25519
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

HostKeyType = Literal["RSA", "Ed25519", "Secp256k1", "ECDSA"]
#: The libp2p host key types (peer-ids.md), as the protobuf and the manifest name them.
HOST_KEY_TYPES: tuple[HostKeyType, ...] = ("RSA", "Ed25519", "Secp256k1", "ECDSA")
#: The same types as the harness protocol and its results name them (lower case).
HostKeyName = Literal["ed25519", "secp256k1", "ecdsa", "rsa"]
HOST_KEY_NAMES: tuple[HostKeyName, ...] = ("ed25519", "secp256k1", "ecdsa", "rsa")
assert sorted(HOST_KEY_NAMES) == sorted(t.lower() for t in HOST_KEY_TYPES)

_CURVES: dict[str, type[ec.EllipticCurve]] = {
    "secp256r1": ec.SECP256R1, "secp384r1": ec.SECP384R1, "secp521r1": ec.SECP521R1,
    "secp256k1": ec.SECP256K1,
}


class KeyKind(StrEnum):
    """A kind of key: ``rsa-2048``, ``p256``, ``ed25519``, ..."""

    #: RSA modulus size in bits (None for the other kinds).
    rsa_bits: int | None
    #: The elliptic curve's name in ``cryptography`` (None for RSA and Edwards kinds).
    curve_name: str | None
    #: The curve order n (EC kinds): the seeded derivation reduces into [1, n-1].
    order: int | None
    #: The libp2p host key type this kind makes, or None when it cannot be one (Ed448).
    host_key_type: HostKeyType | None
    #: The TLS 1.3 SignatureScheme it signs a CertificateVerify with (None: none fits).
    cv_scheme: str | None
    #: Whether a fixed key of this kind is committed under ``keys/``.
    fixed: bool

    if not TYPE_CHECKING:  # members are made from tuples; calls look a value up
        def __new__(cls, value: str, rsa_bits: int | None, curve_name: str | None,
                    order: int | None, host_key_type: HostKeyType | None, cv_scheme: str | None,
                    fixed: bool) -> KeyKind:
            member = str.__new__(cls, value)
            member._value_ = value
            member.rsa_bits = rsa_bits
            member.curve_name = curve_name
            member.order = order
            member.host_key_type = host_key_type
            member.cv_scheme = cv_scheme
            member.fixed = fixed
            return member

    RSA_1024 = ("rsa-1024", 1024, None, None, "RSA", "rsa_pss_rsae_sha256", False)
    RSA_2048 = ("rsa-2048", 2048, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_3072 = ("rsa-3072", 3072, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_4096 = ("rsa-4096", 4096, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    # The largest RSA host key go-libp2p and js-libp2p accept, and one past it (host keys of the
    # catalogue's size cases). Fixed, not derived: a prime search at these sizes costs seconds.
    RSA_8192 = ("rsa-8192", 8192, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_8704 = ("rsa-8704", 8704, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    # One bit below and above each RSA size limit a shipped implementation enforces (go-libp2p's
    # 2048 and 8192, py-libp2p's 4096; js-libp2p's PKIX byte limit falls between 8191 and
    # 8192): the host keys of the boundary model (cases/boundaries.py). Fixed, like the others.
    RSA_2047 = ("rsa-2047", 2047, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_2049 = ("rsa-2049", 2049, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_4095 = ("rsa-4095", 4095, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_4097 = ("rsa-4097", 4097, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_8191 = ("rsa-8191", 8191, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    RSA_8193 = ("rsa-8193", 8193, None, None, "RSA", "rsa_pss_rsae_sha256", True)
    P256 = ("p256", None, "secp256r1",
            0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
            "ECDSA", "ecdsa_secp256r1_sha256", True)
    P384 = ("p384", None, "secp384r1",
            int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77A"
                "ECEC196ACCC52973", 16),
            "ECDSA", "ecdsa_secp384r1_sha384", True)
    P521 = ("p521", None, "secp521r1",
            int("1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"
                "A51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409", 16),
            "ECDSA", "ecdsa_secp521r1_sha512", True)
    ED25519 = ("ed25519", None, None, None, "Ed25519", "ed25519", True)
    ED448 = ("ed448", None, None, None, None, "ed448", True)
    SECP256K1 = ("secp256k1", None, "secp256k1",
                 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141,
                 "Secp256k1", None, True)
    # Certificate keys outside the signature families TLS 1.3 and libp2p use (the catalogue's
    # invalid.certificate-key.* cases): DSA signs, but no TLS 1.3 scheme names it; X25519 and
    # X448 cannot sign at all.
    DSA_2048 = ("dsa-2048", None, None, None, None, None, False)
    X25519 = ("x25519", None, None, None, None, None, False)
    X448 = ("x448", None, None, None, None, None, False)

    @property
    def curve(self) -> ec.EllipticCurve | None:
        return _CURVES[self.curve_name]() if self.curve_name else None

    @property
    def family(self) -> str:
        """``rsa`` for every modulus, else the kind itself (the unit a TLS scheme fits)."""
        return "rsa" if self.rsa_bits else self.value

    def generate(self) -> PrivateKeyTypes:
        """A fresh key from the operating system's randomness (fixed keys, benchmarks)."""
        if self.rsa_bits:
            return rsa.generate_private_key(65537, self.rsa_bits)
        if (curve := self.curve) is not None:
            return ec.generate_private_key(curve)
        if self is KeyKind.ED25519:
            return ed25519.Ed25519PrivateKey.generate()
        if self is KeyKind.DSA_2048:
            return dsa.generate_private_key(2048)
        if self is KeyKind.X25519:
            return x25519.X25519PrivateKey.generate()
        if self is KeyKind.X448:
            return x448.X448PrivateKey.generate()
        return ed448.Ed448PrivateKey.generate()

    @classmethod
    def of(cls, private: PrivateKeyTypes) -> KeyKind:
        """The kind of a private key object (a fixed key file, a user's key)."""
        if isinstance(private, rsa.RSAPrivateKey):
            for kind in cls:
                if kind.rsa_bits == private.key_size:
                    return kind
            raise ValueError(f"an RSA key of {private.key_size} bits is not a supported kind")
        if isinstance(private, ec.EllipticCurvePrivateKey):
            for kind in cls:
                if kind.curve_name == private.curve.name:
                    return kind
            raise ValueError(f"the curve {private.curve.name} is not a supported kind")
        if isinstance(private, ed25519.Ed25519PrivateKey):
            return cls.ED25519
        if isinstance(private, ed448.Ed448PrivateKey):
            return cls.ED448
        if isinstance(private, dsa.DSAPrivateKey) and private.key_size == 2048:
            return cls.DSA_2048
        if isinstance(private, x25519.X25519PrivateKey):
            return cls.X25519
        if isinstance(private, x448.X448PrivateKey):
            return cls.X448
        raise ValueError(f"unsupported private key type {type(private).__name__}")

    @classmethod
    def for_host_type(cls, host_key_type: HostKeyType | str) -> KeyKind:
        """The kind the catalogue uses for a host key of this type by default."""
        return {"RSA": cls.RSA_2048, "Ed25519": cls.ED25519, "Secp256k1": cls.SECP256K1,
                "ECDSA": cls.P256}[host_key_type]


#: The fixed keys committed under keys/, one per kind that certificates and host keys use.
FIXED_KINDS: tuple[KeyKind, ...] = tuple(k for k in KeyKind if k.fixed)
