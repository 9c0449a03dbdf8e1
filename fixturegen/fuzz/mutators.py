"""Structure-aware mutation of valid certificates, at every layer a libp2p verifier reads.

A mutant is a parent (a valid catalogue fixture, as its :class:`Draft`) and one to three
:class:`Step` s. Each step names an operator and carries its own random value, so a mutant is
rebuilt from (parent, steps) alone: the triage drops steps to minimise it. After a change
inside tbsCertificate the certificate is re-signed with its own key, so that the mutation is the
only fault (the catalogue's one-fault principle); a step with ``resign=False`` keeps the old
signature on purpose, and the mutant is labelled ``unsigned``.

Operators, by layer (``OPERATORS``):

* certificate DER: ``der-length`` (a non-minimal length), ``der-tag`` (another tag),
  ``byte-flip`` / ``truncate`` (whole-certificate damage, never re-signed);
* X.509 fields: ``version``, ``serial``, ``validity``, ``names``, ``unique-id``,
  ``algorithm-parameters``;
* extensions: ``extension-order``, ``extension-critical``, ``extension-drop``,
  ``extension-duplicate``, ``extension-unknown``;
* the SignedKey: ``signed-key``; the host-key protobuf: ``host-protobuf``; the host signature:
  ``host-signature``;
* recombination of two valid certificates (frankencert style): ``frankencert``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from fixturegen.cases.mutate import corrupt, raw_ecdsa
from fixturegen.certs import der
from fixturegen.certs.builder import Draft, assemble
from fixturegen.certs.extension import (
    LIBP2P_EXTENSION_OID,
    extension,
    handshake_message,
    signed_key,
)
from fixturegen.identity.hostkey import SECP256K1_ORDER, flip_s
from fixturegen.identity.protobuf import varint


@dataclass(frozen=True)
class Step:
    operator: str
    #: The step's own randomness: which variant, which position.
    value: int
    #: False: the old self-signature is kept (the mutant is labelled unsigned).
    resign: bool = True


@dataclass
class Work:
    """A certificate being mutated: its draft, then (for byte-level steps) raw bytes."""

    draft: Draft
    others: tuple[Draft, ...]
    #: The TBS as bytes once a byte-level step touched it (else the draft's encoding).
    tbs: bytes | None = None
    #: Declared AlgorithmIdentifier (both places), when a step changed it.
    algorithm_identifier: bytes | None = None
    #: Transforms of the whole DER after signing (never re-signed).
    post: list[Callable[[bytes], bytes]] = field(default_factory=list)
    #: A step declared another algorithm than the one that signs (no honest signature exists).
    confused: bool = False

    def tbs_bytes(self) -> bytes:
        return self.tbs if self.tbs is not None else self.draft.tbs_der()


def _rng(step: Step) -> random.Random:
    return random.Random(step.value)


def _libp2p_index(d: Draft) -> int:
    for i, ext in enumerate(d.tbs.extensions):
        if der.children(ext)[0] == der.oid(LIBP2P_EXTENSION_OID):
            return i
    return 0


def _set_extensions(w: Work, exts: tuple[bytes, ...]) -> None:
    w.draft = w.draft.but(extensions=exts)


# -- extensions ---------------------------------------------------------------------------------
def extension_order(w: Work, r: random.Random) -> None:
    exts = list(w.draft.tbs.extensions)
    if len(exts) < 2:  # give the libp2p extension a neighbour first
        exts.append(extension("2.5.29.14", der.octet_string(bytes(20))))
    r.shuffle(exts)
    if tuple(exts) == w.draft.tbs.extensions:
        exts.reverse()
    _set_extensions(w, tuple(exts))


def extension_critical(w: Work, r: random.Random) -> None:
    exts = list(w.draft.tbs.extensions)
    i = r.randrange(len(exts))
    parts = der.children(exts[i])
    if len(parts) == 3:  # critical TRUE present: drop it, or write it as FALSE (not DER)
        parts = [parts[0], parts[2]] if r.random() < 0.5 else [parts[0], der.boolean(False),
                                                                 parts[2]]
    else:
        parts = [parts[0], der.tlv(0x01, bytes([r.choice([0xFF, 0x01])])), parts[1]]
    exts[i] = der.sequence(*parts)
    _set_extensions(w, tuple(exts))


def extension_drop(w: Work, r: random.Random) -> None:
    exts = list(w.draft.tbs.extensions)
    del exts[r.randrange(len(exts))]
    if not exts and r.random() < 0.5:
        w.draft = w.draft.but(extensions=())
        return
    _set_extensions(w, tuple(exts) or (extension("2.5.29.14", der.octet_string(bytes(20))),))


def extension_duplicate(w: Work, r: random.Random) -> None:
    exts = list(w.draft.tbs.extensions)
    i = r.randrange(len(exts))
    exts.insert(r.randrange(len(exts) + 1), exts[i])
    _set_extensions(w, tuple(exts))


def extension_unknown(w: Work, r: random.Random) -> None:
    known = ["2.5.29.19", "2.5.29.15", "2.5.29.37", "2.5.29.17", "1.3.6.1.4.1.53594.99.7",
             "1.3.6.1.4.1.53594.1.2", "2.5.29.35"]
    oid = r.choice(known)
    value = r.choice([der.sequence(), der.null(), der.octet_string(b"x"),
                      der.bit_string(b"\x80", 7), b""])
    exts = list(w.draft.tbs.extensions)
    exts.insert(r.randrange(len(exts) + 1), extension(oid, value, critical=r.random() < 0.5))
    _set_extensions(w, tuple(exts))


# -- the libp2p extension's content -----------------------------------------------------------
def _libp2p_parts(w: Work) -> tuple[int, list[bytes], bytes, bytes]:
    """(index, extension parts, protobuf, signature) of the libp2p extension."""
    i = _libp2p_index(w.draft)
    parts = der.children(w.draft.tbs.extensions[i])
    value = parts[-1]
    _, start, _ = der.split_tlv(value)
    sk = value[start:]
    try:
        pb_tlv, sig_tlv = der.children(sk)[:2]
        pb = pb_tlv[der.split_tlv(pb_tlv)[1]:]
        sig = sig_tlv[der.split_tlv(sig_tlv)[1]:]
    except (ValueError, IndexError):
        pb, sig = w.draft.host.protobuf, b""
    return i, parts, pb, sig


def _put_libp2p_value(w: Work, index: int, parts: list[bytes], value: bytes) -> None:
    exts = list(w.draft.tbs.extensions)
    exts[index] = der.sequence(*parts[:-1], der.octet_string(value))
    _set_extensions(w, tuple(exts))


def signed_key_encoding(w: Work, r: random.Random) -> None:
    i, parts, pb, sig = _libp2p_parts(w)
    variants: list[Callable[[], bytes]] = [
        lambda: der.sequence(der.bit_string(pb), der.bit_string(sig)),
        lambda: der.sequence(der.octet_string(sig), der.octet_string(pb)),
        lambda: der.tlv(der.SET, der.octet_string(pb) + der.octet_string(sig)),
        lambda: signed_key(pb, sig) + b"\x00",
        lambda: der.sequence(der.octet_string(pb), der.octet_string(sig), der.null()),
        lambda: der.sequence(der.octet_string(pb)),
        lambda: der.ber_long_length(0x30, der.octet_string(pb) + der.octet_string(sig)),
        lambda: b"\x30\x80" + der.octet_string(pb) + der.octet_string(sig) + b"\x00\x00",
        lambda: der.sequence(der.ber_long_length(0x04, pb), der.octet_string(sig)),
        lambda: der.sequence(der.tlv(0x24, der.octet_string(pb)), der.octet_string(sig)),
    ]
    _put_libp2p_value(w, i, parts, r.choice(variants)())


def host_protobuf(w: Work, r: random.Random) -> None:
    i, parts, pb, sig = _libp2p_parts(w)
    host = w.draft.host
    t, data = {"RSA": 0, "Ed25519": 1, "Secp256k1": 2, "ECDSA": 3}[host.type], host.data
    variants: list[Callable[[], bytes]] = [
        lambda: b"\x12" + varint(len(data)) + data + b"\x08" + varint(t),
        lambda: b"\x08" + bytes([0x80 | t, 0x00]) + b"\x12" + varint(len(data)) + data,
        lambda: pb + b"\x18" + varint(r.randrange(300)),
        lambda: pb + b"\x22\x00",
        lambda: b"\x08" + varint(r.choice([k for k in range(6) if k != t])) + pb[2:],
        lambda: pb[:-1],
        lambda: pb + b"\x00",
        lambda: b"\x08" + varint(t) + b"\x12" + varint(len(data) + 1) + data + b"\x00",
        lambda: b"\x08" + varint(t) + b"\x08" + varint(t) + b"\x12" + varint(len(data)) + data,
        lambda: b"\x12" + varint(len(data)) + data,
        lambda: b"\x08" + varint(t) + b"\x12" + bytes([0x80 | len(data) & 0x7F,
                                                       len(data) >> 7 | 0x80, 0]) + data
        if len(data) < 16384 else pb,
    ]
    _put_libp2p_value(w, i, parts, signed_key(r.choice(variants)(), sig))


def host_signature(w: Work, r: random.Random) -> None:
    i, parts, pb, sig = _libp2p_parts(w)
    host = w.draft.host
    variants: list[Callable[[], bytes]] = [
        lambda: corrupt(sig) if sig else b"\x00",
        lambda: sig[:-1],
        lambda: sig + b"\x00",
        lambda: b"",
        lambda: host.sign(w.draft.cert_key.spki),  # no prefix
        lambda: host.sign(handshake_message(w.others[0].cert_key.spki)),  # another SPKI
    ]
    if host.type in ("ECDSA", "Secp256k1"):
        variants.append(lambda: raw_ecdsa(sig, 32 if host.pair.kind != "p384" else 48))
    if host.type == "Secp256k1":
        variants.append(lambda: flip_s(sig, SECP256K1_ORDER))
    _put_libp2p_value(w, i, parts, signed_key(pb, r.choice(variants)()))


# -- X.509 fields ---------------------------------------------------------------------------------
def version(w: Work, r: random.Random) -> None:
    w.draft = w.draft.but(version=r.choice([
        b"", der.explicit(0, der.integer(0)), der.explicit(0, der.integer(1)),
        der.explicit(0, der.integer(3)), der.explicit(0, b"\x02\x02\x00\x02"),
        der.explicit(1, der.integer(2))]))


def serial(w: Work, r: random.Random) -> None:
    w.draft = w.draft.but(serial=r.choice([
        der.integer(0), der.integer(-r.randrange(1, 1 << 64)), der.integer(1 << 168),
        b"\x02\x02\x00\x01", b"\x02\x00", der.integer(1 << 159),
        der.tlv(0x02, b"\xff\x80")]))


_MOMENTS = [datetime(1999, 1, 1, tzinfo=UTC), datetime(2049, 12, 31, 23, 59, 59, tzinfo=UTC),
            datetime(2050, 1, 1, tzinfo=UTC), datetime(1950, 1, 1, tzinfo=UTC),
            datetime(3000, 1, 1, tzinfo=UTC)]


def _time_variant(r: random.Random) -> bytes:
    m = r.choice(_MOMENTS)
    g, u = m.strftime("%Y%m%d%H%M%S"), m.strftime("%y%m%d%H%M%S")
    return r.choice([
        der.tlv(0x18, f"{g}Z".encode()), der.tlv(0x17, f"{u}Z".encode()),
        der.tlv(0x18, f"{g}.5Z".encode()), der.tlv(0x17, f"{u[:-2]}Z".encode()),
        der.tlv(0x17, f"{u}+0000".encode()), der.tlv(0x18, f"{g}".encode()),
        der.tlv(0x18, f"{g[:-2]}Z".encode()), der.tlv(0x17, f"{u}z".encode()),
        der.tlv(0x18, f"{g}.000Z".encode()), der.tlv(0x04, f"{u}Z".encode())])


def validity(w: Work, r: random.Random) -> None:
    nb, na = der.children(w.draft.tbs.validity)
    which = r.randrange(3)
    if which == 0:
        nb = _time_variant(r)
    elif which == 1:
        na = _time_variant(r)
    else:
        nb, na = na, nb
    w.draft = w.draft.but(validity=der.sequence(nb, na))


def names(w: Work, r: random.Random) -> None:
    from fixturegen.certs.builder import EMPTY_NAME, OID_COMMON_NAME, name

    choice = r.randrange(5)
    if choice == 0:
        w.draft = w.draft.but(subject=EMPTY_NAME, issuer=EMPTY_NAME)
    elif choice == 1:
        w.draft = w.draft.but(issuer=name((OID_COMMON_NAME, "someone else")))
    elif choice == 2:
        w.draft = w.draft.but(issuer=EMPTY_NAME)
    elif choice == 3:
        odd = der.sequence(der.set_of(der.sequence(der.oid(OID_COMMON_NAME),
                                                   der.tlv(0x13, b"a*b\x00"))))
        w.draft = w.draft.but(subject=odd, issuer=odd)
    else:
        big = name(*[(OID_COMMON_NAME, "x" * 60) for _ in range(40)])
        w.draft = w.draft.but(subject=big, issuer=big)


def unique_id(w: Work, r: random.Random) -> None:
    uid = der.tlv(r.choice([0x81, 0x82, 0xA1]), b"\x00" + bytes(r.randrange(1, 9)))
    if r.random() < 0.5:
        w.draft = w.draft.but(issuer_unique_id=uid)
    else:
        w.draft = w.draft.but(subject_unique_id=uid)


def algorithm_parameters(w: Work, r: random.Random) -> None:
    """The declared AlgorithmIdentifier (in the TBS and outside it) gains, loses or changes
    its parameters; the signature is still the real algorithm's."""
    ident = w.draft.algorithm.algorithm_identifier()
    parts = der.children(ident)
    oid = parts[0]
    variants = [der.sequence(oid, der.null()), der.sequence(oid),
                der.sequence(oid, b"\x05\x01\x00"), der.sequence(oid, der.sequence()),
                der.sequence(oid, der.octet_string(b""))]
    if len(parts) == 2 and parts[1][0] == 0x30:  # PSS: vary one parameter
        fields = der.children(parts[1])
        k = r.randrange(len(fields))
        fields[k] = der.explicit(k, der.sequence()) if r.random() < 0.5 else b""
        variants.append(der.sequence(oid, der.sequence(*fields)))
        variants.append(der.sequence(oid, der.sequence(*fields, der.explicit(3, der.integer(1)))))
    new = r.choice(variants)
    if new == ident:
        new = der.sequence(oid, der.null()) if len(parts) == 1 else der.sequence(oid)
    w.algorithm_identifier = new
    w.draft = w.draft.but(signature=new)


