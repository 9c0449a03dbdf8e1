"""Parse one certificate, strictly, into the fields the checks need (offsets into the DER)."""

from __future__ import annotations

from dataclasses import dataclass

from fixturegen.verify.der import (
    MAX_CERTIFICATE_BYTES,
    DERError,
    boolean,
    elements,
    expect,
    generalized_in_utctime_range,
    integer,
    oid_text,
    time_seconds,
)

LIBP2P_OID = "1.3.6.1.4.1.53594.1.1"


@dataclass(slots=True)
class Extension:
    oid: str
    critical: bool
    value: bytes


@dataclass(slots=True)
class ParsedCertificate:
    tbs: bytes
    tbs_signature_algorithm: bytes
    signature_algorithm: bytes
    signature: bytes
    spki: bytes
    issuer: bytes
    subject: bytes
    not_before: int
    not_after: int
    #: A 1950..2049 time written as GeneralizedTime (RFC 5280 wants UTCTime; flagged).
    generalized_time_before_2050: bool
    unique_ids: bool
    extensions: list[Extension]


_NAME, _ALGORITHM, _VALIDITY = "Name", "AlgorithmIdentifier", "Validity"
_MISSING = object()


class Memo:
    """Encodings already proven well-formed, keyed by what they were checked as.

    Most certificates share their Names, AlgorithmIdentifiers and Validity byte for byte, so each
    is walked once. The key is (kind, exact bytes): bytes found good as one kind never pass as
    another, and only successes are kept, so a warm memo gives exactly the verdict of a cold one.
    One memo belongs to one :class:`~fixturegen.verify.Verifier`; its size is bounded.
    """

    __slots__ = ("_good", "_size")

    def __init__(self, size: int = 8192) -> None:
        self._good: dict[tuple[str, bytes], object] = {}
        self._size = size

    def get(self, kind: str, raw: bytes) -> object:
        return self._good.get((kind, raw), _MISSING)

    def put(self, kind: str, raw: bytes, value: object = None) -> None:
        if self._size <= 0:
            return
        if len(self._good) >= self._size:
            self._good.clear()
        self._good[(kind, raw)] = value

    def __len__(self) -> int:
        return len(self._good)


def _name(buf: bytes, start: int, end: int) -> None:
    """Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value ANY } (values not interpreted)."""
    for tag, _, s, e in elements(buf, start, end):
        if tag != 0x31:
            raise DERError("Name: an RDN is not a SET")
        members = elements(buf, s, e)
        if not members:
            raise DERError("Name: an empty RDN")
        encodings = []
        for mtag, mpos, ms, me in members:
            if mtag != 0x30:
                raise DERError("Name: an attribute is not a SEQUENCE")
            inner = elements(buf, ms, me)
            if len(inner) != 2 or inner[0][0] != 0x06:
                raise DERError("Name: an attribute is not { OID, value }")
            oid_text(buf, inner[0][2], inner[0][3])
            encodings.append(buf[mpos:me])
        if encodings != sorted(encodings):
            raise DERError("Name: SET OF not in DER order")


def _algorithm(buf: bytes, pos: int, end: int, what: str, memo: Memo) -> int:
    s, e = expect(buf, pos, end, 0x30, what)
    if memo.get(_ALGORITHM, buf[pos:e]) is not _MISSING:
        return e
    parts = elements(buf, s, e)
    if not 1 <= len(parts) <= 2 or parts[0][0] != 0x06:
        raise DERError(f"{what}: not an AlgorithmIdentifier")
    oid_text(buf, parts[0][2], parts[0][3])
    memo.put(_ALGORITHM, buf[pos:e])
    return e


