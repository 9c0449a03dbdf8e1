"""The fault model: every fault of the libp2p extension, declared once, generated in every
context it applies to.

Implementations do not check a fault in one place: they branch on the host key type, the
certificate key type, where the extension sits. A fault placed on one convenient certificate
never reaches the code of the other branches. So each fault here is a small function (its
docstring is what it does) that turns the valid parts of the extension (:class:`Parts`) into
the extension value to send, declared with :func:`fault` and the element it breaks, the kind
of fault, the code the reference verifier must give and the host key types it applies to.

The contexts are parameters (:data:`CONTEXTS`): the host key type, the certificate's signature
scheme (one of each signature family), whether the libp2p extension is critical, and whether it
is the first extension or follows another. Every fault is generated under every host key type
it applies to; the rest is a pairwise covering array over (fault, host key type, scheme,
criticality, position) (``covering.py``), so every fault meets every scheme and every pair of
context values meets at least once, in a few cases per fault rather than the full product.

Real verifiers make the context parameters interact: js-libp2p reads only the first extension,
py-libp2p's TLS verifier refuses Ed25519 and RSA-PSS certificates, js-libp2p's QUIC handshakes
refuse RSA PKCS#1 v1.5 ones; a fault placed only in such a context stops at another check
there and is never tested (it is *masked*). So beyond its pairwise rows, a fault gets one more
row under each host key type it applies to whose pairwise row does not reach it, in the
context every shipped implementation accepts: the extension first, not critical, on an ECDSA
P-256 certificate (:data:`REACHING`; a pairwise row with the extension first on an ECDSA P-256
certificate, critical or not, already reaches). These rows are added after the array and never
weigh on it, so they change no id of the array.

Every context the fault cases use also has its *valid twin*, ``fault-twin.{host}.{scheme}.
{placement}``: the same host key type, scheme and placement, built the same way with the valid
extension. The harness tells from the twins whether an implementation rejected a fault or its
context (``harness/reach.py``: reached, masked or unreachable, per implementation entry).
Each generated case is still one fault, on an otherwise valid certificate (re-signed after the
change), with an id that says fault and context::

    invalid.fault.signed-key.third-element.rsa.ed25519.critical-last

and its family (the id with the context left as ``{host}.{scheme}.{placement}``) groups the
contexts of one fault in the manifest (each fixture's ``family``: the template and this
context's values), the corpus README and the reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.covering import pairwise
from fixturegen.cases.model import Case, Importance, describe, register
from fixturegen.cases.mutate import RSA_PSS_KEY_ALGORITHM, host_signature
from fixturegen.certs import der
from fixturegen.certs.builder import Draft
from fixturegen.certs.extension import (
    LIBP2P_EXTENSION_OID,
    SIGNATURE_PREFIX,
    extension,
    handshake_message,
    signed_key,
)
from fixturegen.certs.pss import sign_pss
from fixturegen.certs.schemes import SCHEMES as NAMED_SCHEMES
from fixturegen.certs.schemes import SigningAlgorithm
from fixturegen.identity.hostkey import HostKey
from fixturegen.identity.protobuf import KEY_TYPE_CODES, encode_public_key, varint
from fixturegen.keys import HOST_KEY_TYPES, KeyKind
from fixturegen.keys.kinds import HostKeyType
from fixturegen.verify.codes import ErrorCode, Flag

Element = Literal["signed-key", "host-key", "extension-signature"]
#: What a fault does to its element (the issue's fault vocabulary).
FaultKind = Literal["tag", "length", "missing", "extra", "trailing", "type", "value", "order"]

#: The context parameters and their values. One scheme of each signature family the spec's
#: implementations verify; the host key types of peer-ids.md.
SCHEMES: tuple[str, ...] = ("ecdsa_secp256r1_sha256", "ed25519", "rsa_pss_rsae_sha256",
                            "rsa_pkcs1_sha256")
SCHEME_KINDS: dict[str, KeyKind] = {s: NAMED_SCHEMES[s].key_kind for s in SCHEMES}
CONTEXTS: dict[str, tuple[object, ...]] = {
    "host": HOST_KEY_TYPES, "scheme": SCHEMES, "critical": (False, True),
    "position": ("first", "last"),
}
#: The extension the libp2p one follows in position "last".
_SUBJECT_KEY_ID = extension("2.5.29.14", der.octet_string(bytes(range(20))))
_RULES: dict[Element, str] = {
    "signed-key": "tls.md: libp2p Public Key Extension: SignedKey ::= SEQUENCE { OCTET STRING, "
                  "OCTET STRING }",
    "host-key": "peer-ids.md: Keys: deterministic encoding",
    "extension-signature": "tls.md: libp2p Public Key Extension: the receiver MUST verify the "
                           "signature",
}


@dataclass(frozen=True)
class Parts:
    """The valid parts of one extension, and what a fault may need to make others."""

    ctx: BuildContext
    host: HostKey
    draft: Draft
    #: The canonical PublicKey protobuf, its Type code and Data.
    protobuf: bytes
    type_code: int
    data: bytes
    #: The host key's valid signature over this certificate's key.
    signature: bytes

    @property
    def message(self) -> bytes:
        return handshake_message(self.draft.cert_key.spki)


@dataclass(frozen=True)
class Fault:
    element: Element
    name: str
    kind: FaultKind
    error: ErrorCode
    hosts: tuple[HostKeyType, ...]
    importance: Importance
    #: The fault itself: the valid parts in, the extension value (a SignedKey, or not) out.
    value: Callable[[Parts], bytes]
    description: str

    @property
    def family(self) -> str:
        return f"invalid.fault.{self.element}.{self.name}.{{host}}.{{scheme}}.{{placement}}"


FAULTS: list[Fault] = []


def fault(element: Element, name: str, kind: FaultKind, error: ErrorCode, *,
          hosts: tuple[HostKeyType, ...] = HOST_KEY_TYPES, importance: Importance = "high"
          ) -> Callable[[Callable[[Parts], bytes]], Callable[[Parts], bytes]]:
    """Declare a fault: the function's docstring says what it does to the element."""

    def wrap(fn: Callable[[Parts], bytes]) -> Callable[[Parts], bytes]:
        if any(f.element == element and f.name == name for f in FAULTS):
            raise ValueError(f"duplicate fault {element}.{name}")
        FAULTS.append(Fault(element, name, kind, error, hosts, importance, fn,
                            describe(fn.__doc__ or "")))
        return fn

    return wrap


