"""TBSCertificate and Certificate assembly (RFC 5280 section 4.1).

:class:`TBSParts` holds the complete DER of each TBSCertificate field, so a case can replace any
one of them (a mutation) and re-sign. :class:`Draft` is a certificate before signing: key,
algorithm, host key and TBS; :meth:`Draft.sign` gives the DER certificate.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from fixturegen.certs import der
from fixturegen.certs.extension import libp2p_extension
from fixturegen.certs.schemes import SigningAlgorithm
from fixturegen.identity.hostkey import HostKey
from fixturegen.keys import KeyPair

OID_COMMON_NAME = "2.5.4.3"
OID_ORGANIZATION = "2.5.4.10"

#: The documented validity window of every valid fixture: it holds every date of 2000..2999.
NOT_BEFORE = datetime(1999, 1, 1, tzinfo=UTC)
NOT_AFTER = datetime(3000, 1, 1, tzinfo=UTC)

VERSION_V3 = der.explicit(0, der.integer(2))


def name(*attributes: tuple[str, str]) -> bytes:
    """An X.501 Name, one attribute per RDN, values as UTF8String."""
    return der.sequence(
        *(der.set_of(der.sequence(der.oid(o), der.utf8_string(v))) for o, v in attributes)
    )


DEFAULT_NAME = name((OID_ORGANIZATION, "fixturegen"), (OID_COMMON_NAME, "libp2p TLS fixture"))
EMPTY_NAME = der.sequence()


def validity(not_before: datetime, not_after: datetime) -> bytes:
    return der.sequence(der.time(not_before), der.time(not_after))


def time_text(tlv: bytes) -> str:
    """The ISO 8601 form of a DER UTCTime or GeneralizedTime; a malformed one as written."""
    text = tlv[2:].decode("ascii", "replace")
    utc = tlv[0] == 0x17
    if not (len(text) == (13 if utc else 15) and text[:-1].isdigit() and text.endswith("Z")):
        return text
    if utc:
        year = int(text[:2])
        text = f"{1900 + year if year >= 50 else 2000 + year}{text[2:]}"
    return f"{text[:4]}-{text[4:6]}-{text[6:8]}T{text[8:10]}:{text[10:12]}:{text[12:14]}Z"


def derived_serial(fixture_id: str) -> int:
    """A positive serial of at most 16 octets, from SHA-256 of the fixture id."""
    raw = bytearray(hashlib.sha256(b"fixturegen/serial/v1\0" + fixture_id.encode()).digest()[:16])
    raw[0] &= 0x7F
    raw[0] |= 0x40  # a fixed length (16 octets), never zero
    return int.from_bytes(raw, "big")


@dataclass(frozen=True)
class TBSParts:
    version: bytes
    serial: bytes
    signature: bytes
    issuer: bytes
    validity: bytes
    subject: bytes
    spki: bytes
    issuer_unique_id: bytes = b""
    subject_unique_id: bytes = b""
    extensions: tuple[bytes, ...] = ()

    def encode(self) -> bytes:
        exts = der.explicit(3, der.sequence(*self.extensions)) if self.extensions else b""
        return der.sequence(
            self.version, self.serial, self.signature, self.issuer, self.validity,
            self.subject, self.spki, self.issuer_unique_id, self.subject_unique_id, exts,
        )


def assemble(tbs: bytes, algorithm_identifier: bytes, signature: bytes) -> bytes:
    return der.sequence(tbs, algorithm_identifier, der.bit_string(signature))


@dataclass(frozen=True)
class Draft:
    """A certificate before signing. Change it with :meth:`but`, then :meth:`sign`."""

    cert_key: KeyPair
    algorithm: SigningAlgorithm
    host: HostKey
    tbs: TBSParts
    pss_salt: bytes = b""
    #: The key that makes the self-signature (default: the certificate key).
    signer: KeyPair | None = field(default=None)
    #: The TLS SignatureScheme name the manifest states for this certificate.
    scheme: str = ""

    def but(self, **tbs_changes: object) -> Draft:
        return replace(self, tbs=replace(self.tbs, **tbs_changes))  # type: ignore[arg-type]

    def validity_text(self) -> tuple[str, str]:
        """notBefore and notAfter in ISO 8601 (a deliberately malformed time: as written)."""
        not_before, not_after = der.children(self.tbs.validity)
        return time_text(not_before), time_text(not_after)

    def serial_hex(self) -> str:
        """The serial number's content octets, lower-case hex."""
        return self.tbs.serial[2:].hex()

    def tbs_der(self) -> bytes:
        return self.tbs.encode()

    def signature(self, tbs: bytes | None = None) -> bytes:
        key = (self.signer or self.cert_key).private
        return self.algorithm.sign(key, self.tbs_der() if tbs is None else tbs, self.pss_salt)

    def sign(self, outer_algorithm: bytes | None = None) -> bytes:
        tbs = self.tbs_der()
        outer = outer_algorithm or self.algorithm.algorithm_identifier()
        return assemble(tbs, outer, self.signature(tbs))


def draft(
    cert_key: KeyPair,
    algorithm: SigningAlgorithm,
    host: HostKey,
    *,
    serial: int,
    pss_salt: bytes = b"",
    critical: bool = False,
    scheme: str = "",
    not_before: datetime = NOT_BEFORE,
    not_after: datetime = NOT_AFTER,
    subject: bytes = DEFAULT_NAME,
    issuer: bytes | None = None,
    extra_extensions: tuple[bytes, ...] = (),
) -> Draft:
    """The common case: a self-signed v3 certificate with a valid libp2p extension."""
    tbs = TBSParts(
        version=VERSION_V3,
        serial=der.integer(serial),
        signature=algorithm.algorithm_identifier(),
        issuer=subject if issuer is None else issuer,
        validity=validity(not_before, not_after),
        subject=subject,
        spki=cert_key.spki,
        extensions=(libp2p_extension(host, cert_key.spki, critical), *extra_extensions),
    )
    return Draft(cert_key, algorithm, host, tbs, pss_salt, scheme=scheme)