def parse_certificate(buf: bytes, memo: Memo | None = None) -> ParsedCertificate:
    """The fields of one strict-DER certificate; :class:`DERError` (only) for anything else.

    ``memo`` (a :class:`Memo`) skips re-walking sub-structures already proven good; without one
    every byte is checked.
    """
    memo = memo if memo is not None else Memo(0)
    end = len(buf)
    if end > MAX_CERTIFICATE_BYTES:
        raise DERError(f"certificate of {end} bytes (limit {MAX_CERTIFICATE_BYTES})")
    s, e = expect(buf, 0, end, 0x30, "Certificate")
    if e != end:
        raise DERError(f"{end - e} bytes after the certificate")
    top = elements(buf, s, e)
    if len(top) != 3:
        raise DERError("Certificate is not { tbsCertificate, signatureAlgorithm, signature }")
    (t0, p0, ts, te), (t1, p1, _, a1), (t2, _, bs, be) = top
    if t0 != 0x30 or t1 != 0x30 or t2 != 0x03:
        raise DERError("Certificate fields have the wrong types")
    _algorithm(buf, p1, a1, "signatureAlgorithm", memo)
    if be - bs < 1 or buf[bs] != 0:
        raise DERError("signature BIT STRING with unused bits")

    f = elements(buf, ts, te)
    if len(f) < 7:
        raise DERError("tbsCertificate has too few fields")
    it = iter(f)
    tag, _, vs, ve = next(it)
    if tag != 0xA0:
        raise DERError("not a v3 certificate (no version field)")
    vs2, ve2 = expect(buf, vs, ve, 0x02, "version")
    if ve2 != ve or integer(buf, vs2, ve2) != 2:
        raise DERError("not a v3 certificate")
    tag, _, ss, se = next(it)
    if tag != 0x02:
        raise DERError("serialNumber is not an INTEGER")
    serial = integer(buf, ss, se)
    if serial <= 0 or se - ss > 20:
        raise DERError("serialNumber must be positive and at most 20 octets")
    tag, ap, _, ae = next(it)
    _algorithm(buf, ap, ae, "tbsCertificate signature", memo)
    tag, ip, is_, ie = next(it)
    if tag != 0x30:
        raise DERError("issuer is not a Name")
    if memo.get(_NAME, buf[ip:ie]) is _MISSING:
        _name(buf, is_, ie)
        memo.put(_NAME, buf[ip:ie])
    tag, vp, vs, ve = next(it)
    if tag != 0x30:
        raise DERError("validity is not a SEQUENCE")
    window = memo.get(_VALIDITY, buf[vp:ve])
    if window is _MISSING:
        times = elements(buf, vs, ve)
        if len(times) != 2:
            raise DERError("validity is not { notBefore, notAfter }")
        before = time_seconds(buf, times[0][0], times[0][2], times[0][3])
        after = time_seconds(buf, times[1][0], times[1][2], times[1][3])
        window = (before, after, generalized_in_utctime_range(times[0][0], before)
                  or generalized_in_utctime_range(times[1][0], after))
        memo.put(_VALIDITY, buf[vp:ve], window)
    assert isinstance(window, tuple)
    not_before, not_after, generalized_early = window
    tag, sp, subs, sube = next(it)
    if tag != 0x30:
        raise DERError("subject is not a Name")
    if memo.get(_NAME, buf[sp:sube]) is _MISSING:
        _name(buf, subs, sube)
        memo.put(_NAME, buf[sp:sube])
    tag, kp, ks, ke = next(it)
    if tag != 0x30:
        raise DERError("subjectPublicKeyInfo is not a SEQUENCE")
    spki_parts = elements(buf, ks, ke)
    if len(spki_parts) != 2 or spki_parts[1][0] != 0x03:
        raise DERError("subjectPublicKeyInfo is not { algorithm, subjectPublicKey }")
    _algorithm(buf, spki_parts[0][1], spki_parts[0][3], "subjectPublicKeyInfo algorithm",
               memo)
    if spki_parts[1][3] - spki_parts[1][2] < 1 or buf[spki_parts[1][2]] != 0:
        raise DERError("subjectPublicKey BIT STRING with unused bits")

    unique_ids = False
    extensions: list[Extension] = []
    last = 0
    for tag, _, cs, ce in it:
        order = {0x81: 1, 0x82: 2, 0xA3: 3}.get(tag)
        if order is None or order <= last:
            raise DERError(f"unexpected field 0x{tag:02x} in tbsCertificate")
        last = order
        if order < 3:
            if ce - cs < 1:
                raise DERError("empty unique identifier")
            unique_ids = True
            continue
        xs, xe = expect(buf, cs, ce, 0x30, "extensions")
        if xe != ce:
            raise DERError("bytes after the extensions")
        items = elements(buf, xs, xe)
        if not items:
            raise DERError("empty extensions (SIZE (1..MAX))")
        seen: set[str] = set()
        for etag, _, es, ee in items:
            if etag != 0x30:
                raise DERError("an extension is not a SEQUENCE")
            parts = elements(buf, es, ee)
            if len(parts) not in (2, 3) or parts[0][0] != 0x06 or parts[-1][0] != 0x04:
                raise DERError("an extension is not { extnID, [critical], extnValue }")
            oid = oid_text(buf, parts[0][2], parts[0][3])
            critical = False
            if len(parts) == 3:
                if parts[1][0] != 0x01:
                    raise DERError("extension critical field is not a BOOLEAN")
                critical = boolean(buf, parts[1][2], parts[1][3])
                if not critical:
                    raise DERError("critical FALSE written out (DER omits a DEFAULT value)")
            if oid in seen and oid != LIBP2P_OID:
                raise DERError(f"extension {oid} appears twice (RFC 5280 4.2)")
            seen.add(oid)
            extensions.append(Extension(oid, critical, buf[parts[-1][2] : parts[-1][3]]))
    return ParsedCertificate(
        tbs=buf[p0:te],
        tbs_signature_algorithm=buf[ap:ae],
        signature_algorithm=buf[p1:a1],
        signature=buf[bs + 1 : be],
        spki=buf[kp:ke],
        issuer=buf[ip:ie],
        subject=buf[sp:sube],
        not_before=not_before,
        not_after=not_after,
        generalized_time_before_2050=generalized_early,
        unique_ids=unique_ids,
        extensions=extensions,
    )
