"""A strict DER *reader* for the reference verifier (X.690 section 10, RFC 5280).

Independent of the generator's writer. It walks TLVs by offset over one ``bytes`` object and
never copies or decodes what it does not need, so a certificate costs a few dozen steps.
Everything BER allows but DER forbids is an error: indefinite or non-minimal lengths, high tag
numbers, non-minimal INTEGERs and OID arcs, BOOLEANs other than 00/FF, bad time formats.
"""

from __future__ import annotations

import calendar

# Bounds on untrusted input (the documentation's reference/limits.md is generated from the
# comments that follow). A real libp2p certificate is under 2 KB (RSA-4096 included); these are
# far above any of them and keep every input cheap to reject.
#: Bytes of one certificate (DER), checked before parsing.
MAX_CERTIFICATE_BYTES = 64 * 1024
#: Certificates in one presented chain (libp2p wants exactly one; longer is ``chain_length``).
MAX_CHAIN_CERTIFICATES = 16
#: Content octets of one OBJECT IDENTIFIER, and of one arc (a 128-bit UUID arc, 2.25.N, is 19).
MAX_OID_BYTES = 64
MAX_OID_ARC_BYTES = 20
#: Content octets of an INTEGER the reader converts (an ECDSA P-521 ``s`` is at most 67).
MAX_INTEGER_BYTES = 128
#: The reader never recurses on input: it walks the fixed shape of a certificate, so nesting
#: deeper than that shape (certificate > tbs > extensions > extension > value: 5) is never
#: descended into and costs nothing.
MAX_DEPTH = 5


class DERError(ValueError):
    """The input is not strict DER, or not of the expected structure."""