def _sk(pb: bytes, sig: bytes) -> bytes:
    return signed_key(pb, sig)


def _non_minimal(n: int) -> bytes:
    """``n`` as a varint with one needless continuation byte (valid protobuf, not canonical)."""
    v = bytearray(varint(n))
    v[-1] |= 0x80
    return bytes(v) + b"\x00"


# -- SignedKey: the SEQUENCE and its two OCTET STRINGs --------------------------------------------
MALFORMED = ErrorCode.EXTENSION_MALFORMED


@fault("signed-key", "not-a-sequence", "type", MALFORMED)
def not_a_sequence(p: Parts) -> bytes:
    """The extension value is a bare OCTET STRING holding the public key protobuf, not a
    SignedKey SEQUENCE."""
    return der.octet_string(p.protobuf)


@fault("signed-key", "bit-strings", "tag", MALFORMED)
def bit_strings(p: Parts) -> bytes:
    """SignedKey holds two BIT STRINGs (the spec's wording before July 2021), not OCTET
    STRINGs."""
    return der.sequence(der.bit_string(p.protobuf), der.bit_string(p.signature))


@fault("signed-key", "third-element", "extra", MALFORMED)
def third_element(p: Parts) -> bytes:
    """SignedKey has a third element, an OCTET STRING, after the signature."""
    return der.sequence(der.octet_string(p.protobuf), der.octet_string(p.signature),
                        der.octet_string(b"\x00"))


@fault("signed-key", "trailing-bytes", "trailing", MALFORMED)
def trailing_bytes(p: Parts) -> bytes:
    """Two zero bytes follow the SignedKey SEQUENCE in the extension value."""
    return _sk(p.protobuf, p.signature) + b"\x00\x00"


@fault("signed-key", "ber-length", "length", MALFORMED)
def ber_length(p: Parts) -> bytes:
    """The SignedKey SEQUENCE's length is in a non-minimal long form (BER, not DER)."""
    return der.ber_long_length(0x30, der.octet_string(p.protobuf) + der.octet_string(p.signature))


@fault("signed-key", "indefinite-length", "length", MALFORMED)
def indefinite_length(p: Parts) -> bytes:
    """The SignedKey SEQUENCE has the indefinite length (80, then end-of-contents 00 00), which
    only BER allows."""
    return (b"\x30\x80" + der.octet_string(p.protobuf) + der.octet_string(p.signature)
            + b"\x00\x00")


@fault("signed-key", "truncated", "length", MALFORMED)
def truncated(p: Parts) -> bytes:
    """The SignedKey's last byte is missing: its length overruns the extension value."""
    return _sk(p.protobuf, p.signature)[:-1]


