"""Certificate signature algorithms and the TLS SignatureScheme names (RFC 8446 4.2.3).

A :class:`SigningAlgorithm` is what goes into a certificate's AlgorithmIdentifier and how the
TBS is signed; it can pair any hash with any key (the invalid catalogue needs mismatches). A
:class:`SignatureScheme` is one of the named TLS schemes that the valid matrix uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from fixturegen.certs import der
from fixturegen.certs.pss import sign_pss
from fixturegen.keys import KeyKind
from fixturegen.verify.codes import Flag

#: ``dsa``: no TLS 1.3 scheme; the certificates of DSA keys only (the catalogue's
#: invalid.certificate-key.dsa).
Family = Literal["rsa_pkcs1", "rsa_pss", "ecdsa", "ed25519", "ed448", "dsa"]

HASH_OIDS = {
    "sha1": "1.3.14.3.2.26",
    "sha256": "2.16.840.1.101.3.4.2.1",
    "sha384": "2.16.840.1.101.3.4.2.2",
    "sha512": "2.16.840.1.101.3.4.2.3",
}
HASH_LENGTHS = {"sha1": 20, "sha256": 32, "sha384": 48, "sha512": 64}
_HASHES: dict[str, Callable[[], hashes.HashAlgorithm]] = {
    "sha1": hashes.SHA1, "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512,
}
RSA_PKCS1_OIDS = {
    "sha1": "1.2.840.113549.1.1.5",
    "sha256": "1.2.840.113549.1.1.11",
    "sha384": "1.2.840.113549.1.1.12",
    "sha512": "1.2.840.113549.1.1.13",
}
ECDSA_OIDS = {
    "sha1": "1.2.840.10045.4.1",
    "sha256": "1.2.840.10045.4.3.2",
    "sha384": "1.2.840.10045.4.3.3",
    "sha512": "1.2.840.10045.4.3.4",
}
RSASSA_PSS_OID = "1.2.840.113549.1.1.10"
MGF1_OID = "1.2.840.113549.1.1.8"
DSA_OIDS = {"sha256": "2.16.840.1.101.3.4.3.2"}
ED25519_OID = "1.3.101.112"
ED448_OID = "1.3.101.113"


def hash_object(name: str) -> hashes.HashAlgorithm:
    return _HASHES[name]()


@dataclass(frozen=True)
class SigningAlgorithm:
    family: Family
    hash_name: str | None = None
    #: RSA-PSS salt length in bytes; None means "the hash length".
    salt_length: int | None = None

    @property
    def pss_salt_length(self) -> int:
        assert self.hash_name is not None
        return HASH_LENGTHS[self.hash_name] if self.salt_length is None else self.salt_length

    def algorithm_identifier(self) -> bytes:
        """The DER AlgorithmIdentifier, byte for byte as OpenSSL and webpki write it."""
        if self.family == "rsa_pkcs1":
            assert self.hash_name
            return der.sequence(der.oid(RSA_PKCS1_OIDS[self.hash_name]), der.null())
        if self.family == "ecdsa":
            assert self.hash_name
            return der.sequence(der.oid(ECDSA_OIDS[self.hash_name]))
        if self.family == "ed25519":
            return der.sequence(der.oid(ED25519_OID))
        if self.family == "ed448":
            return der.sequence(der.oid(ED448_OID))
        if self.family == "dsa":
            assert self.hash_name
            return der.sequence(der.oid(DSA_OIDS[self.hash_name]))
        assert self.hash_name
        hash_id = der.sequence(der.oid(HASH_OIDS[self.hash_name]), der.null())
        params = der.sequence(
            der.explicit(0, hash_id),
            der.explicit(1, der.sequence(der.oid(MGF1_OID), hash_id)),
            der.explicit(2, der.integer(self.pss_salt_length)),
        )
        return der.sequence(der.oid(RSASSA_PSS_OID), params)

    def sign(self, key: PrivateKeyTypes, data: bytes, pss_salt: bytes = b"") -> bytes:
        """Sign ``data`` (deterministically: RFC 6979 for ECDSA, a given salt for PSS)."""
        if self.family == "rsa_pkcs1" and isinstance(key, rsa.RSAPrivateKey):
            assert self.hash_name
            return key.sign(data, padding.PKCS1v15(), hash_object(self.hash_name))
        if self.family == "rsa_pss" and isinstance(key, rsa.RSAPrivateKey):
            assert self.hash_name
            if len(pss_salt) != self.pss_salt_length:
                raise ValueError("PSS salt of the wrong length")
            return sign_pss(key, data, self.hash_name, pss_salt)
        if self.family == "ecdsa" and isinstance(key, ec.EllipticCurvePrivateKey):
            assert self.hash_name
            return key.sign(data, ec.ECDSA(hash_object(self.hash_name), deterministic_signing=True))
        if self.family == "ed25519" and isinstance(key, ed25519.Ed25519PrivateKey):
            return key.sign(data)
        if self.family == "ed448" and isinstance(key, ed448.Ed448PrivateKey):
            return key.sign(data)
        if self.family == "dsa" and isinstance(key, dsa.DSAPrivateKey):
            assert self.hash_name
            return _deterministic_dsa(key, data, self.hash_name)
        raise TypeError(f"a {type(key).__name__} cannot sign with {self.family}")


def _deterministic_dsa(key: dsa.DSAPrivateKey, data: bytes, hash_name: str) -> bytes:
    """A DSA signature (FIPS 186-5) whose nonce is derived from the key and the message (in
    the spirit of RFC 6979; ``cryptography`` only signs with a random one), DER-encoded."""
    import hashlib
    import hmac

    numbers = key.private_numbers()
    x = numbers.x
    p, q, g = (numbers.public_numbers.parameter_numbers.p,
               numbers.public_numbers.parameter_numbers.q,
               numbers.public_numbers.parameter_numbers.g)
    digest = hashlib.new(hash_name, data).digest()
    qlen = (q.bit_length() + 7) // 8
    z = int.from_bytes(digest[:qlen], "big")
    counter = 0
    while True:
        mac = hmac.new(x.to_bytes(qlen, "big"), digest + counter.to_bytes(4, "big"),
                       "sha512").digest()
        k = int.from_bytes(mac, "big") % (q - 1) + 1
        r = pow(g, k, p) % q
        s = pow(k, -1, q) * (z + x * r) % q
        if r and s:
            return encode_dss_signature(r, s)
        counter += 1  # pragma: no cover - r or s zero: probability about 2^-255


@dataclass(frozen=True)
class SignatureScheme:
    name: str
    code_point: int
    algorithm: SigningAlgorithm
    #: The certificate key kind the valid matrix uses with this scheme.
    key_kind: KeyKind
    #: Widely used implementations cannot verify it: fixtures are `acceptable`, not `valid`.
    borderline_flag: Flag | None = None

    @property
    def hash_length(self) -> int:
        """The transcript-hash length its CertificateVerify vectors use: its hash's digest
        length (EdDSA has none: 32 bytes for Ed25519, 64 for Ed448)."""
        if self.algorithm.hash_name:
            return HASH_LENGTHS[self.algorithm.hash_name]
        return 64 if self.algorithm.family == "ed448" else 32


def _scheme(name: str, code: int, family: Family, hash_name: str | None, kind: KeyKind,
            flag: Flag | None = None) -> SignatureScheme:
    return SignatureScheme(name, code, SigningAlgorithm(family, hash_name), kind, flag)


SCHEMES: dict[str, SignatureScheme] = {
    s.name: s
    for s in (
        _scheme("rsa_pkcs1_sha256", 0x0401, "rsa_pkcs1", "sha256", KeyKind.RSA_2048),
        _scheme("rsa_pkcs1_sha384", 0x0501, "rsa_pkcs1", "sha384", KeyKind.RSA_2048),
        _scheme("rsa_pkcs1_sha512", 0x0601, "rsa_pkcs1", "sha512", KeyKind.RSA_2048),
        _scheme("rsa_pss_rsae_sha256", 0x0804, "rsa_pss", "sha256", KeyKind.RSA_2048),
        _scheme("rsa_pss_rsae_sha384", 0x0805, "rsa_pss", "sha384", KeyKind.RSA_2048),
        _scheme("rsa_pss_rsae_sha512", 0x0806, "rsa_pss", "sha512", KeyKind.RSA_2048),
        _scheme("ecdsa_secp256r1_sha256", 0x0403, "ecdsa", "sha256", KeyKind.P256),
        _scheme("ecdsa_secp384r1_sha384", 0x0503, "ecdsa", "sha384", KeyKind.P384),
        _scheme("ecdsa_secp521r1_sha512", 0x0603, "ecdsa", "sha512", KeyKind.P521,
                Flag.P521_CERTIFICATE),
        _scheme("ed25519", 0x0807, "ed25519", None, KeyKind.ED25519),
        _scheme("ed448", 0x0808, "ed448", None, KeyKind.ED448, Flag.ED448_CERTIFICATE),
    )
}
