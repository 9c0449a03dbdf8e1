"""A minimal DER *writer* for the generator.

The generator writes every certificate byte itself so that it controls each encoding exactly,
including the malformed ones the invalid catalogue needs. The reference verifier has its own,
separate reader (`fixturegen.verify.der`); neither imports the other.
"""

from __future__ import annotations

from datetime import UTC, datetime

SEQUENCE = 0x30
SET = 0x31
INTEGER = 0x02
BIT_STRING = 0x03
OCTET_STRING = 0x04
NULL_TAG = 0x05
OID_TAG = 0x06
BOOLEAN = 0x01
UTF8_STRING = 0x0C
PRINTABLE_STRING = 0x13
UTC_TIME = 0x17
GENERALIZED_TIME = 0x18


def encode_length(n: int) -> bytes:
    """The minimal DER length octets for a content of ``n`` bytes."""
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + encode_length(len(content)) + content


def sequence(*items: bytes) -> bytes:
    return tlv(SEQUENCE, b"".join(items))


def set_of(*items: bytes) -> bytes:
    return tlv(SET, b"".join(sorted(items)))


def integer(value: int) -> bytes:
    """A two's complement, minimally encoded INTEGER."""
    length = (value.bit_length() + 8) // 8 if value >= 0 else ((-value - 1).bit_length() + 8) // 8
    return tlv(INTEGER, value.to_bytes(max(length, 1), "big", signed=True))


def boolean(value: bool) -> bytes:
    return tlv(BOOLEAN, b"\xff" if value else b"\x00")


def null() -> bytes:
    return b"\x05\x00"


def octet_string(data: bytes) -> bytes:
    return tlv(OCTET_STRING, data)


def bit_string(data: bytes, unused_bits: int = 0) -> bytes:
    return tlv(BIT_STRING, bytes([unused_bits]) + data)


def oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    first = arcs[0] * 40 + arcs[1]
    body = bytearray()
    for arc in [first, *arcs[2:]]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        body.extend(reversed(chunk))
    return tlv(OID_TAG, bytes(body))


def utf8_string(text: str) -> bytes:
    return tlv(UTF8_STRING, text.encode("utf-8"))


def explicit(number: int, content: bytes) -> bytes:
    """A context-specific, constructed ``[number] EXPLICIT`` wrapper."""
    return tlv(0xA0 | number, content)


def implicit_primitive(number: int, content: bytes) -> bytes:
    return tlv(0x80 | number, content)


def time(moment: datetime) -> bytes:
    """RFC 5280 section 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050 on."""
    moment = moment.astimezone(UTC)
    if 1950 <= moment.year < 2050:
        return tlv(UTC_TIME, moment.strftime("%y%m%d%H%M%SZ").encode())
    return tlv(GENERALIZED_TIME, (f"{moment.year:04d}" + moment.strftime("%m%d%H%M%SZ")).encode())


def generalized_time(moment: datetime) -> bytes:
    moment = moment.astimezone(UTC)
    return tlv(GENERALIZED_TIME, (f"{moment.year:04d}" + moment.strftime("%m%d%H%M%SZ")).encode())


def ber_long_length(tag: int, content: bytes, extra_octets: int = 1) -> bytes:
    """A BER-only encoding: the length in long form with ``extra_octets`` leading zero octets."""
    n = len(content)
    body = n.to_bytes(max((n.bit_length() + 7) // 8, 1), "big")
    body = b"\x00" * extra_octets + body
    return bytes([tag, 0x80 | len(body)]) + body + content


def split_tlv(data: bytes, offset: int = 0) -> tuple[int, int, int]:
    """(tag, content_start, content_end) of the TLV at ``offset``; for the generator's mutations."""
    tag = data[offset]
    first = data[offset + 1]
    if first < 0x80:
        return tag, offset + 2, offset + 2 + first
    count = first & 0x7F
    n = int.from_bytes(data[offset + 2 : offset + 2 + count], "big")
    start = offset + 2 + count
    return tag, start, start + n


def children(data: bytes) -> list[bytes]:
    """The complete TLVs inside the content of the constructed TLV ``data``."""
    _, pos, end = split_tlv(data)
    out = []
    while pos < end:
        _, _cs, ce = split_tlv(data, pos)
        out.append(data[pos:ce])
        pos = ce
    return out