@fault("signed-key", "signature-missing", "missing", MALFORMED)
def signature_missing(p: Parts) -> bytes:
    """SignedKey holds the public key protobuf only: the signature OCTET STRING is missing."""
    return der.sequence(der.octet_string(p.protobuf))


@fault("signed-key", "empty", "missing", MALFORMED, importance="medium")
def empty(p: Parts) -> bytes:
    """SignedKey is an empty SEQUENCE."""
    return der.sequence()


@fault("signed-key", "public-key-ber-length", "length", MALFORMED)
def public_key_ber_length(p: Parts) -> bytes:
    """The publicKey OCTET STRING inside a well-formed SignedKey has a non-minimal long-form
    length: the outer SEQUENCE passes, the inner element does not."""
    return der.sequence(der.ber_long_length(0x04, p.protobuf), der.octet_string(p.signature))


@fault("signed-key", "signature-ber-length", "length", MALFORMED)
def signature_ber_length(p: Parts) -> bytes:
    """The signature OCTET STRING, the last element, has a non-minimal long-form length."""
    return der.sequence(der.octet_string(p.protobuf), der.ber_long_length(0x04, p.signature))


@fault("signed-key", "public-key-overruns", "length", MALFORMED)
def public_key_overruns(p: Parts) -> bytes:
    """The publicKey OCTET STRING's length is one more than its content: it swallows the tag
    of the signature, and what is left of the SEQUENCE does not parse."""
    bad = b"\x04" + der.encode_length(len(p.protobuf) + 1) + p.protobuf
    return der.tlv(0x30, bad + der.octet_string(p.signature))


@fault("signed-key", "signature-constructed", "tag", MALFORMED)
def signature_constructed(p: Parts) -> bytes:
    """The signature is a constructed OCTET STRING (tag 24) wrapping the signature's OCTET
    STRING, a BER form DER forbids."""
    return der.sequence(der.octet_string(p.protobuf), der.tlv(0x24, der.octet_string(p.signature)))


@fault("signed-key", "public-key-in-sequence", "tag", MALFORMED, importance="medium")
def public_key_in_sequence(p: Parts) -> bytes:
    """The first element is a SEQUENCE holding the publicKey OCTET STRING (a nested SEQUENCE
    where an OCTET STRING belongs); the signature follows as it should."""
    return der.sequence(der.sequence(der.octet_string(p.protobuf)), der.octet_string(p.signature))


# -- the host key protobuf ------------------------------------------------------------------------
HOST_MALFORMED = ErrorCode.HOST_KEY_MALFORMED
#: A type code whose Data has another shape: the fault is the Type, not the Data.
_OTHER_TYPE = {"Ed25519": "Secp256k1", "Secp256k1": "Ed25519", "ECDSA": "RSA", "RSA": "ECDSA"}


@fault("host-key", "truncated", "length", HOST_MALFORMED)
def host_truncated(p: Parts) -> bytes:
    """The protobuf's last byte is missing: Data is shorter than its length field says."""
    return _sk(p.protobuf[:-1], p.signature)


@fault("host-key", "extra-field", "extra", HOST_MALFORMED)
def host_extra_field(p: Parts) -> bytes:
    """A third field (3, varint 0) follows Data: another PeerId for the same key."""
    return _sk(p.protobuf + b"\x18\x00", p.signature)


@fault("host-key", "data-repeated", "extra", HOST_MALFORMED)
def host_data_repeated(p: Parts) -> bytes:
    """The Data field appears twice (a protobuf decoder keeps the last one): not the
    canonical encoding, so another PeerId for the same key."""
    return _sk(p.protobuf + b"\x12" + varint(len(p.data)) + p.data, p.signature)


@fault("host-key", "fields-reversed", "order", HOST_MALFORMED)
def host_fields_reversed(p: Parts) -> bytes:
    """Data (field 2) comes before Type (field 1): valid protobuf, not the canonical encoding."""
    pb = b"\x12" + varint(len(p.data)) + p.data + b"\x08" + varint(p.type_code)
    return _sk(pb, p.signature)


@fault("host-key", "type-missing", "missing", HOST_MALFORMED)
def host_type_missing(p: Parts) -> bytes:
    """Only the Data field is present; Type is required."""
    return _sk(b"\x12" + varint(len(p.data)) + p.data, p.signature)


@fault("host-key", "data-missing", "missing", HOST_MALFORMED)
def host_data_missing(p: Parts) -> bytes:
    """Only the Type field is present; Data is required."""
    return _sk(b"\x08" + varint(p.type_code), p.signature)


