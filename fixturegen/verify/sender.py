"""The sender's judgement: what a certificate an implementation *made* gives a receiver the right
to refuse.

The verdict answers "must a libp2p verifier accept this?"; the judgement answers "did the maker
send what the spec and RFC 5280 allow a sender?". It walks the certificate leniently (DER
lengths and tags must hold, contents are read as written, not rejected), so it names every
:class:`~fixturegen.verify.codes.SenderFlag` it finds, also in a certificate the verifier
rejects at its first check. Each flag comes with a detail (the OIDs of the critical extensions,
the time as written, the serial's length ...). Every sender flag entitles a receiver to refuse:
the interop stage blames a refusal on the maker when the certificate carries one.
"""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from fixturegen.verify.codes import ErrorCode, SenderFlag
from fixturegen.verify.der import (
    MAX_CERTIFICATE_BYTES,
    UTCTIME_RANGE,
    DERError,
    elements,
    oid_text,
)
from fixturegen.verify.x509 import LIBP2P_OID

#: The X.509 extensions a critical-extension detail names (anything else: its OID alone).
EXTENSION_NAMES = {
    "2.5.29.19": "basicConstraints",
    "2.5.29.15": "keyUsage",
    "2.5.29.37": "extKeyUsage",
    "2.5.29.17": "subjectAltName",
    "2.5.29.14": "subjectKeyIdentifier",
    "2.5.29.35": "authorityKeyIdentifier",
}
SUBJECT_ALT_NAME = "2.5.29.17"
EMPTY_NAME = b"\x30\x00"


#: The reference verifier's refusals each sender flag explains: when the reference rejects a
#: certificate with one of these codes and the certificate has the flag, the refusal is the
#: sender's doing. (The reference accepts an empty name, a GeneralizedTime before 2050 and
#: unique ids: no refusal of its own is theirs.)
REFUSED_AS: dict[SenderFlag, frozenset[ErrorCode]] = {
    SenderFlag.NOT_DER: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.CHAIN_NOT_ONE: frozenset({ErrorCode.CHAIN_LENGTH}),
    SenderFlag.VERSION_NOT_V3: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.SERIAL_NOT_POSITIVE: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.SERIAL_TOO_LONG: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.SERIAL_NOT_MINIMAL: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.SIGNATURE_ALGORITHM_MISMATCH: frozenset({
        ErrorCode.SIGNATURE_ALGORITHM_MISMATCH, ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME}),
    SenderFlag.EMPTY_ISSUER: frozenset(),
    SenderFlag.EMPTY_SUBJECT: frozenset(),
    SenderFlag.FRACTIONAL_SECONDS: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.TIME_NOT_DER: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.GENERALIZED_TIME_BEFORE_2050: frozenset(),
    SenderFlag.NOT_VALID_AT_RECEIPT: frozenset({ErrorCode.EXPIRED, ErrorCode.NOT_YET_VALID}),
    SenderFlag.UNIQUE_ID_PRESENT: frozenset(),
    SenderFlag.CRITICAL_FALSE_ENCODED: frozenset({ErrorCode.MALFORMED_CERTIFICATE}),
    SenderFlag.EXTENSION_DUPLICATE: frozenset({ErrorCode.MALFORMED_CERTIFICATE,
                                               ErrorCode.EXTENSION_DUPLICATE}),
    SenderFlag.CRITICAL_EXTENSION: frozenset({ErrorCode.UNKNOWN_CRITICAL_EXTENSION}),
}


@dataclass(frozen=True, slots=True)
class SenderFinding:
    """One sender flag on one certificate, and what it is about."""

    flag: SenderFlag
    detail: str


class _Found:
    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: dict[SenderFlag, list[str]] = {}

    def add(self, flag: SenderFlag, detail: str) -> None:
        details = self.items.setdefault(flag, [])
        if detail not in details:
            details.append(detail)

    def result(self) -> list[SenderFinding]:
        """In the order of :class:`SenderFlag` (the same certificate, the same list)."""
        return [SenderFinding(flag, "; ".join(self.items[flag]))
                for flag in SenderFlag if flag in self.items]