def tlv(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """(tag, content start, content end) of the element at ``pos``, which must fit in ``end``."""
    if end > len(buf) or pos < 0:
        raise DERError(f"element bounds outside the input at offset {pos}")
    if pos + 2 > end:
        raise DERError(f"truncated element at offset {pos}")
    tag = buf[pos]
    if tag & 0x1F == 0x1F:
        raise DERError(f"high tag number form at offset {pos}")
    n = buf[pos + 1]
    pos += 2
    if n & 0x80:
        k = n & 0x7F
        if k == 0:
            raise DERError(f"indefinite length at offset {pos - 2} (BER, not DER)")
        if k > 4 or pos + k > end:
            raise DERError(f"bad length at offset {pos - 2}")
        if buf[pos] == 0:
            raise DERError(f"non-minimal length at offset {pos - 2} (BER, not DER)")
        n = int.from_bytes(buf[pos : pos + k], "big")
        if n < 0x80:
            raise DERError(f"non-minimal length at offset {pos - 2} (BER, not DER)")
        pos += k
    if pos + n > end:
        raise DERError(f"element at offset {pos} runs past its container")
    return tag, pos, pos + n


def expect(buf: bytes, pos: int, end: int, tag: int, what: str) -> tuple[int, int]:
    t, s, e = tlv(buf, pos, end)
    if t != tag:
        raise DERError(f"{what}: expected tag 0x{tag:02x}, found 0x{t:02x}")
    return s, e


def elements(buf: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """Every element of a constructed content: (tag, tlv start, content start, content end)."""
    out = []
    pos = start
    while pos < end:
        t, s, e = tlv(buf, pos, end)
        out.append((t, pos, s, e))
        pos = e
    return out


#: Dotted forms keyed by the exact content octets: a pure function of its key, and only OIDs
#: that decoded are kept, so it cannot change a verdict. Bounded.
_OIDS: dict[bytes, str] = {}


def oid_text(buf: bytes, start: int, end: int) -> str:
    """The dotted form of an OBJECT IDENTIFIER's content (memoised: few distinct OIDs recur)."""
    if end - start > MAX_OID_BYTES:
        raise DERError(f"OBJECT IDENTIFIER of {end - start} octets (limit {MAX_OID_BYTES})")
    raw = buf[start:end]
    known = _OIDS.get(raw)
    if known is not None:
        return known
    text = _oid_text(raw)
    if len(_OIDS) < 4096:
        _OIDS[raw] = text
    return text


def _oid_text(buf: bytes) -> str:
    start, end = 0, len(buf)
    if start == end:
        raise DERError("empty OBJECT IDENTIFIER")
    arcs: list[int] = []
    value = 0
    fresh = True
    octets = 0
    for i in range(start, end):
        b = buf[i]
        if fresh and b == 0x80:
            raise DERError("non-minimal OBJECT IDENTIFIER arc")
        octets += 1
        if octets > MAX_OID_ARC_BYTES:
            raise DERError(f"OBJECT IDENTIFIER arc over {MAX_OID_ARC_BYTES} octets")
        value = (value << 7) | (b & 0x7F)
        fresh = not b & 0x80
        if fresh:
            arcs.append(value)
            value = 0
            octets = 0
    if not fresh:
        raise DERError("truncated OBJECT IDENTIFIER")
    first = arcs[0]
    head = [0, first] if first < 40 else [1, first - 40] if first < 80 else [2, first - 80]
    return ".".join(map(str, head + arcs[1:]))


def integer(buf: bytes, start: int, end: int, limit: int = MAX_INTEGER_BYTES) -> int:
    """An INTEGER of at most ``limit`` content octets, in its minimal DER form."""
    if start == end:
        raise DERError("empty INTEGER")
    if end - start > limit:
        raise DERError(f"INTEGER of {end - start} octets (limit {limit})")
    if end - start > 1 and (
        (buf[start] == 0 and buf[start + 1] < 0x80)
        or (buf[start] == 0xFF and buf[start + 1] >= 0x80)
    ):
        raise DERError("non-minimal INTEGER (BER, not DER)")
    return int.from_bytes(buf[start:end], "big", signed=True)


def boolean(buf: bytes, start: int, end: int) -> bool:
    if end - start != 1 or buf[start] not in (0x00, 0xFF):
        raise DERError("BOOLEAN must be one octet, 00 or FF")
    return buf[start] == 0xFF


#: 1950-01-01 and 2050-01-01 as seconds since the epoch: RFC 5280 wants UTCTime between them.
UTCTIME_RANGE = (-631152000, 2524608000)


def generalized_in_utctime_range(tag: int, seconds: int) -> bool:
    """A GeneralizedTime for a date RFC 5280 wants as UTCTime (flagged, not rejected)."""
    return tag == 0x18 and UTCTIME_RANGE[0] <= seconds < UTCTIME_RANGE[1]


def time_seconds(buf: bytes, tag: int, start: int, end: int) -> int:
    """Seconds since the epoch of a UTCTime / GeneralizedTime in its one DER form (seconds, Z,
    no fraction). GeneralizedTime is accepted for any year 0001..9999: before 1950 it is the only
    encoding, and 1950..2049 in GeneralizedTime is what :func:`generalized_in_utctime_range`
    lets the verifier flag."""
    text = buf[start:end]
    if tag == 0x17:
        if len(text) != 13 or text[12:] != b"Z" or not text[:12].isdigit():
            raise DERError("UTCTime must be YYMMDDHHMMSSZ")
        yy = int(text[:2])
        year = 1900 + yy if yy >= 50 else 2000 + yy
        rest = text[2:12]
    elif tag == 0x18:
        if len(text) != 15 or text[14:] != b"Z" or not text[:14].isdigit():
            raise DERError("GeneralizedTime must be YYYYMMDDHHMMSSZ")
        year = int(text[:4])
        if year == 0:
            raise DERError("GeneralizedTime year 0000")
        rest = text[4:14]
    else:
        raise DERError(f"expected a time, found tag 0x{tag:02x}")
    month, day = int(rest[0:2]), int(rest[2:4])
    hour, minute, second = int(rest[4:6]), int(rest[6:8]), int(rest[8:10])
    if not (1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]
            and hour < 24 and minute < 60 and second < 60):
        raise DERError("time out of range")
    return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