@fault("host-key", "length-non-minimal", "length", HOST_MALFORMED)
def host_length_non_minimal(p: Parts) -> bytes:
    """Data's length varint has a needless continuation byte: not the canonical encoding."""
    pb = b"\x08" + varint(p.type_code) + b"\x12" + _non_minimal(len(p.data)) + p.data
    return _sk(pb, p.signature)


@fault("host-key", "type-non-minimal", "length", HOST_MALFORMED)
def host_type_non_minimal(p: Parts) -> bytes:
    """The Type varint has a needless continuation byte: not the canonical encoding."""
    pb = b"\x08" + _non_minimal(p.type_code) + b"\x12" + varint(len(p.data)) + p.data
    return _sk(pb, p.signature)


@fault("host-key", "data-empty", "value", HOST_MALFORMED)
def host_data_empty(p: Parts) -> bytes:
    """Data is present and empty."""
    return _sk(encode_public_key(p.type_code, b""), p.signature)


@fault("host-key", "data-short", "value", HOST_MALFORMED)
def host_data_short(p: Parts) -> bytes:
    """Data lacks its last byte (its length field agrees): a key of the wrong size, or a DER
    SubjectPublicKeyInfo cut short."""
    return _sk(encode_public_key(p.type_code, p.data[:-1]), p.signature)


@fault("host-key", "data-long", "trailing", HOST_MALFORMED)
def host_data_long(p: Parts) -> bytes:
    """Data has one zero byte after the key (its length field agrees): a key of the wrong size,
    or bytes after a DER SubjectPublicKeyInfo."""
    return _sk(encode_public_key(p.type_code, p.data + b"\x00"), p.signature)


@fault("host-key", "type-of-another", "type", HOST_MALFORMED)
def host_type_of_another(p: Parts) -> bytes:
    """The Type names another key type than the Data holds (Ed25519 and Secp256k1 swapped,
    ECDSA and RSA swapped)."""
    other = KEY_TYPE_CODES[_OTHER_TYPE[p.host.type]]
    return _sk(encode_public_key(other, p.data), p.signature)


@fault("host-key", "unknown-type", "type", ErrorCode.HOST_KEY_UNSUPPORTED, importance="medium")
def host_unknown_type(p: Parts) -> bytes:
    """The Type is 4, which no spec defines; Data is the real key's."""
    return _sk(encode_public_key(4, p.data), p.signature)


# -- the extension's signature ---------------------------------------------------------------------
SIG_INVALID = ErrorCode.EXTENSION_SIGNATURE_INVALID


@fault("extension-signature", "empty", "missing", SIG_INVALID, importance="critical")
def signature_empty(p: Parts) -> bytes:
    """The signature OCTET STRING is empty."""
    return _sk(p.protobuf, b"")


@fault("extension-signature", "truncated", "length", SIG_INVALID, importance="critical")
def signature_truncated(p: Parts) -> bytes:
    """The valid signature without its last byte."""
    return _sk(p.protobuf, p.signature[:-1])


@fault("extension-signature", "trailing-byte", "trailing", SIG_INVALID, importance="critical")
def signature_trailing_byte(p: Parts) -> bytes:
    """The valid signature followed by one zero byte."""
    return _sk(p.protobuf, p.signature + b"\x00")


@fault("extension-signature", "first-byte-flipped", "value", SIG_INVALID, importance="critical")
def signature_first_byte_flipped(p: Parts) -> bytes:
    """The lowest bit of the signature's first byte is flipped (for a DER ECDSA signature its
    SEQUENCE tag; for RSA and Ed25519 the signature value)."""
    return _sk(p.protobuf, bytes([p.signature[0] ^ 0x01]) + p.signature[1:])


@fault("extension-signature", "zeros", "value", SIG_INVALID, importance="critical")
def signature_zeros(p: Parts) -> bytes:
    """The signature is zero bytes, as many as the valid one has."""
    return _sk(p.protobuf, bytes(len(p.signature)))


@fault("extension-signature", "other-key", "value", SIG_INVALID, importance="critical")
def signature_other_key(p: Parts) -> bytes:
    """publicKey names the host key; the signature is a valid one, over the same message, by
    another key of the same type. Accepting it lets that key claim this PeerId."""
    return _sk(p.protobuf, _host(p.ctx, p.host.type, "impostor").sign(p.message))