def judge(chain: Sequence[bytes], *, at: datetime | None = None) -> list[SenderFinding]:
    """The sender flags of a chain an implementation made (its leaf is judged), at ``at``
    (default: now) for the validity window. Never raises on any bytes."""
    found = _Found()
    if len(chain) != 1:
        found.add(SenderFlag.CHAIN_NOT_ONE, f"{len(chain)} certificates")
    if chain:
        moment = int((at or datetime.now(UTC)).timestamp())
        try:
            _leaf(chain[0], moment, found)
        except (DERError, IndexError, ValueError) as exc:
            found.add(SenderFlag.NOT_DER, str(exc) or type(exc).__name__)
    return found.result()


def _leaf(buf: bytes, moment: int, found: _Found) -> None:
    if len(buf) > MAX_CERTIFICATE_BYTES:
        raise DERError(f"certificate of {len(buf)} bytes (limit {MAX_CERTIFICATE_BYTES})")
    top = elements(buf, 0, len(buf))
    if len(top) != 1 or top[0][0] != 0x30:
        raise DERError("not one SEQUENCE")
    parts = elements(buf, top[0][2], top[0][3])
    if len(parts) != 3 or parts[0][0] != 0x30 or parts[1][0] != 0x30:
        raise DERError("not { tbsCertificate, signatureAlgorithm, signature }")
    outer_algorithm = buf[parts[1][1]:parts[1][3]]
    fields = elements(buf, parts[0][2], parts[0][3])
    if fields and fields[0][0] == 0xA0:
        version = buf[fields[0][2]:fields[0][3]]
        if version != b"\x02\x01\x02":
            found.add(SenderFlag.VERSION_NOT_V3, f"version field {version.hex()}")
        fields = fields[1:]
    else:
        found.add(SenderFlag.VERSION_NOT_V3, "no version field (v1)")
    if len(fields) < 6:
        raise DERError("tbsCertificate has too few fields")
    serial, algorithm, issuer, validity, subject, _spki = fields[:6]
    _serial(buf, serial, found)
    if buf[algorithm[1]:algorithm[3]] != outer_algorithm:
        found.add(SenderFlag.SIGNATURE_ALGORITHM_MISMATCH,
                  f"{_algorithm_oid(buf, algorithm)} inside, "
                  f"{_algorithm_oid(buf, parts[1])} outside")
    if buf[issuer[1]:issuer[3]] == EMPTY_NAME:
        found.add(SenderFlag.EMPTY_ISSUER, "issuer SEQUENCE {}")
    _validity(buf, validity, moment, found)
    extensions: list[tuple[str, bool]] = []
    for tag, _, start, end in fields[6:]:
        if tag in (0x81, 0x82):
            found.add(SenderFlag.UNIQUE_ID_PRESENT,
                      "issuerUniqueID" if tag == 0x81 else "subjectUniqueID")
        elif tag == 0xA3:
            extensions += _extensions(buf, start, end, found)
    if buf[subject[1]:subject[3]] == EMPTY_NAME and (SUBJECT_ALT_NAME, True) not in extensions:
        found.add(SenderFlag.EMPTY_SUBJECT, "subject SEQUENCE {}")


def _serial(buf: bytes, serial: tuple[int, int, int, int], found: _Found) -> None:
    tag, _, start, end = serial
    if tag != 0x02:
        raise DERError(f"serialNumber is not an INTEGER (tag 0x{tag:02x})")
    raw = buf[start:end]
    if not raw:
        found.add(SenderFlag.SERIAL_NOT_MINIMAL, "an empty INTEGER")
        return
    if len(raw) > 1 and ((raw[0] == 0 and raw[1] < 0x80) or (raw[0] == 0xFF and raw[1] >= 0x80)):
        found.add(SenderFlag.SERIAL_NOT_MINIMAL, f"starts {raw[:2].hex()}")
    value = int.from_bytes(raw, "big", signed=True)
    if value <= 0:
        found.add(SenderFlag.SERIAL_NOT_POSITIVE, "zero" if value == 0 else "negative")
    if len(raw) > 20:
        found.add(SenderFlag.SERIAL_TOO_LONG, f"{len(raw)} octets")


