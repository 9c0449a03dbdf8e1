"""The boundary model: every numeric or structural property the catalogue knows, with the values
where bugs live, each a case with the result the spec gives it.

A :class:`Property` is one thing a certificate carries that has a range or a grammar (the RSA
host key's size, the length form of a SignedKey element, the tag of an element, the extension's
OID, an Ed25519 point, an ECDSA ``s``, ...), the element it sits in, and ``build``: how to make
an otherwise valid certificate whose property takes a given value. Its partitions
(:class:`Partition`) are the values chosen by equivalence partitioning and boundary-value
analysis, each with its expected result, error code, flags and the text that says what the
value is.

Partitions are made by *rules*, so that a new property gets its boundaries by declaring what it
is, not by listing values by hand:

* :func:`around` (sizes): one below, at and one above each :class:`Limit` the spec or a
  shipped implementation enforces; the verdict of each value comes from one function of the
  value (inside the range valid, outside it what the spec says);
* :func:`length_edges` (DER lengths): the long form where the short one suffices (``81 nn``
  and ``82 00 nn``), a length that overruns its container by one, and one that falls one short;
* :func:`tag_neighbours` (DER tags): the tag one below and one above, and the tag with its
  constructed bit flipped;
* :func:`one_arc_away` (OIDs): the parent, a child, the two siblings of the last arc, the
  neighbours of the enterprise number, and the same OID with a non-minimal arc;
* :func:`scalar_edges` (ECDSA ``s``): its high twin ``n - s``, ``s + n`` and zero;
* :func:`field_number_edges` (protobuf): unknown field numbers at the edges of a key's varint.

A partition that an existing case already sits on names it (``existing``: a case id or a fault
family, see ``fixturegen list``) and generates nothing; every other partition is a case with the
id ``boundary.PROPERTY.PARTITION`` and the family ``boundary.PROPERTY.{partition}`` (the
manifest's ``family`` block). :class:`Property` refuses a malformed declaration: no partition,
two of one name, a name that is not an id part, an ``invalid`` partition without an error code,
an ``acceptable`` one without the flag that explains it, a ``valid`` one with an error.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.model import Case, Importance, Result, describe, register
from fixturegen.cases.mutate import host_signature, with_libp2p_value
from fixturegen.certs import der
from fixturegen.certs.builder import (
    OID_COMMON_NAME,
    OID_ORGANIZATION,
    assemble,
    derived_serial,
    name,
)
from fixturegen.certs.extension import LIBP2P_EXTENSION_OID, handshake_message, signed_key
from fixturegen.identity.hostkey import HostKey
from fixturegen.identity.protobuf import KEY_TYPE_CODES, encode_public_key, varint
from fixturegen.keys import KeyKind, KeyPair
from fixturegen.keys.derive import derive_private_key, derive_rsa
from fixturegen.keys.fixed import load_fixed
from fixturegen.verify.codes import ErrorCode, Flag

#: Where a property sits.
Element = Literal["certificate-key", "self-signature", "validity", "extension", "signed-key",
                  "host-key", "host-signature", "serial"]
_ID_PART = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

EXT = "tls.md: libp2p Public Key Extension"
SIGNED_KEY_RULE = f"{EXT}: SignedKey ::= SEQUENCE {{ OCTET STRING, OCTET STRING }}; X.690 DER"
KEYS_RULE = "peer-ids.md: Keys: deterministic encoding"


@dataclass(frozen=True)
class Verdict:
    """What the spec says of one value: the result, the reference verifier's code, the flags."""

    result: Result
    error: ErrorCode | None = None
    flags: tuple[Flag, ...] = ()


VALID = Verdict("valid")


def invalid(error: ErrorCode) -> Verdict:
    return Verdict("invalid", error)


@dataclass(frozen=True)
class Partition:
    """One value of a property: its name (the id's last part), the value ``build`` gets, what
    the spec says of it and a sentence saying what it is. ``existing``: the case (or fault
    family) of the catalogue already at this value; then no case is generated."""

    name: str
    value: Any
    verdict: Verdict
    text: str
    existing: str | None = None


@dataclass(frozen=True)
class Property:
    """A property of one element, its partitions and how to build a certificate at a value."""

    name: str
    element: Element
    description: str
    rule: str
    partitions: tuple[Partition, ...]
    build: Callable[[BuildContext, Any], Built]
    importance: Importance = "medium"

    def __post_init__(self) -> None:
        where = f"boundary property {self.name!r}"
        if not _ID_PART.match(self.name.replace(".", "-")) or not self.name.startswith(
                self.element + "."):
            raise ValueError(f"{where}: its name is ELEMENT.NAME in lower-case id parts")
        if not self.partitions:
            raise ValueError(f"{where}: no partition")
        names = [p.name for p in self.partitions]
        if len(set(names)) != len(names):
            raise ValueError(f"{where}: two partitions of one name")
        for p in self.partitions:
            v = p.verdict
            if not _ID_PART.match(p.name):
                raise ValueError(f"{where}: partition name {p.name!r} is not an id part")
            if v.result == "invalid" and v.error is None:
                raise ValueError(f"{where}.{p.name}: an invalid partition needs its error code")
            if v.result == "valid" and (v.error is not None or v.flags):
                raise ValueError(f"{where}.{p.name}: a valid partition has no error or flag")
            if v.result == "acceptable" and not v.flags:
                raise ValueError(f"{where}.{p.name}: an acceptable partition needs the flag "
                                 "that explains it")

    @property
    def family(self) -> str:
        return f"boundary.{self.name}.{{partition}}"

    def case_id(self, partition: Partition) -> str:
        return self.family.format(partition=partition.name)


PROPERTIES: list[Property] = []


def boundary(prop: Property) -> Property:
    """Declare a property (its name unique)."""
    if any(p.name == prop.name for p in PROPERTIES):
        raise ValueError(f"duplicate boundary property {prop.name}")
    PROPERTIES.append(prop)
    return prop