@fault("extension-signature", "no-prefix", "value", SIG_INVALID, importance="critical")
def signature_no_prefix(p: Parts) -> bytes:
    """The host key signed the bare SubjectPublicKeyInfo, without the libp2p-tls-handshake:
    prefix."""
    return _sk(p.protobuf, p.host.sign(p.draft.cert_key.spki))


@fault("extension-signature", "replayed", "value", SIG_INVALID, importance="critical")
def signature_replayed(p: Parts) -> bytes:
    """The host key signed another certificate key's SubjectPublicKeyInfo (an extension copied
    from another certificate)."""
    other = p.ctx.throwaway(KeyKind.P256, "other-certificate")
    return _sk(p.protobuf, p.host.sign(handshake_message(other.spki)))


@fault("extension-signature", "sha384", "value", SIG_INVALID,
       hosts=("RSA", "Secp256k1", "ECDSA"), importance="high")
def signature_sha384(p: Parts) -> bytes:
    """The host key signed with SHA-384 where its type signs with SHA-256."""
    key = p.host.pair.private
    if isinstance(key, rsa.RSAPrivateKey):
        return _sk(p.protobuf, key.sign(p.message, PKCS1v15(), hashes.SHA384()))
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return _sk(p.protobuf, key.sign(p.message, ec.ECDSA(hashes.SHA384(),
                                                         deterministic_signing=True)))


@fault("extension-signature", "rsa-pss", "type", SIG_INVALID, hosts=("RSA",), importance="high")
def signature_rsa_pss(p: Parts) -> bytes:
    """The RSA host key signed with RSASSA-PSS (SHA-256, MGF1, 32-byte salt), not the
    PKCS#1 v1.5 its type uses."""
    key = p.host.pair.private
    assert isinstance(key, rsa.RSAPrivateKey)
    return _sk(p.protobuf, sign_pss(key, p.message, "sha256", p.ctx.derived("host-pss-salt", 32)))


# -- faults declared after the first release of the model: each new fault goes here, at the end,
# so that the covering array keeps the contexts (and ids) of the faults declared before it -------
@fault("extension-signature", "trailing-prefix", "trailing", SIG_INVALID)
def signature_trailing_prefix(p: Parts) -> bytes:
    """The valid signature followed by a zero byte and the signed message's prefix text
    ``libp2p-tls-handshake:`` (a verifier that looks for that text inside the signature and
    cuts the signature there accepts it)."""
    return _sk(p.protobuf, p.signature + b"\x00" + SIGNATURE_PREFIX)


@fault("host-key", "point-off-curve", "value", HOST_MALFORMED, hosts=("Secp256k1", "ECDSA"))
def host_point_off_curve(p: Parts) -> bytes:
    """Data is a well-formed key encoding whose point is not on the curve (Secp256k1: a
    compressed point whose X has no Y on secp256k1; ECDSA: the P-256 SubjectPublicKeyInfo with
    the point's last byte raised), so it passes a length or DER check and fails only when the
    point is decoded."""
    return _sk(encode_public_key(p.type_code, _off_curve(p.host.type, p.data)), p.signature)


@fault("signed-key", "signature-length-missing", "length", MALFORMED)
def signature_length_missing(p: Parts) -> bytes:
    """The SignedKey ends right after the signature's OCTET STRING tag: its length octet is
    missing (a parser that reads the length before checking that a byte is left fails
    differently from one that checks)."""
    return der.sequence(der.octet_string(p.protobuf), b"\x04")


@fault("signed-key", "signature-empty-long-form", "length", MALFORMED)
def signature_empty_long_form(p: Parts) -> bytes:
    """The signature is empty and its length is in long form (``04 81 00``: not DER), as the
    last bytes of the extension."""
    return der.sequence(der.octet_string(p.protobuf), b"\x04\x81\x00")


@fault("signed-key", "length-prefixed", "type", MALFORMED)
def length_prefixed(p: Parts) -> bytes:
    """The extension value is not DER at all: the host key protobuf and the signature, each
    behind a 4-byte big-endian length (an ad-hoc encoding a verifier may fall back to)."""
    return (len(p.protobuf).to_bytes(4, "big") + p.protobuf
            + len(p.signature).to_bytes(4, "big") + p.signature)


@fault("signed-key", "signature-indefinite-length", "length", MALFORMED)
def signature_indefinite_length(p: Parts) -> bytes:
    """The signature OCTET STRING's length octet is 0x80 (indefinite, which not even BER allows
    for a primitive string), followed by the signature (a reader that takes 0x80 as a short
    length of 0, or of 128, goes on differently)."""
    return der.sequence(der.octet_string(p.protobuf), b"\x04\x80" + p.signature)