def _algorithm_oid(buf: bytes, element: tuple[int, int, int, int]) -> str:
    try:
        inner = elements(buf, element[2], element[3])
        return oid_text(buf, inner[0][2], inner[0][3]) if inner and inner[0][0] == 0x06 \
            else "(no OID)"
    except DERError:
        return "(not an AlgorithmIdentifier)"


def _validity(buf: bytes, validity: tuple[int, int, int, int], moment: int,
              found: _Found) -> None:
    if validity[0] != 0x30:
        raise DERError("validity is not a SEQUENCE")
    times = elements(buf, validity[2], validity[3])
    if len(times) != 2:
        raise DERError("validity is not { notBefore, notAfter }")
    seconds = [_time(buf, t, name, found) for t, name in zip(times, ("notBefore", "notAfter"),
                                                              strict=True)]
    before, after = seconds
    if before is not None and moment < before:
        found.add(SenderFlag.NOT_VALID_AT_RECEIPT, f"notBefore {_iso(before)} after "
                  f"{_iso(moment)}")
    if after is not None and moment > after:
        found.add(SenderFlag.NOT_VALID_AT_RECEIPT, f"notAfter {_iso(after)} before "
                  f"{_iso(moment)}")


def _time(buf: bytes, element: tuple[int, int, int, int], name: str, found: _Found
          ) -> int | None:
    """Seconds since the epoch of a time in its one DER form, else None (and its flag)."""
    tag, _, start, end = element
    text = buf[start:end].decode("ascii", "replace")
    shown = f"{name} {text!r}"
    if tag not in (0x17, 0x18):
        found.add(SenderFlag.TIME_NOT_DER, f"{name} has tag 0x{tag:02x}")
        return None
    digits = 12 if tag == 0x17 else 14
    if "." in text or "," in text:
        found.add(SenderFlag.FRACTIONAL_SECONDS, shown)
        return None
    if len(text) != digits + 1 or not text.endswith("Z") or not text[:-1].isdigit():
        found.add(SenderFlag.TIME_NOT_DER, shown)
        return None
    if tag == 0x17:
        year = int(text[:2])
        year += 1900 if year >= 50 else 2000
        rest = text[2:12]
    else:
        year, rest = int(text[:4]), text[4:14]
    month, day = int(rest[0:2]), int(rest[2:4])
    hour, minute, second = int(rest[4:6]), int(rest[6:8]), int(rest[8:10])
    if not (year >= 1 and 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]
            and hour < 24 and minute < 60 and second < 60):
        found.add(SenderFlag.TIME_NOT_DER, f"{shown} is not a date")
        return None
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if tag == 0x18 and UTCTIME_RANGE[0] <= seconds < UTCTIME_RANGE[1]:
        found.add(SenderFlag.GENERALIZED_TIME_BEFORE_2050, shown)
    return seconds


def _extensions(buf: bytes, start: int, end: int, found: _Found) -> list[tuple[str, bool]]:
    """(OID, critical) of every extension, flagging what a sender must not write."""
    outer = elements(buf, start, end)
    if len(outer) != 1 or outer[0][0] != 0x30:
        raise DERError("extensions is not one SEQUENCE")
    out: list[tuple[str, bool]] = []
    seen: set[str] = set()
    for tag, _, es, ee in elements(buf, outer[0][2], outer[0][3]):
        parts = elements(buf, es, ee)
        if tag != 0x30 or len(parts) not in (2, 3) or parts[0][0] != 0x06:
            raise DERError("an extension is not { extnID, [critical], extnValue }")
        oid = oid_text(buf, parts[0][2], parts[0][3])
        critical = False
        if len(parts) == 3 and parts[1][0] == 0x01:
            value = buf[parts[1][2]:parts[1][3]]
            critical = value != b"\x00"
            if not critical:
                found.add(SenderFlag.CRITICAL_FALSE_ENCODED, oid)
        if oid in seen:
            found.add(SenderFlag.EXTENSION_DUPLICATE, _named(oid))
        seen.add(oid)
        if critical and oid != LIBP2P_OID:
            found.add(SenderFlag.CRITICAL_EXTENSION, _named(oid))
        out.append((oid, critical))
    return out


def _named(oid: str) -> str:
    name = EXTENSION_NAMES.get(oid)
    return f"{oid} ({name})" if name else oid


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
