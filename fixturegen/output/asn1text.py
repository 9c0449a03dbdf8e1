"""A certificate as text: every element of its DER (or BER) tree on a line of its own, with
its offset, tag, length and value, the way ``openssl asn1parse -i`` shows it, but readable
where a fixture is interesting: object identifiers are named, an OCTET STRING or BIT STRING
that holds DER is opened, and a libp2p PublicKey protobuf is spelled out field by field.

It is made for broken certificates. :func:`decoded` never raises: an element that cannot be
read ends the tree with a line saying what is wrong and where, and the bytes left are shown in
hex. Its work is bounded: nesting (:data:`MAX_DEPTH`), lines (:data:`MAX_LINES`) and the hex
shown per value (:data:`HEX_SHOWN`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fixturegen.certs.extension import LIBP2P_EXTENSION_OID

#: Deeper elements are not opened (a certificate needs nine levels, a fault a few more).
MAX_DEPTH = 24
#: Lines of text at most; the rest is said to be left out.
MAX_LINES = 2000
#: Bytes of a value shown in hex; a longer value shows its first and last HEX_SHOWN // 2.
HEX_SHOWN = 32

#: The object identifiers a libp2p certificate carries, by name.
OID_NAMES: dict[str, str] = {
    LIBP2P_EXTENSION_OID: "libp2p public key extension",
    "1.2.840.10045.2.1": "ecPublicKey",
    "1.2.840.10045.3.1.7": "prime256v1 (P-256)",
    "1.3.132.0.34": "secp384r1 (P-384)",
    "1.3.132.0.35": "secp521r1 (P-521)",
    "1.3.132.0.10": "secp256k1",
    "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
    "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
    "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
    "1.2.840.10045.4.1": "ecdsa-with-SHA1",
    "1.3.101.112": "Ed25519",
    "1.3.101.113": "Ed448",
    "1.2.840.113549.1.1.1": "rsaEncryption",
    "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
    "1.2.840.113549.1.1.8": "mgf1",
    "1.2.840.113549.1.1.10": "RSASSA-PSS",
    "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
    "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
    "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
    "1.3.14.3.2.26": "sha1",
    "2.5.4.3": "commonName",
    "2.5.4.5": "serialNumber",
    "2.5.4.6": "countryName",
    "2.5.4.10": "organizationName",
    "2.5.4.11": "organizationalUnitName",
    "2.5.29.14": "subjectKeyIdentifier",
    "2.5.29.15": "keyUsage",
    "2.5.29.17": "subjectAltName",
    "2.5.29.19": "basicConstraints",
    "2.5.29.32": "certificatePolicies",
    "2.5.29.35": "authorityKeyIdentifier",
    "2.5.29.37": "extKeyUsage",
    "2.5.29.37.0": "anyExtendedKeyUsage",
    "1.3.6.1.5.5.7.3.1": "serverAuth",
    "1.3.6.1.5.5.7.3.2": "clientAuth",
}

#: Universal tag numbers, by name.
UNIVERSAL: dict[int, str] = {
    0: "end-of-contents", 1: "BOOLEAN", 2: "INTEGER", 3: "BIT STRING", 4: "OCTET STRING",
    5: "NULL", 6: "OBJECT IDENTIFIER", 10: "ENUMERATED", 12: "UTF8String", 16: "SEQUENCE",
    17: "SET", 19: "PrintableString", 20: "T61String", 22: "IA5String", 23: "UTCTime",
    24: "GeneralizedTime", 26: "VisibleString", 28: "UniversalString", 30: "BMPString",
}
_STRINGS = {12, 19, 20, 22, 26}
_TIMES = {23, 24}
#: libp2p's KeyType enum (peer-ids.md), for a PublicKey protobuf.
KEY_TYPES = {0: "RSA", 1: "Ed25519", 2: "Secp256k1", 3: "ECDSA"}


class _Malformed(Exception):
    pass


@dataclass(frozen=True)
class _Header:
    tag_class: int  # 0 universal, 1 application, 2 context, 3 private
    constructed: bool
    number: int
    content: int  # where the content starts
    end: int | None  # where it ends; None for BER's indefinite length

    def name(self) -> str:
        if self.tag_class == 0:
            return UNIVERSAL.get(self.number, f"UNIVERSAL {self.number}")
        if self.tag_class == 2:
            return f"[{self.number}]"
        return f"[{('UNIVERSAL', 'APPLICATION', 'CONTEXT', 'PRIVATE')[self.tag_class]} " \
               f"{self.number}]"


def _header(buf: bytes, pos: int, end: int) -> _Header:
    if pos >= end:
        raise _Malformed("an element is cut off before its tag")
    first = buf[pos]
    pos += 1
    number = first & 0x1F
    if number == 0x1F:  # high tag number form
        number = 0
        for _ in range(4):
            if pos >= end:
                raise _Malformed("a tag is cut off")
            number = number << 7 | buf[pos] & 0x7F
            pos += 1
            if not buf[pos - 1] & 0x80:
                break
        else:
            raise _Malformed("a tag number longer than four octets")
    if pos >= end:
        raise _Malformed("an element is cut off before its length")
    length = buf[pos]
    pos += 1
    if length == 0x80:
        if not first & 0x20:
            raise _Malformed("a primitive element with an indefinite length")
        return _Header(first >> 6, bool(first & 0x20), number, pos, None)
    if length & 0x80:
        octets = length & 0x7F
        if octets > 4 or pos + octets > end:
            raise _Malformed(f"a length of {octets} octets that does not fit")
        length = int.from_bytes(buf[pos:pos + octets], "big")
        pos += octets
    if pos + length > end:
        raise _Malformed(f"a length of {length} that overruns its container by "
                         f"{pos + length - end} byte(s)")
    return _Header(first >> 6, bool(first & 0x20), number, pos, pos + length)


def _hex(data: bytes) -> str:
    if len(data) <= HEX_SHOWN:
        return data.hex()
    half = HEX_SHOWN // 2
    return f"{data[:half].hex()}…{data[-half:].hex()}"


def _oid(content: bytes) -> str:
    if not content or content[-1] & 0x80:
        raise _Malformed("an object identifier that ends inside an arc")
    arcs: list[int] = []
    value = 0
    for byte in content:
        value = value << 7 | byte & 0x7F
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    first = min(arcs[0] // 40, 2)
    dotted = ".".join(map(str, [first, arcs[0] - 40 * first, *arcs[1:]]))
    return f"{dotted} ({OID_NAMES[dotted]})" if dotted in OID_NAMES else dotted


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(data) and shift < 64:
        value |= (data[pos] & 0x7F) << shift
        pos += 1
        if not data[pos - 1] & 0x80:
            return value, pos
        shift += 7
    raise _Malformed("a varint is cut off")


def _protobuf(data: bytes) -> list[str] | None:
    """A libp2p PublicKey protobuf (fields 1: Type, 2: Data), field by field; None when the
    bytes are not one."""
    lines: list[str] = []
    pos = 0
    try:
        while pos < len(data):
            key, pos = _varint(data, pos)
            if key == 0x08:
                value, pos = _varint(data, pos)
                lines.append(f"field 1 (Type) = {value} ({KEY_TYPES.get(value, 'unknown')})")
            elif key == 0x12:
                size, pos = _varint(data, pos)
                if pos + size > len(data):
                    return None
                lines.append(f"field 2 (Data), {size} bytes: {_hex(data[pos:pos + size])}")
                pos += size
            else:
                return None
    except _Malformed:
        return None
    return lines or None


def _whole_der(data: bytes) -> bool:
    """Whether ``data`` is one or more complete elements and nothing else, the first
    constructed (what is worth opening)."""
    if not data or not data[0] & 0x20:
        return False
    pos = 0
    try:
        while pos < len(data):
            h = _header(data, pos, len(data))
            if h.end is None:
                return False
            pos = h.end
    except _Malformed:
        return False
    return True


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.full = False

    def add(self, offset: int | None, depth: int, text: str) -> None:
        if len(self.lines) >= MAX_LINES:
            self.full = True
            return
        where = f"{offset:6d}" if offset is not None else " " * 6
        self.lines.append(f"{where}  {'  ' * depth}{text}")


def _elements(buf: bytes, pos: int, end: int | None, limit: int, depth: int, out: _Writer,
              within: str | None = None, base: int = 0) -> int:
    """Write the elements from ``pos`` up to ``end`` (None: until an end-of-contents, BER);
    return where they stop. Raises _Malformed (after writing what it could). ``base``: where
    ``buf`` sits in the certificate (the offsets shown are the certificate's)."""
    last_oid: str | None = within
    while (end is None or pos < end) and not out.full:
        h = _header(buf, pos, end if end is not None else limit)
        if h.tag_class == 0 and h.number == 0 and end is None:
            out.add(base + pos, depth, "end-of-contents")
            return h.content
        size = "indefinite length" if h.end is None else f"{h.end - h.content} bytes"
        if h.constructed:
            out.add(base + pos, depth, f"{h.name()}, {size}")
            if depth >= MAX_DEPTH:
                out.add(None, depth + 1, "(nested deeper than this view opens)")
                stop = h.end if h.end is not None else limit
            elif h.end is None:  # BER: where it ends is known only once it is read
                stop = _elements(buf, h.content, None, limit, depth + 1, out, last_oid, base)
            else:
                _inside(buf, h.content, h.end, depth + 1, out, last_oid, base)
            pos = stop if h.end is None else h.end
            continue
        assert h.end is not None
        content = buf[h.content:h.end]
        text = _primitive(h, content)
        if h.tag_class == 0 and h.number == 6:
            last_oid = text.removeprefix("OBJECT IDENTIFIER ").split(" ", 1)[0]
        out.add(base + pos, depth, text)
        inner = content[1:] if h.tag_class == 0 and h.number == 3 else content
        if h.tag_class == 0 and h.number in (3, 4) and depth < MAX_DEPTH:
            if _whole_der(inner):
                out.add(None, depth + 1, "holding:")
                _inside(inner, 0, len(inner), depth + 2, out, last_oid,
                        base + h.end - len(inner))
            elif h.number == 4 and within == LIBP2P_EXTENSION_OID and (
                    fields := _protobuf(content)) is not None:
                out.add(None, depth + 1, "a libp2p PublicKey protobuf:")
                for line in fields:
                    out.add(None, depth + 2, line)
        pos = h.end
    if end is None:
        raise _Malformed("an indefinite length without its end-of-contents")
    return pos


def _inside(buf: bytes, start: int, end: int, depth: int, out: _Writer,
            within: str | None, base: int) -> None:
    """The elements of a container whose end is known: one that cannot be read ends its
    container, not the tree."""
    try:
        _elements(buf, start, end, end, depth, out, within, base)
    except _Malformed as exc:
        out.add(None, depth, f"malformed: {exc}")


def _primitive(h: _Header, content: bytes) -> str:
    if h.tag_class != 0:
        return f"{h.name()}, {len(content)} bytes: {_hex(content)}"
    n = h.number
    if n == 1:
        value = {0: "FALSE", 0xFF: "TRUE"}.get(content[0]) if len(content) == 1 else None
        return f"BOOLEAN {value or 'of ' + str(len(content)) + ' bytes: ' + _hex(content)}"
    if n in (2, 10):
        if len(content) <= 8:
            return f"{h.name()} {int.from_bytes(content, 'big', signed=True)}"
        return f"{h.name()}, {len(content)} bytes: {_hex(content)}"
    if n == 3:
        unused = content[0] if content else 0
        return f"BIT STRING, {max(len(content) - 1, 0)} bytes, {unused} unused bits: " \
               f"{_hex(content[1:])}"
    if n == 5:
        return "NULL" if not content else f"NULL with {len(content)} bytes: {_hex(content)}"
    if n == 6:
        try:
            return f"OBJECT IDENTIFIER {_oid(content)}"
        except _Malformed:
            return f"OBJECT IDENTIFIER, malformed: {_hex(content)}"
    if n in _STRINGS or n in _TIMES:
        text = content.decode("latin-1")
        shown = "".join(c if c.isprintable() and ord(c) < 0x7F else f"\\x{ord(c):02x}"
                        for c in text[:HEX_SHOWN * 2])
        more = "…" if len(text) > HEX_SHOWN * 2 else ""
        return f"{h.name()} \"{shown}{more}\""
    return f"{h.name()}, {len(content)} bytes: {_hex(content)}"


def decoded(der: bytes) -> str:
    """``der`` as an indented tree of its elements, one per line (offset, tag, length,
    value). Never raises: what cannot be read is said on the last line."""
    out = _Writer()
    try:
        h = _header(der, 0, len(der))
        end = h.end if h.end is not None else len(der)
        if h.end is None:
            end = _elements(der, 0, len(der), len(der), 0, out)
        else:
            _elements(der, 0, h.end, len(der), 0, out)
    except _Malformed as exc:
        out.lines.append(f"malformed: {exc} (the certificate is {len(der)} bytes)")
        end = len(der)
    if out.full:
        out.lines.append(f"… (more than {MAX_LINES} lines: the rest is left out)")
    elif end < len(der):
        out.lines.append(f"{len(der) - end} trailing bytes after the certificate: "
                         f"{_hex(der[end:])}")
    return "\n".join(out.lines)