@fault("host-key", "rsa-pss-key", "type", HOST_MALFORMED, hosts=("RSA",))
def host_rsa_pss_key(p: Parts) -> bytes:
    """The RSA host key's Data is its SubjectPublicKeyInfo under id-RSASSA-PSS (RFC 4055, no
    parameters) instead of rsaEncryption: a key restricted to PSS, which cannot make the
    host key's PKCS#1 v1.5 signature (a verifier that loads any RSA SubjectPublicKeyInfo
    accepts)."""
    return _host_key_under(p, RSA_PSS_KEY_ALGORITHM)


def _host_key_under(p: Parts, algorithm: bytes) -> bytes:
    """The SignedKey with the RSA host key's SubjectPublicKeyInfo under ``algorithm`` (the
    same key bits) and the valid signature."""
    _, bits = der.children(p.data)
    return _sk(encode_public_key(p.type_code, der.sequence(algorithm, bits)), p.signature)


@fault("extension-signature", "prefix-inside", "value", SIG_INVALID)
def signature_prefix_inside(p: Parts) -> bytes:
    """The signed message's prefix text ``libp2p-tls-handshake:`` inserted into the signature
    after its first byte (a verifier that searches the signature for that text and cuts it
    there meets a signature of the wrong length)."""
    return _sk(p.protobuf, p.signature[:1] + SIGNATURE_PREFIX + p.signature[1:])


@fault("host-key", "rsa-pss-key-parameters", "type", HOST_MALFORMED, hosts=("RSA",))
def host_rsa_pss_key_parameters(p: Parts) -> bytes:
    """The RSA host key's Data is its SubjectPublicKeyInfo under id-RSASSA-PSS with explicit
    parameters (SHA-256, MGF1 with SHA-256, salt 32: RFC 4055), a key restricted to PSS
    signatures over SHA-256, which cannot make the host key's PKCS#1 v1.5 signature (a
    verifier that only recognises the parameterless form, or loads any RSA key, accepts)."""
    return _host_key_under(p, SigningAlgorithm("rsa_pss", "sha256").algorithm_identifier())


@fault("signed-key", "signature-indefinite-length-128", "length", MALFORMED, hosts=("RSA",))
def signature_indefinite_length_128(p: Parts) -> bytes:
    """As signed-key.signature-indefinite-length (``04 80`` before the signature), with an
    RSA-1024 host key instead, whose signature is exactly 128 bytes: a reader that takes 0x80
    as a short length of 128 finds the signature whole and nothing left over."""
    host = HostKey(p.ctx.throwaway(KeyKind.RSA_1024, "host-1024"))
    signature = host_signature(host, p.draft)
    return der.sequence(der.octet_string(host.protobuf), b"\x04\x80" + signature)


@fault("signed-key", "public-key-only-empty", "missing", MALFORMED, importance="medium")
def public_key_only_empty(p: Parts) -> bytes:
    """SignedKey holds one empty publicKey OCTET STRING and nothing else: the extension value
    is the four bytes ``30 02 04 00`` (a verifier's minimum-length check meets its bound)."""
    return der.sequence(der.octet_string(b""))


@fault("signed-key", "length-prefixed-empty-signature", "type", MALFORMED)
def length_prefixed_empty_signature(p: Parts) -> bytes:
    """As signed-key.length-prefixed (not DER: each part behind a 4-byte big-endian length),
    with a signature of length 0 and nothing after it."""
    return len(p.protobuf).to_bytes(4, "big") + p.protobuf + bytes(4)


# Found by a blind bug model (py-libp2p's QUIC verifier falling back to a raw Ed25519 key);
# declared last, so the contexts the covering array gave the earlier faults stay as they were.
@fault("host-key", "bare-key", "type", HOST_MALFORMED)
def host_bare_key(p: Parts) -> bytes:
    """The publicKey field holds the key's bare Data (for Ed25519, the 32-byte key itself), not
    a PublicKey protobuf, with the host key's valid signature: what a verifier that falls back
    to reading a raw key accepts."""
    return _sk(p.data, p.signature)


# Found by blind bug models of go-libp2p (a SignedKey unwrapped from an extra OCTET STRING; an
# Ed25519 key read from its 64-byte private form); declared last, like the one above.
@fault("signed-key", "wrapped-in-octet-string", "type", MALFORMED)
def signed_key_wrapped(p: Parts) -> bytes:
    """The valid SignedKey SEQUENCE wrapped once more in an OCTET STRING (the extension value
    is already the content of one): a verifier that unwraps what parses as an OCTET STRING
    accepts it."""
    return der.octet_string(_sk(p.protobuf, p.signature))