# -- rules: partitions from what a property is --------------------------------------------------
@dataclass(frozen=True)
class Limit:
    """A limit of a size: its value and who enforces it."""

    value: int
    who: str


def around(limits: Sequence[Limit], verdict: Callable[[int], Verdict], unit: str,
           existing: dict[int, str] | None = None) -> tuple[Partition, ...]:
    """One below, at and one above each limit (in increasing order, each value once); each
    value's verdict is ``verdict(value)``."""
    existing = existing or {}
    values: dict[int, str] = {}
    for limit in limits:
        for value, where in ((limit.value - 1, "one below"), (limit.value, "at"),
                             (limit.value + 1, "one above")):
            text = f"{where} {limit.value} {unit} ({limit.who})"
            values[value] = f"{values[value]}; {text}" if value in values else text
    return tuple(Partition(str(v), v, verdict(v), f"{v} {unit}, {values[v]}.", existing.get(v))
                 for v in sorted(values))


#: The length forms :func:`length_edges` makes, and what each is.
LENGTH_EDGES: dict[str, str] = {
    "long-form-81": "its length in the one-octet long form (81 nn) where the short form "
                    "suffices",
    "long-form-82": "its length in the two-octet long form with a leading zero (82 00 nn)",
    "overruns-by-one": "its length one more than its content: it overruns its container by one",
    "short-by-one": "its length one less than its content: one byte of it is left over",
}


def length_edges(verdict: Verdict, existing: dict[str, str] | None = None
                 ) -> tuple[Partition, ...]:
    existing = existing or {}
    return tuple(Partition(n, n, verdict, f"The element has {text}.", existing.get(n))
                 for n, text in LENGTH_EDGES.items())


def with_length(tag: int, content: bytes, edge: str) -> bytes:
    """The TLV of ``tag`` and ``content`` with the length form ``edge`` (of
    :data:`LENGTH_EDGES`)."""
    n = len(content)
    if edge == "long-form-81":
        if n >= 0x80:
            raise ValueError("81 nn is the minimal form from 128 on")
        return bytes([tag, 0x81, n]) + content
    if edge == "long-form-82":
        return der.ber_long_length(tag, content, extra_octets=1)
    if edge == "overruns-by-one":
        return bytes([tag]) + der.encode_length(n + 1) + content
    if edge == "short-by-one":
        return bytes([tag]) + der.encode_length(n - 1) + content
    raise ValueError(f"unknown length edge {edge!r}")


def tag_neighbours(tag: int, verdict: Verdict) -> tuple[Partition, ...]:
    """The tag one below, one above and with its constructed bit (0x20) flipped."""
    values = ((tag - 1, "one below"), (tag + 1, "one above"),
              (tag ^ 0x20, "with its constructed bit flipped"))
    return tuple(Partition(f"tag-{t:02x}", t, verdict,
                           f"The element's tag is {t:02x}, {what} the {tag:02x} it should have.")
                 for t, what in values)


#: The forms :func:`integer_edges` makes of a DER INTEGER, and what each is.
INTEGER_EDGES: dict[str, str] = {
    "negative": "a positive value whose top bit is set, written without its 00 pad octet: "
                "DER reads it as negative (X.690 8.3.3), a reader of unsigned magnitudes as the "
                "value",
    "leading-zero": "a needless leading 00 octet (X.690 8.3.2 forbids it: not minimal)",
}


def integer_edges(verdict: Verdict) -> tuple[Partition, ...]:
    """A DER INTEGER at the edges of its grammar: its sign octet dropped, a needless leading
    zero, and the INTEGER tag's neighbours (:func:`tag_neighbours`)."""
    return (*(Partition(n, n, verdict, f"The element is {text}.")
              for n, text in INTEGER_EDGES.items()),
            *tag_neighbours(0x02, verdict))