# -- raw DER inside the TBS (re-signed) ---------------------------------------------------------
def _tlv_offsets(data: bytes, base: int = 0, depth: int = 0) -> list[tuple[int, int, int]]:
    """(offset, header length, content length) of every TLV in ``data``, recursively."""
    out = []
    pos = 0
    while pos < len(data) and depth < 12:
        try:
            tag, start, end = der.split_tlv(data, pos)
        except (ValueError, IndexError):
            break
        out.append((base + pos, start - pos, end - start))
        if tag & 0x20:
            out += _tlv_offsets(data[start:end], base + start, depth + 1)
        pos = end
    return out


def der_length(w: Work, r: random.Random) -> None:
    tbs = w.tbs_bytes()
    spots = _tlv_offsets(tbs)[1:]
    off, hlen, clen = r.choice(spots)
    octets = max(1, (clen.bit_length() + 7) // 8)
    longer = bytes([0x80 | (octets + 1)]) + clen.to_bytes(octets + 1, "big")  # a leading zero
    if octets == 1 and clen >= 0x80 and r.random() < 0.5:
        longer = b"\x82" + clen.to_bytes(2, "big")
    head = tbs[off:off + 1] + longer
    inner = tbs[:off] + head + tbs[off + hlen:]
    w.tbs = _fix_outer(inner)


def der_tag(w: Work, r: random.Random) -> None:
    tbs = w.tbs_bytes()
    off, _, _ = r.choice(_tlv_offsets(tbs)[1:])
    old = tbs[off]
    new = r.choice([t for t in (0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0C, 0x13, 0x16, 0x17,
                                0x18, 0x30, 0x31, 0xA0, 0xA3, 0x80, 0x1F) if t != old])
    if (old & 0x20) != (new & 0x20) and r.random() < 0.7:
        new ^= 0x20 if (new & 0x20) != (old & 0x20) and new not in (0x1F,) else 0
    w.tbs = tbs[:off] + bytes([new]) + tbs[off + 1:]


def _fix_outer(tbs: bytes) -> bytes:
    """Re-write the TBS SEQUENCE's own length after its content changed size."""
    _, start, _ = der.split_tlv(tbs)
    return der.sequence(tbs[start:]) if tbs[0] == 0x30 else tbs


# -- whole-certificate damage (never re-signed) ---------------------------------------------------
def byte_flip(w: Work, r: random.Random) -> None:
    seed = r.random()

    def flip(cert: bytes) -> bytes:
        rr = random.Random(seed)
        i = rr.randrange(len(cert))
        return cert[:i] + bytes([cert[i] ^ (1 << rr.randrange(8))]) + cert[i + 1:]

    w.post.append(flip)


def truncate(w: Work, r: random.Random) -> None:
    cut = r.choice([1, 2, 8, r.randrange(1, 200)])
    w.post.append(lambda cert: cert[:max(len(cert) - cut, 1)])


# -- recombination -------------------------------------------------------------------------------
def frankencert(w: Work, r: random.Random) -> None:
    """One TBS field, or the certificate key, taken from another valid certificate whose field
    differs (a certificate that would change nothing is never chosen)."""
    what = r.choice(["extensions", "spki-and-key", "validity", "subject", "libp2p-extension",
                     "algorithm"])
    declared = w.algorithm_identifier or w.draft.algorithm.algorithm_identifier()
    differs: dict[str, Callable[[Draft], bool]] = {
        "extensions": lambda o: o.tbs.extensions != w.draft.tbs.extensions,
        "libp2p-extension": lambda o: o.tbs.extensions[_libp2p_index(o)]
        != w.draft.tbs.extensions[_libp2p_index(w.draft)],
        "spki-and-key": lambda o: o.tbs.spki != w.draft.tbs.spki,
        "validity": lambda o: o.tbs.validity != w.draft.tbs.validity,
        "subject": lambda o: (o.tbs.subject, o.tbs.issuer)
        != (w.draft.tbs.subject, w.draft.tbs.issuer),
        "algorithm": lambda o: o.algorithm.algorithm_identifier() != declared,
    }
    candidates = [o for o in w.others if differs[what](o)]
    if not candidates:
        raise ValueError(f"frankencert: no other certificate differs in {what}")
    other = r.choice(candidates)
    if what == "extensions":
        w.draft = w.draft.but(extensions=other.tbs.extensions)
    elif what == "libp2p-extension":
        exts = list(w.draft.tbs.extensions)
        exts[_libp2p_index(w.draft)] = other.tbs.extensions[_libp2p_index(other)]
        w.draft = w.draft.but(extensions=tuple(exts))
    elif what == "spki-and-key":  # another key and its SPKI: the extension signed the old one
        w.draft = replace(w.draft, cert_key=other.cert_key, algorithm=other.algorithm,
                          pss_salt=other.pss_salt).but(
            spki=other.tbs.spki, signature=other.algorithm.algorithm_identifier())
    elif what == "validity":
        w.draft = w.draft.but(validity=other.tbs.validity)
    elif what == "subject":
        w.draft = w.draft.but(subject=other.tbs.subject, issuer=other.tbs.issuer)
    else:  # the other certificate's signature algorithm declared, ours used
        w.confused = w.algorithm_identifier is None
        w.algorithm_identifier = other.algorithm.algorithm_identifier()
        w.draft = w.draft.but(signature=w.algorithm_identifier)


Operator = Callable[[Work, random.Random], None]
OPERATORS: dict[str, Operator] = {
    "der-length": der_length, "der-tag": der_tag, "byte-flip": byte_flip,
    "truncate": truncate, "version": version, "serial": serial, "validity": validity,
    "names": names, "unique-id": unique_id, "algorithm-parameters": algorithm_parameters,
    "extension-order": extension_order, "extension-critical": extension_critical,
    "extension-drop": extension_drop, "extension-duplicate": extension_duplicate,
    "extension-unknown": extension_unknown, "signed-key": signed_key_encoding,
    "host-protobuf": host_protobuf, "host-signature": host_signature,
    "frankencert": frankencert,
}
#: Operators that damage the signed certificate itself: never re-signed.
UNSIGNED_OPERATORS = frozenset({"byte-flip", "truncate"})
#: Operators that edit the TBS bytes directly: later field-level steps are ignored.
BYTE_OPERATORS = frozenset({"der-length", "der-tag"})


def build(parent: Draft, others: tuple[Draft, ...], steps: tuple[Step, ...]) -> tuple[bytes, bool]:
    """The mutant DER of ``parent`` under ``steps``, and whether it is properly signed.

    The mutated TBS is signed with the certificate's own key unless a step keeps the old
    signature (``resign=False``: the parent's signature over its own TBS, a deliberate second
    fault); whole-certificate damage (``byte-flip``, ``truncate``) comes after signing, so a
    TBS change under it is still re-signed and the damage is its only other fault."""
    w = Work(parent, others)
    original_tbs = parent.tbs_der()
    keep_old = False
    for step in sorted(steps, key=lambda s: (s.operator in BYTE_OPERATORS,
                                             s.operator in UNSIGNED_OPERATORS)):
        if w.tbs is not None and step.operator not in BYTE_OPERATORS | UNSIGNED_OPERATORS:
            continue
        OPERATORS[step.operator](w, _rng(step))
        if not step.resign and step.operator not in UNSIGNED_OPERATORS:
            keep_old = True
    tbs = w.tbs_bytes()
    outer = w.algorithm_identifier or w.draft.algorithm.algorithm_identifier()
    signature = _signature(parent, original_tbs) if keep_old else _signature(w.draft, tbs)
    cert = assemble(tbs, outer, signature)
    for transform in w.post:
        cert = transform(cert)
    return cert, not keep_old and not w.post and not w.confused


#: Signatures already made, by (signing key, algorithm, PSS salt, TBS). Every scheme here signs
#: deterministically (RFC 6979 ECDSA, EdDSA, PKCS#1 v1.5, PSS with the draft's salt), so a hit
#: is the same bytes a new signature would be: the parent's own TBS (a step that keeps the old
#: signature, whole-certificate damage alone) and the mutants a campaign makes more than once
#: cost no private-key operation. Bounded; cleared when full.
_SIGNED: dict[tuple[bytes, object, bytes, bytes], bytes] = {}
SIGNED_KEPT = 4096


def _signature(draft: Draft, tbs: bytes) -> bytes:
    signer = draft.signer or draft.cert_key
    key = (signer.spki, draft.algorithm, draft.pss_salt, tbs)
    known = _SIGNED.get(key)
    if known is None:
        known = draft.algorithm.sign(signer.private, tbs, draft.pss_salt)
        if len(_SIGNED) >= SIGNED_KEPT:
            _SIGNED.clear()
        _SIGNED[key] = known
    return known


def random_steps(r: random.Random) -> tuple[Step, ...]:
    """One to three steps (mostly one); about one in ten TBS steps keeps the old signature."""
    n = r.choices([1, 2, 3], weights=[70, 20, 10])[0]
    names = list(OPERATORS)
    steps = []
    for _ in range(n):
        op = r.choice(names)
        resign = op in UNSIGNED_OPERATORS or r.random() >= 0.1
        steps.append(Step(op, r.getrandbits(48), resign))
    return tuple(steps)