@fault("host-key", "ed25519-seed-and-key", "length", HOST_MALFORMED, hosts=("Ed25519",))
def host_ed25519_seed_and_key(p: Parts) -> bytes:
    """The Ed25519 Data is 64 bytes: 32 bytes in front of the 32-byte key, the layout of an
    Ed25519 private key (seed, then public key); the signature is the key's, valid. A verifier
    that takes the key from the second half of a 64-byte Data accepts it."""
    pb = encode_public_key(p.type_code, bytes(32) + p.data)
    return _sk(pb, p.signature)


def _off_curve(host_type: HostKeyType, data: bytes) -> bytes:
    """``data`` with its point moved off the curve: the first change of X (Secp256k1) or of Y's
    last byte (ECDSA P-256, uncompressed) that leaves y^2 = x^3 + ax + b false."""
    if host_type == "Secp256k1":
        prime, a, b = 2**256 - 2**32 - 977, 0, 7
        x = int.from_bytes(data[1:33], "big")
        for step in range(1, 256):
            shifted = (x + step) % prime
            if pow((shifted**3 + a * shifted + b) % prime, (prime - 1) // 2, prime) == prime - 1:
                return data[:1] + shifted.to_bytes(32, "big")
        raise ValueError("no X without a Y near this one")  # pragma: no cover - 2^-255
    prime = 2**256 - 2**224 + 2**192 + 2**96 - 1
    a = prime - 3
    b = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
    x = int.from_bytes(data[-64:-32], "big")
    for step in range(1, 256):
        moved = data[:-1] + bytes([(data[-1] + step) % 256])
        y = int.from_bytes(moved[-32:], "big")
        if (y * y - (x**3 + a * x + b)) % prime:
            return moved
    raise ValueError("no Y off the curve near this one")  # pragma: no cover


# -- generation -----------------------------------------------------------------------------------
def _host(ctx: BuildContext, host_type: HostKeyType, role: str = "host") -> HostKey:
    """The host key of a generated case: derived for the case, but for RSA one derived from the
    seed alone and shared by the generated cases (no prime search per case; the RSA
    certificate key is another shared one)."""
    if host_type == "RSA":
        return HostKey(ctx.shared(KeyKind.RSA_2048, f"fault-{role}"))
    return ctx.host(host_type, role=role)


def _build(ctx: BuildContext, value: Callable[[Parts], bytes], host_type: HostKeyType,
           scheme: str, critical: bool, position: str) -> Built:
    host = _host(ctx, host_type)
    kind = SCHEME_KINDS[scheme]
    cert_key = ctx.shared(kind, "fault-certificate") if kind.rsa_bits else ctx.throwaway(kind)
    d = ctx.draft(scheme, cert_key=cert_key, host=host)
    parts = Parts(ctx, host, d, host.protobuf, KEY_TYPE_CODES[host.type], host.data,
                  host_signature(host, d))
    ext = extension(LIBP2P_EXTENSION_OID, value(parts), critical)
    d = d.but(extensions=(ext,) if position == "first" else (_SUBJECT_KEY_ID, ext))
    return ctx.built(d, critical=critical)


def _context_text(host: str, scheme: str, critical: bool, position: str) -> str:
    where = "the only extension" if position == "first" else "after a subjectKeyIdentifier"
    return (f"Context: a {host} host key, a {scheme} certificate, the libp2p extension "
            f"{'critical' if critical else 'not critical'} and {where}.")


#: The id template (and family) of the valid twins: one valid case per context the fault cases
#: use, built as they are with the valid extension value, so that a report can tell a fault an
#: implementation rejected from a context it rejects anyway (``harness/reach.py``).
TWIN_FAMILY = "fault-twin.{host}.{scheme}.{placement}"
_TWIN_RULE = "tls.md: Peer Authentication; the libp2p Public Key Extension"


def _valid(p: Parts) -> bytes:
    """The valid SignedKey: the canonical protobuf and the host key's signature."""
    return _sk(p.protobuf, p.signature)


def _placement(critical: bool, position: str) -> str:
    return f"{'critical' if critical else 'noncritical'}-{position}"


#: The contexts that reach a fault in every entry of a shipped implementation that verifies
#: the host key (measured with ``harness run --mode all``: js-libp2p reads only the first
#: extension; py-libp2p's TLS verifier refuses Ed25519 and RSA-PSS certificates; js-libp2p's
#: QUIC handshakes refuse RSA PKCS#1 v1.5 ones): the libp2p extension first, on an ECDSA P-256
#: certificate, critical or not.
REACHING_SCHEMES: tuple[str, ...] = ("ecdsa_secp256r1_sha256",)
#: The row a fault gets under a host key type where none of its pairwise rows reaches.
REACHING: dict[str, object] = {"scheme": "ecdsa_secp256r1_sha256", "critical": False,
                               "position": "first"}


def reaches(row: dict[str, Any]) -> bool:
    """Whether a row's context is one that every shipped implementation accepts (for a host key
    type it verifies), so that its fault is tested there."""
    return row["position"] == "first" and row["scheme"] in REACHING_SCHEMES


def _rows() -> list[dict[str, Any]]:
    """The fault cases' rows (fault, host, scheme, critical, position): each fault's slice of
    the pairwise covering array, then for each fault and host key type it applies to whose
    pairwise row does not :func:`reach <reaches>` it, the :data:`REACHING` row."""
    rows: list[dict[str, Any]] = []
    reaching: list[dict[str, Any]] = []
    # Fault by fault, in declaration order, each slice extending the array chosen so far: a
    # fault declared after the others adds its cases and leaves their contexts (and ids) alone.
    # Each slice's candidates are its own fault's rows only (the others' are never allowed).
    # The reaching rows are not the array's (not ``prior``): they change no later slice.
    for f in FAULTS:
        def mine(row: dict[str, Any], _f: Fault = f) -> bool:
            return row["host"] in _f.hosts

        name = f"{f.element}.{f.name}"
        chosen = pairwise({"fault": [name], **CONTEXTS}, mine, prior=rows, focus="fault")
        rows += chosen
        reaching += [{"fault": name, "host": host, **REACHING} for host in f.hosts
                     if not any(r["host"] == host and reaches(r) for r in chosen)]
    return rows + reaching


def _context_key(row: dict[str, Any]) -> tuple[int, int, bool, str]:
    return (HOST_KEY_TYPES.index(row["host"]), SCHEMES.index(row["scheme"]), row["critical"],
            row["position"])


def generated() -> list[Case]:
    """The cases of the fault model, in the covering array's order (fault by fault), then the
    valid twin of each context they use."""
    names = {f"{f.element}.{f.name}": f for f in FAULTS}
    rows = _rows()
    out: list[Case] = []
    order = {n: i for i, n in enumerate(names)}
    for row in sorted(rows, key=lambda r: (order[r["fault"]], *_context_key(r))):
        f = names[row["fault"]]
        host, scheme, critical, position = (row["host"], row["scheme"], row["critical"],
                                            row["position"])
        placement = _placement(critical, position)

        def build(ctx: BuildContext, _f: Fault = f, _h: HostKeyType = host, _s: str = scheme,
                  _c: bool = critical, _p: str = position) -> Built:
            return _build(ctx, _f.value, _h, _s, _c, _p)

        out.append(Case(
            id=f.family.format(host=host.lower(), scheme=scheme, placement=placement),
            description=f"{f.description} {_context_text(host, scheme, critical, position)}",
            result="invalid", build=build, error=f.error,
            flags=(Flag.CRITICAL_LIBP2P_EXTENSION,) if critical else (),
            importance=f.importance, rule=_RULES[f.element], family=f.family,
            section="faults",
            parameters=(("host", host.lower()), ("scheme", scheme), ("placement", placement))))
    contexts = {_context_key(r): r for r in rows}
    for key in sorted(contexts):
        row = contexts[key]
        host, scheme, critical, position = (row["host"], row["scheme"], row["critical"],
                                            row["position"])
        placement = _placement(critical, position)

        def twin(ctx: BuildContext, _h: HostKeyType = host, _s: str = scheme,
                 _c: bool = critical, _p: str = position) -> Built:
            return _build(ctx, _valid, _h, _s, _c, _p)

        out.append(Case(
            id=TWIN_FAMILY.format(host=host.lower(), scheme=scheme, placement=placement),
            description="The valid twin of the generated faults in this context: the valid "
                        "SignedKey, built as they are (an implementation that rejects it "
                        f"rejects their context, not their fault). "
                        f"{_context_text(host, scheme, critical, position)}",
            result="valid", build=twin,
            flags=(Flag.CRITICAL_LIBP2P_EXTENSION,) if critical else (),
            rule=_TWIN_RULE, family=TWIN_FAMILY, section="faults",
            parameters=(("host", host.lower()), ("scheme", scheme), ("placement", placement))))
    return out


for _case in generated():
    register(_case)