def with_integer(value: int, edge: str | int) -> bytes:
    """The INTEGER TLV of a positive ``value`` in the form ``edge`` (of :data:`INTEGER_EDGES`,
    or a tag): "negative" needs a value whose top bit is set in its minimal magnitude."""
    if value <= 0:
        raise ValueError("a positive value only")
    magnitude = value.to_bytes((value.bit_length() + 7) // 8, "big")
    content = (b"\x00" if magnitude[0] & 0x80 else b"") + magnitude  # DER's minimal content
    if edge == "negative":
        if not magnitude[0] & 0x80:
            raise ValueError("only a value whose top bit is set has a 00 pad to drop")
        return der.tlv(0x02, magnitude)
    if edge == "leading-zero":
        return der.tlv(0x02, b"\x00" + content)
    if isinstance(edge, int):
        return der.tlv(edge, content)
    raise ValueError(f"unknown integer edge {edge!r}")


def one_arc_away(oid: str, verdict: Verdict, malformed: Verdict) -> tuple[Partition, ...]:
    """The OIDs one arc away from ``oid``: parent, child, the two siblings of its last arc, the
    neighbours of its enterprise number (the arc after 1.3.6.1.4.1); and ``oid`` itself with
    its last arc non-minimal (a leading 80 octet, not DER), given as encoded bytes."""
    arcs = [int(a) for a in oid.split(".")]
    dotted = ".".join
    out = [Partition("parent", dotted(map(str, arcs[:-1])), verdict,
                     f"The extension's OID is {dotted(map(str, arcs[:-1]))}, the parent of "
                     f"{oid}."),
           Partition("child", f"{oid}.1", verdict,
                     f"The extension's OID is {oid}.1, a child of {oid}.")]
    for delta, which in ((-1, "previous"), (1, "next")):
        sibling = dotted(map(str, [*arcs[:-1], arcs[-1] + delta]))
        out.append(Partition(f"sibling-{which}", sibling, verdict,
                             f"The extension's OID is {sibling}, the {which} sibling of {oid}."))
    position = 6  # 1.3.6.1.4.1.<enterprise>
    for delta, which in ((-1, "previous"), (1, "next")):
        moved = [*arcs]
        moved[position] += delta
        text = dotted(map(str, moved))
        out.append(Partition(f"enterprise-{which}", text, verdict,
                             f"The extension's OID is {text}: the {which} enterprise number."))
    encoded = der.oid(oid)
    raw = encoded[:-1] + b"\x80" + encoded[-1:]
    out.append(Partition("non-minimal-arc", bytes([raw[0], len(raw) - 2]) + raw[2:], malformed,
                         f"The extension's OID is {oid} with its last arc written with a "
                         "needless leading 80 octet (X.690 8.19.2 forbids it)."))
    return tuple(out)


def scalar_edges(high: Verdict, out_of_range: Verdict, existing: dict[str, str] | None = None
                 ) -> tuple[Partition, ...]:
    """An ECDSA signature's ``s`` at the edges of [1, n-1]: its high twin n - s (the half
    above n/2), s + n (the same s modulo n, out of range) and zero."""
    existing = existing or {}
    return (
        Partition("high-s", "high", high, "The signature's s is above n/2 (the twin n - s of a "
                  "valid low s: a valid ECDSA signature).", existing.get("high-s")),
        Partition("s-plus-n", "plus-n", out_of_range, "The signature's s is s + n: congruent "
                  "to a valid s but outside [1, n-1] (SEC1 4.1.4 step 1).",
                  existing.get("s-plus-n")),
        Partition("s-zero", "zero", out_of_range, "The signature's s is 0, outside [1, n-1].",
                  existing.get("s-zero")),
    )


def field_number_edges(verdict: Verdict, existing: dict[int, str] | None = None
                       ) -> tuple[Partition, ...]:
    """An unknown field after Data at the edges of a protobuf field key's varint: 0 (reserved),
    3 (the first unknown), 15 and 16 (the last one-octet and the first two-octet key) and
    2^29 - 1 (the largest field number)."""
    existing = existing or {}
    numbers = ((0, "field 0, which protobuf reserves"), (3, "field 3, the first unknown one"),
               (15, "field 15, the last with a one-octet key"),
               (16, "field 16, the first with a two-octet key"),
               (2**29 - 1, "field 536870911 (2^29 - 1), the largest field number"))
    return tuple(Partition(f"field-{n}", n, verdict, f"A varint field after Data: {what}.",
                           existing.get(n))
                 for n, what in numbers)


# -- building ------------------------------------------------------------------------------------
def _rsa_kind(bits: int) -> KeyKind:
    return next(k for k in KeyKind if k.rsa_bits == bits)


def _with_value(ctx: BuildContext, value: Callable[[bytes, bytes, HostKey], bytes],
                host: HostKey | None = None) -> Built:
    """The P-256 certificate whose extension value is ``value(protobuf, valid host signature,
    host)`` (re-signed)."""
    d = ctx.draft(host=host or ctx.host())
    return ctx.built(with_libp2p_value(d, value(d.host.protobuf, host_signature(d.host, d),
                                                d.host)))


#: The attempt that found a value, by (seed, search): the partitions of one property share it.
_FOUND: dict[tuple[bytes, str], int] = {}


def _found(ctx: BuildContext, search: str, test: Callable[[int], Built | None]) -> Built:
    """The first attempt ``i`` (from 0) for which ``test(i)`` builds the case; ``test`` must
    depend on the seed and ``i`` only, so that every partition of the search finds the same."""
    known = _FOUND.get((ctx.seed, search))
    for i in ([known] if known is not None else range(20_000)):
        built = test(i)
        if built is not None:
            if len(_FOUND) >= 64:
                _FOUND.clear()
            _FOUND[(ctx.seed, search)] = i
            return built
    raise RuntimeError(f"{ctx.fixture_id}: no attempt found the value")  # pragma: no cover


# -- sizes ---------------------------------------------------------------------------------------
def _rsa_host_verdict(bits: int) -> Verdict:
    if 2048 <= bits <= 8192:
        return VALID
    return Verdict("acceptable", flags=(Flag.RSA_HOST_KEY_SIZE,))


boundary(Property(
    "host-key.rsa-bits", "host-key",
    "A valid P-256 certificate with an RSA host key (a fixed key) of this size:",
    "peer-ids.md sets no RSA size; go-libp2p: 2048..8192 bits; py-libp2p: at most 4096; "
    "js-libp2p: a PKIX key under 1062 bytes",
    around([Limit(2048, "go-libp2p's minimum"), Limit(4096, "py-libp2p's maximum"),
            Limit(8192, "go-libp2p's maximum; js-libp2p refuses the 1062-byte SubjectPublicKeyInfo "
                        "of RSA-8192, and accepts RSA-8191's 1061 bytes")],
           _rsa_host_verdict, "bits",
           existing={2048: "matrix.ecdsa_secp256r1_sha256.rsa-2048.fixed",
                     8192: "host-rsa-8192"}),
    lambda ctx, bits: ctx.built(ctx.draft(host=HostKey(load_fixed(_rsa_kind(bits))))),
    importance="high",
))


def _serial_of(ctx: BuildContext, octets: int) -> Built:
    raw = bytearray(ctx.derived("serial", octets))
    raw[0] = (raw[0] & 0x3F) | 0x40  # no sign octet needed: exactly ``octets`` octets
    return ctx.built(ctx.draft().but(serial=der.integer(int.from_bytes(raw, "big"))))


boundary(Property(
    "serial.octets", "serial",
    "A valid certificate whose serial number INTEGER has this many content octets (positive, "
    "no sign octet needed):",
    "RFC 5280 4.1.2.2: serial numbers of up to 20 octets MUST be handled (longer ones are a "
    "sender's fault: the sender judgement's serial-too-long)",
    (Partition("1", 1, VALID, "1 octet, the shortest serial."),
     Partition("19", 19, VALID, "19 octets, one below 20 (RFC 5280 4.1.2.2's limit)."),
     Partition("20", 20, VALID, "20 octets, at RFC 5280 4.1.2.2's limit (what rcgen writes, "
               "so rust-libp2p's own certificates).")),
    _serial_of, importance="medium",
))


def _rsa_exponent(ctx: BuildContext, exponent: int) -> Built:
    private = derive_rsa(ctx.seed, f"{ctx.fixture_id}/host", 2048, exponent)
    return ctx.built(ctx.draft(host=HostKey(KeyPair.of(_rsa_kind(2048), private, "throwaway"))))


boundary(Property(
    "host-key.rsa-exponent", "host-key",
    "A P-256 certificate whose RSA-2048 host key has another public exponent than 65537.",
    "RFC 8017 3.1: e is odd, 3 <= e <= n - 1; peer-ids.md: RSA keys are PKIX DER (no "
    "exponent rule)",
    (Partition("3", 3, VALID, "e = 3, the smallest exponent RFC 8017 allows (and the other "
               "one OpenSSL's and pyca's key generators offer)."),
     Partition("65537", 65537, VALID, "e = 65537, what nearly every RSA key has.",
               "matrix.ecdsa_secp256r1_sha256.rsa-2048.fixed"),
     Partition("2147483647", 2**31 - 1, VALID, "e = 2^31 - 1 (a prime), the largest exponent "
               "Go's crypto/rsa takes (it refuses e > 2^31 - 1).")),
    _rsa_exponent, importance="medium",
))


def _rsa_certificate_verdict(bits: int) -> Verdict:
    if bits < 2048:
        return Verdict("acceptable", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, (Flag.WEAK_RSA_KEY,))
    if bits > 8192:
        return Verdict("acceptable", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
                       (Flag.LARGE_RSA_KEY,))
    return VALID


boundary(Property(
    "certificate-key.rsa-bits", "certificate-key",
    "A certificate with a valid Ed25519 extension, signed with rsa_pkcs1_sha256 by a fixed "
    "RSA certificate key of this size:",
    "tls.md sets no key size; rust-libp2p (webpki, ring): 2048..8192 bits",
    around([Limit(2048, "rust-libp2p's minimum, which ring counts in whole bytes"),
            Limit(8192, "rust-libp2p's maximum")],
           _rsa_certificate_verdict, "bits",
           existing={2048: "matrix.rsa_pkcs1_sha256.ed25519.fixed"}),
    lambda ctx, bits: ctx.built(ctx.draft("rsa_pkcs1_sha256", cert_kind=_rsa_kind(bits),
                                          cert_source="fixed")),
))


# -- RSA signature lengths -----------------------------------------------------------------------
#: An RSA signature's length in octets, against the modulus length k (RFC 8017 8.2.2 step 1:
#: a signature that is not k octets long is invalid).
RSA_LENGTHS: tuple[tuple[str, str], ...] = (
    ("k-minus-1", "k - 1 octets: a signature whose first octet is zero, that zero left out"),
    ("k", "k octets (the modulus length), its first octet zero"),
    ("k-plus-1", "k + 1 octets: a zero octet before the valid signature"),
)


def _rsa_length(signature: bytes, which: str) -> bytes:
    assert signature[0] == 0
    return {"k-minus-1": signature[1:], "k": signature, "k-plus-1": b"\x00" + signature}[which]


def _rsa_lengths(error: ErrorCode) -> tuple[Partition, ...]:
    return tuple(Partition(n, n, VALID if n == "k" else invalid(error), f"The signature is {t}.")
                 for n, t in RSA_LENGTHS)


def _host_signature_length(ctx: BuildContext, which: str) -> Built:
    """The fixed RSA-2048 host key signs certificate keys (P-256, one per attempt, derived from
    the seed alone: the same in the three partitions) until its signature's first octet is
    zero."""
    host = ctx.host("RSA", source="fixed")

    def attempt(i: int) -> Built | None:
        key = KeyPair.of(KeyKind.P256, derive_private_key(
            KeyKind.P256, ctx.seed, f"boundary/rsa-length/{i}"), "throwaway")
        sig = host.sign(handshake_message(key.spki))
        if sig[0]:
            return None
        d = ctx.draft(host=host, cert_key=key)
        return ctx.built(with_libp2p_value(d, signed_key(host.protobuf, _rsa_length(sig, which))))

    return _found(ctx, "host-signature.rsa-length", attempt)


boundary(Property(
    "host-signature.rsa-length", "host-signature",
    "The RSA-2048 host key's PKCS#1 v1.5 signature (the fixed key) on a P-256 certificate.",
    "RFC 8017 8.2.2: a signature that is not k octets long is invalid",
    _rsa_lengths(ErrorCode.EXTENSION_SIGNATURE_INVALID),
    _host_signature_length, importance="high",
))


def _self_signature_length(ctx: BuildContext, which: str) -> Built:
    """The fixed RSA-2048 certificate key signs its TBS (one subject per attempt; the serial and
    the Ed25519 host key shared by the three partitions) until the signature's first octet is
    zero."""
    host = HostKey(ctx.shared(KeyKind.ED25519, "rsa-length-host"))
    serial = der.integer(derived_serial("boundary.self-signature.rsa-length"))

    def attempt(i: int) -> Built | None:
        subject = name((OID_ORGANIZATION, "fixturegen"),
                       (OID_COMMON_NAME, f"libp2p TLS fixture {i}"))
        d = ctx.draft("rsa_pkcs1_sha256", cert_source="fixed", subject=subject, host=host)
        d = d.but(serial=serial)
        tbs = d.tbs_der()
        sig = d.signature(tbs)
        if sig[0]:
            return None
        cert = assemble(tbs, d.algorithm.algorithm_identifier(), _rsa_length(sig, which))
        return ctx.built(d, files=(cert,))

    return _found(ctx, "self-signature.rsa-length", attempt)


boundary(Property(
    "self-signature.rsa-length", "self-signature",
    "The rsa_pkcs1_sha256 self-signature of the fixed RSA-2048 certificate key.",
    "RFC 8017 8.2.2: a signature that is not k octets long is invalid; tls.md: abort if the "
    "self-signature is invalid",
    _rsa_lengths(ErrorCode.CERTIFICATE_SIGNATURE_INVALID),
    _self_signature_length, importance="high",
))


# -- SignedKey: length forms and tags ------------------------------------------------------------
MALFORMED = invalid(ErrorCode.EXTENSION_MALFORMED)
_FAULT = "invalid.fault.signed-key"


def _signed_key_with(which: str, tlv: Callable[[int, bytes], bytes]
                     ) -> Callable[[bytes, bytes, HostKey], bytes]:
    """A SignedKey whose element ``which`` (sequence, public-key, signature) is written by
    ``tlv(tag, content)``, the others in DER."""

    def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
        first = tlv(0x04, pb) if which == "public-key" else der.octet_string(pb)
        second = tlv(0x04, sig) if which == "signature" else der.octet_string(sig)
        if which == "sequence":
            return tlv(0x30, first + second)
        return der.sequence(first, second)

    return value


_ELEMENTS = {"sequence": ("the SignedKey SEQUENCE", {
                 "long-form-82": f"{_FAULT}.ber-length", "overruns-by-one": f"{_FAULT}.truncated"}),
             "public-key": ("the publicKey OCTET STRING", {
                 "long-form-82": f"{_FAULT}.public-key-ber-length",
                 "overruns-by-one": f"{_FAULT}.public-key-overruns"}),
             "signature": ("the signature OCTET STRING", {
                 "long-form-82": f"{_FAULT}.signature-ber-length"})}

def _length_of(which: str) -> Callable[[BuildContext, str], Built]:
    def build(ctx: BuildContext, edge: str) -> Built:
        return _with_value(ctx, _signed_key_with(
            which, lambda tag, content: with_length(tag, content, edge)))

    return build


def _tag_of(which: str) -> Callable[[BuildContext, int], Built]:
    def build(ctx: BuildContext, tag: int) -> Built:
        return _with_value(ctx, _signed_key_with(
            which, lambda _tag, content: der.tlv(tag, content)))

    return build


for _which, (_what, _existing) in _ELEMENTS.items():
    boundary(Property(
        f"signed-key.{_which}-length", "signed-key",
        f"An Ed25519 host key on a P-256 certificate; in the SignedKey, {_what} alone is not "
        "in DER.",
        SIGNED_KEY_RULE, length_edges(MALFORMED, _existing),
        _length_of(_which),
    ))
    boundary(Property(
        f"signed-key.{_which}-tag", "signed-key",
        f"An Ed25519 host key on a P-256 certificate; in the SignedKey, {_what} has another tag "
        "(its length and content as in DER).",
        SIGNED_KEY_RULE, tag_neighbours(0x30 if _which == "sequence" else 0x04, MALFORMED),
        _tag_of(_which),
    ))


# -- the extension's OID -------------------------------------------------------------------------
def _extension_oid(ctx: BuildContext, oid: str | bytes) -> Built:
    d = ctx.draft()
    value = der.children(d.tbs.extensions[0])[-1]  # the extnValue OCTET STRING
    encoded = der.oid(oid) if isinstance(oid, str) else oid
    return ctx.built(d.but(extensions=(der.sequence(encoded, value),)))


boundary(Property(
    "extension.oid", "extension",
    f"A P-256 certificate whose only extension is the valid, non-critical SignedKey of its "
    f"Ed25519 host key, under an OID one arc away from {LIBP2P_EXTENSION_OID}.",
    f"{EXT}: the extension's OID is {LIBP2P_EXTENSION_OID}; abort if it is missing",
    one_arc_away(LIBP2P_EXTENSION_OID, invalid(ErrorCode.EXTENSION_MISSING),
                 invalid(ErrorCode.MALFORMED_CERTIFICATE)),
    _extension_oid, importance="high",
))


# -- the host key protobuf ------------------------------------------------------------------------
HOST_MALFORMED = invalid(ErrorCode.HOST_KEY_MALFORMED)


def _protobuf(ctx: BuildContext, layout: str) -> Built:
    """The Ed25519 host key's PublicKey with repeated or reordered fields whose copies differ
    (``other``: another Ed25519 key's Data; RSA's Type code 0)."""
    other = ctx.host(role="other").data

    def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
        t, data = b"\x08\x01", b"\x12" + varint(32) + host.data
        wrong_t, wrong_data = b"\x08\x00", b"\x12" + varint(32) + other
        fields = {"type-repeated-last-differs": wrong_t + t + data,
                  "type-repeated-first-differs": t + wrong_t + data,
                  "type-after-data-differs": t + data + wrong_t,
                  "data-repeated-last-differs": t + wrong_data + data,
                  "data-repeated-first-differs": t + data + wrong_data,
                  "data-type-data-differs": wrong_data + t + data}[layout]
        return signed_key(fields, sig)

    return _with_value(ctx, value)


_LAYOUTS = (
    ("type-repeated-last-differs", "Type twice, RSA (0) then Ed25519 (1), then Data: a decoder "
     "that keeps the last copy sees the real key"),
    ("type-repeated-first-differs", "Type twice, Ed25519 then RSA, then Data: the last copy "
     "names another type"),
    ("type-after-data-differs", "Type, Data, then Type again saying RSA (out of order and "
     "repeated)"),
    ("data-repeated-last-differs", "Type, then Data twice: another Ed25519 key first, the real "
     "one last (whose signature it is)"),
    ("data-repeated-first-differs", "Type, then Data twice: the real key first, another one "
     "last"),
    ("data-type-data-differs", "Data (another key), Type, Data (the real key): out of order "
     "and repeated"),
)
boundary(Property(
    "host-key.repeated-fields", "host-key",
    "An Ed25519 host key on a P-256 certificate, with a valid signature by the real key; its "
    "PublicKey protobuf repeats a field, the copies different.",
    f"{KEYS_RULE} (fields in tag order, each once; a protobuf decoder keeps the last copy)",
    tuple(Partition(n, n, HOST_MALFORMED, f"The protobuf has {t}.") for n, t in _LAYOUTS),
    _protobuf, importance="high",
))

boundary(Property(
    "host-key.unknown-field", "host-key",
    "An Ed25519 host key on a P-256 certificate whose canonical PublicKey is followed by one "
    "more varint field (value 0).",
    f"{KEYS_RULE} (nothing but Type and Data)",
    field_number_edges(HOST_MALFORMED, existing={3: "invalid.host-key.extra-field"}),
    lambda ctx, number: _with_value(
        ctx, lambda pb, sig, host: signed_key(pb + varint(number << 3) + b"\x00", sig)),
))


# -- Ed25519 points and scalars -------------------------------------------------------------------
ED25519_P = 2**255 - 19
ED25519_L = 2**252 + 27742317777372353535851937790883648493


def _scalar_point(seed: bytes) -> tuple[int, bytes]:
    """(a, A = [a]B) of the Ed25519 private key ``seed`` (RFC 8032 5.1.5)."""
    from cryptography.hazmat.primitives.asymmetric import ed25519

    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little") & ((1 << 254) - 8) | (1 << 254)
    point = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    return a, point


#: Encodings of the identity point (0, 1): canonical, with y + p, with x's sign bit set.
ED25519_POINTS: dict[str, tuple[bytes, Verdict, str]] = {
    "small-order-identity": (
        (1).to_bytes(32, "little"),
        Verdict("acceptable", flags=(Flag.ED25519_SMALL_ORDER_KEY,)),
        "the identity point (order 1), canonically encoded (01 00 .. 00), and a signature "
        "(R = [r]B, S = r) that verifies under it for every message"),
    "non-canonical-y": (
        (ED25519_P + 1).to_bytes(32, "little"),
        HOST_MALFORMED,
        "the identity point with y written as p + 1 (RFC 8032 5.1.3: y >= p fails to decode), "
        "and the same signature"),
    "x-sign-on-zero": (
        (1 | (1 << 255)).to_bytes(32, "little"),
        HOST_MALFORMED,
        "the identity point with the sign bit of x set although x = 0 (RFC 8032 5.1.3 step 4: "
        "decoding fails), and the same signature"),
}


@dataclass(frozen=True)
class StatedHostKey(HostKey):
    """A host key whose Data is stated rather than read from its pair: a point no private key
    is known for. Its protobuf and PeerId are the stated point's (the manifest's); its pair
    only gives the type."""

    stated: bytes = b""

    @cached_property
    def data(self) -> bytes:
        return self.stated


def _ed25519_point(ctx: BuildContext, which: str) -> Built:
    host = StatedHostKey(ctx.host().pair, ED25519_POINTS[which][0])
    a, big_r = _scalar_point(ctx.derived("ed25519-r", 32))
    signature = big_r + (a % ED25519_L).to_bytes(32, "little")
    d = ctx.draft(host=host)
    return ctx.built(with_libp2p_value(d, signed_key(host.protobuf, signature)))


boundary(Property(
    "host-key.ed25519-point", "host-key",
    "A P-256 certificate whose Ed25519 host key is a point at the edge of the encoding.",
    "RFC 8032 5.1.3 (decoding) and 5.1.7 (verification); peer-ids.md: Ed25519",
    tuple(Partition(n, n, v, f"The key is {t}.") for n, (_, v, t) in ED25519_POINTS.items()),
    _ed25519_point, importance="high",
))


def _ed25519_s(ctx: BuildContext, which: str) -> Built:
    def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
        s = int.from_bytes(sig[32:], "little")
        s = s + ED25519_L if which == "s-plus-l" else s | (1 << 255)
        return signed_key(pb, sig[:32] + s.to_bytes(32, "little"))

    return _with_value(ctx, value)


boundary(Property(
    "host-signature.ed25519-s", "host-signature",
    "The Ed25519 host signature on a P-256 certificate, its S out of range.",
    "RFC 8032 5.1.7: S must be in [0, L)",
    (Partition("s-plus-l", "s-plus-l", invalid(ErrorCode.EXTENSION_SIGNATURE_INVALID),
               "S is S + L: the same value modulo L (a malleated twin of the valid signature)."),
     Partition("s-top-bit", "s-top-bit", invalid(ErrorCode.EXTENSION_SIGNATURE_INVALID),
               "S has its top bit (bit 255) set, which an implementation that masks the top "
               "bits of S ignores.")),
    _ed25519_s, importance="high",
))


# -- ECDSA s ---------------------------------------------------------------------------------------
def _ecdsa_s(host_type: str, order: int) -> Callable[[BuildContext, str], Built]:
    def build(ctx: BuildContext, which: str) -> Built:
        def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
            r, s = decode_dss_signature(sig)
            low = min(s, order - s)
            s = {"high": order - low, "plus-n": s + order, "zero": 0}[which]
            return signed_key(pb, encode_dss_signature(r, s))

        return _with_value(ctx, value, ctx.host(host_type))

    return build


for _type, _kind, _high, _existing in (
        ("ECDSA", KeyKind.P256, VALID, {}),
        ("Secp256k1", KeyKind.SECP256K1,
         Verdict("acceptable", flags=(Flag.HIGH_S_HOST_SIGNATURE,)),
         {"high-s": "acceptable.high-s-secp256k1"})):
    assert _kind.order is not None
    boundary(Property(
        f"host-signature.{_type.lower()}-s", "host-signature",
        f"The {_type} host key's DER ECDSA signature on a P-256 certificate, its s at an edge.",
        "SEC1 4.1.4: r and s in [1, n-1]; peer-ids.md: ECDSA/Secp256k1 signatures are DER "
        "(silent on low-S)",
        scalar_edges(_high, invalid(ErrorCode.EXTENSION_SIGNATURE_INVALID), _existing),
        _ecdsa_s(_type, _kind.order), importance="high",
    ))


# -- ECDSA signature INTEGERs ---------------------------------------------------------------------
def _top_bit_set(value: int) -> bool:
    return value.bit_length() % 8 == 0


def _without_sign_octet(r: int, s: int) -> bytes | None:
    """The signature with the first of r and s whose top bit is set written without its sign
    octet; None when neither has it (a low-S Secp256k1 s never does)."""
    if _top_bit_set(r):
        return der.sequence(with_integer(r, "negative"), der.integer(s))
    if _top_bit_set(s):
        return der.sequence(der.integer(r), with_integer(s, "negative"))
    return None


def _ecdsa_integer(host_type: str) -> Callable[[BuildContext, str | int], Built]:
    def build(ctx: BuildContext, edge: str | int) -> Built:
        if edge != "negative":
            def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
                r, s = decode_dss_signature(sig)
                return signed_key(pb, der.sequence(with_integer(r, edge), der.integer(s)))

            return _with_value(ctx, value, ctx.host(host_type))
        # the first host key of the seed whose signature has r or s with its top bit set (about
        # one in two for a low-S Secp256k1 signature, whose s never has it; the valid signature
        # is kept as it is, never its high-S twin, which the catalogue judges apart)
        for attempt in range(64):
            host = ctx.host(host_type, role="host" if attempt == 0 else f"host-{attempt}")
            d = ctx.draft(host=host)
            r, s = decode_dss_signature(host_signature(host, d))
            signature = _without_sign_octet(r, s)
            if signature is not None:
                return ctx.built(with_libp2p_value(d, signed_key(host.protobuf, signature)))
        raise RuntimeError(f"{ctx.fixture_id}: no signature with a top bit set")  # pragma: no cover

    return build


for _type in ("ECDSA", "Secp256k1"):
    boundary(Property(
        f"host-signature.{_type.lower()}-integer", "host-signature",
        f"The {_type} host key's ECDSA signature on a P-256 certificate, one of its INTEGERs "
        "(r; for the sign octet, the first of r and s whose top bit is set) at an edge of "
        "DER's INTEGER grammar.",
        "peer-ids.md: ECDSA/Secp256k1 signatures are DER; X.690 8.3 (INTEGER) and 10.1",
        integer_edges(invalid(ErrorCode.EXTENSION_SIGNATURE_INVALID)),
        _ecdsa_integer(_type), importance="high",
    ))


# -- EC point forms --------------------------------------------------------------------------------
def _points(host: HostKey) -> tuple[bytes, bytes]:
    public = host.pair.private.public_key()
    return (public.public_bytes(serialization.Encoding.X962,
                                serialization.PublicFormat.CompressedPoint),
            public.public_bytes(serialization.Encoding.X962,
                                serialization.PublicFormat.UncompressedPoint))


def _hybrid(compressed: bytes, uncompressed: bytes) -> bytes:
    """X9.62's hybrid form: 06 or 07 (Y's parity) and both coordinates."""
    return bytes([compressed[0] + 4]) + uncompressed[1:]


def _secp256k1_point(ctx: BuildContext, form: str) -> Built:
    def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
        compressed, uncompressed = _points(host)
        data = {"hybrid": _hybrid(compressed, uncompressed),
                "parity-flipped": bytes([compressed[0] ^ 1]) + compressed[1:]}[form]
        return signed_key(encode_public_key(KEY_TYPE_CODES["Secp256k1"], data), sig)

    return _with_value(ctx, value, ctx.host("Secp256k1"))


boundary(Property(
    "host-key.secp256k1-point", "host-key",
    "A P-256 certificate whose Secp256k1 host key's point has another X9.62 form; the "
    "signature is the real key's.",
    "peer-ids.md: Secp256k1 Data is the 33-byte compressed point",
    (Partition("uncompressed", "uncompressed", HOST_MALFORMED, "Data is the 65-byte "
               "uncompressed point (04 X Y).", "invalid.host-key.secp256k1-uncompressed"),
     Partition("hybrid", "hybrid", HOST_MALFORMED, "Data is the 65-byte hybrid point (06 or 07, "
               "X, Y)."),
     Partition("parity-flipped", "parity-flipped",
               invalid(ErrorCode.EXTENSION_SIGNATURE_INVALID),
               "Data is the compressed point with the other parity prefix: the point (X, -Y), "
               "on the curve, another key, whose signature this is not."),
     Partition("off-curve", "off-curve", HOST_MALFORMED, "Data's X has no Y on the curve.",
               "invalid.fault.host-key.point-off-curve")),
    _secp256k1_point, importance="high",
))

_P256_ALGORITHM = der.sequence(der.oid("1.2.840.10045.2.1"), der.oid("1.2.840.10045.3.1.7"))


def _ecdsa_point(ctx: BuildContext, form: str) -> Built:
    def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
        compressed, uncompressed = _points(host)
        point = compressed if form == "compressed" else _hybrid(compressed, uncompressed)
        spki = der.sequence(_P256_ALGORITHM, der.bit_string(point))
        return signed_key(encode_public_key(KEY_TYPE_CODES["ECDSA"], spki), sig)

    return _with_value(ctx, value, ctx.host("ECDSA"))


boundary(Property(
    "host-key.ecdsa-point", "host-key",
    "A P-256 certificate whose ECDSA (P-256) host key's SubjectPublicKeyInfo holds its point in "
    "another X9.62 form; the signature is the real key's.",
    f"{KEYS_RULE}: one encoding per key (RFC 5480 2.2: the uncompressed form MUST be supported; "
    "the compressed one is a second encoding, so a second PeerId)",
    (Partition("uncompressed", "uncompressed", VALID, "The point is uncompressed (04 X Y).",
               "matrix.ecdsa_secp256r1_sha256.ecdsa-p256.fixed"),
     Partition("compressed", "compressed", HOST_MALFORMED,
               "The point is compressed (02 or 03, X)."),
     Partition("hybrid", "hybrid", HOST_MALFORMED, "The point is hybrid (06 or 07, X, Y)."),
     Partition("off-curve", "off-curve", HOST_MALFORMED, "The point is not on the curve.",
               "invalid.fault.host-key.point-off-curve")),
    _ecdsa_point,
))


# -- each key type's Data in the forms the other key types use ------------------------------------
def _data_form(ctx: BuildContext, form: str) -> Built:
    """The host key's Data in ``form`` (KEY-FORM): the key type's own key, written as another
    key type's Data is; the signature is the real key's."""
    kind, _, shape = form.partition("-")
    key_type = {"ed25519": "Ed25519", "secp256k1": "Secp256k1", "ecdsa": "ECDSA"}[kind]

    def value(pb: bytes, sig: bytes, host: HostKey) -> bytes:
        public = host.pair.private.public_key()
        data = {"spki": lambda: public.public_bytes(
                    serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo),
                "raw-point": lambda: _points(host)[1]}[shape]()
        return signed_key(encode_public_key(KEY_TYPE_CODES[key_type], data), sig)

    return _with_value(ctx, value, ctx.host(key_type))


boundary(Property(
    "host-key.data-form", "host-key",
    "A P-256 certificate whose host key's Data holds the right key in the form another key "
    "type's Data takes (raw key, X9.62 point, SubjectPublicKeyInfo, PKCS#1); the signature is "
    "the real key's.",
    f"{KEYS_RULE}: Ed25519 Data is the 32-byte key, Secp256k1's the compressed point, ECDSA's "
    "and RSA's a DER SubjectPublicKeyInfo (PKIX); one encoding per key",
    (Partition("ed25519-raw", "ed25519-raw", VALID, "Ed25519 Data is the raw 32-byte key.",
               "matrix.ecdsa_secp256r1_sha256.ed25519.fixed"),
     Partition("ed25519-spki", "ed25519-spki", HOST_MALFORMED,
               "Ed25519 Data is the key's 44-byte DER SubjectPublicKeyInfo."),
     Partition("secp256k1-spki", "secp256k1-spki", HOST_MALFORMED,
               "Secp256k1 Data is the key's DER SubjectPublicKeyInfo (id-ecPublicKey, "
               "secp256k1)."),
     Partition("ecdsa-raw-point", "ecdsa-raw-point", HOST_MALFORMED,
               "ECDSA (P-256) Data is the bare 65-byte uncompressed point, not a "
               "SubjectPublicKeyInfo."),
     Partition("rsa-pkcs1", "rsa-pkcs1", HOST_MALFORMED,
               "RSA Data is a PKCS#1 RSAPublicKey.", "invalid.host-key.rsa-not-spki")),
    _data_form, importance="high",
))


# -- validity times at the UTCTime / GeneralizedTime switch ---------------------------------------
_TIMES: dict[str, tuple[bytes, Verdict, str, str | None]] = {
    "generalized-1949": (b"", VALID, "notBefore 1949-12-31T23:59:59Z as GeneralizedTime",
                         "valid.time.generalized-1949"),
    "utc-1950": (b"", VALID, "notBefore 1950-01-01 as UTCTime", "valid.time.utc-1950"),
    "utc-2049": (b"", VALID, "notAfter 2049-12-31T23:59:59Z as UTCTime", "valid.time.utc-2049"),
    "generalized-2049": (b"", Verdict("acceptable", flags=(Flag.GENERALIZED_TIME_BEFORE_2050,)),
                         "notAfter 2049-12-31T23:59:59Z as GeneralizedTime",
                         "acceptable.time.generalized-2049"),
    "generalized-2050": (der.tlv(der.GENERALIZED_TIME, b"20500101000000Z"), VALID,
                         "notAfter 20500101000000Z: 2050-01-01T00:00:00Z, the first instant RFC "
                         "5280 wants as GeneralizedTime", None),
    "utc-2050": (der.tlv(der.UTC_TIME, b"500101000000Z"), invalid(ErrorCode.EXPIRED),
                 "notAfter 500101000000Z, what a writer that puts 2050-01-01 in UTCTime makes: "
                 "YY 50 is 1950, so the certificate expired in 1950", None),
}


def _validity(ctx: BuildContext, which: str) -> Built:
    d = ctx.draft()
    not_before = der.children(d.tbs.validity)[0]
    return ctx.built(d.but(validity=der.sequence(not_before, _TIMES[which][0])))


boundary(Property(
    "validity.time-switch", "validity",
    "A P-256 certificate whose validity time sits at the switch from UTCTime to "
    "GeneralizedTime.",
    "RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050",
    tuple(Partition(n, n, v, f"{t}.", e) for n, (_, v, t, e) in _TIMES.items()),
    _validity,
))


# -- generation ----------------------------------------------------------------------------------
def cases(properties: Iterable[Property]) -> list[Case]:
    """The cases of the properties' partitions that no existing case sits on, in order."""
    out = []
    for prop in properties:
        for part in prop.partitions:
            if part.existing is not None:
                continue

            def build(ctx: BuildContext, _prop: Property = prop, _value: Any = part.value
                      ) -> Built:
                return _prop.build(ctx, _value)

            v = part.verdict
            out.append(Case(
                id=prop.case_id(part), description=describe(f"{prop.description} {part.text}"),
                result=v.result, build=build, error=v.error, flags=v.flags,
                importance=prop.importance if v.result == "invalid" else None,
                rule=prop.rule, family=prop.family, section="boundaries",
                parameters=(("partition", part.name),)))
    return out


def generated() -> list[Case]:
    return cases(PROPERTIES)


for _case in generated():
    register(_case)
