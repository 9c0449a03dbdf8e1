"""Turn found certificates into a corpus: decode what each says about itself, take the expected
result from the reference verifier (or the sidecar), write the corpus into a folder it owns.

What a certificate cannot say is stated, not invented: a certificate without its key has
``certificate_key_path: null`` (handshakes skip it: the fixture peer could not sign), one whose
extension names no host key that decodes has ``host_key: null`` (a dialler then dials without
expecting a PeerId, or says it cannot), a field that does not decode is ``unknown``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa, x448, x25519
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_der_public_key,
    load_pem_private_key,
)

from fixturegen import __version__
from fixturegen.certs import der
from fixturegen.certs.builder import time_text
from fixturegen.certs.schemes import ECDSA_OIDS, ED448_OID, ED25519_OID, HASH_OIDS, RSA_PKCS1_OIDS
from fixturegen.certs.schemes import RSASSA_PSS_OID as PSS_OID
from fixturegen.importer.sources import ImportProblem, Source
from fixturegen.keys.kinds import KeyKind
from fixturegen.model.manifest import (
    SCHEMA_VERSION,
    CertificateInfo,
    Expected,
    Fixture,
    Generator,
    HostKeyInfo,
    KeyInfo,
    Manifest,
    dumps,
    manifest_schema,
)
from fixturegen.verify.codes import (
    BORDERLINE_FLAGS,
    EITHER_VERDICT_FLAGS,
    ERROR_CODES,
    NOTES,
    Flag,
)
from fixturegen.verify.der import DERError, elements, oid_text, tlv
from fixturegen.verify.identity import TYPE_NAMES, decode_public_key, peer_id
from fixturegen.verify.verifier import Verifier
from fixturegen.verify.x509 import LIBP2P_OID, parse_certificate

COMMAND = "import"
Result = Literal["valid", "invalid", "acceptable"]
UNKNOWN = "unknown"
ID_PREFIX = "imported."


@dataclass(frozen=True)
class Imported:
    """One imported certificate: its manifest entry and its files."""

    fixture: Fixture
    files: tuple[tuple[str, bytes], ...]
    #: The sidecar's stated result where the reference verifier concludes otherwise.
    overruled: str | None


# -- what a certificate says about itself ----------------------------------------------------


def key_type(key: PublicKeyTypes | None) -> str:
    """A certificate or host key's kind in the toolkit's words (``rsa-2048``, ``p256``), or
    what it is when it is none of them (``rsa-1536``, ``dsa-2048``, ``x25519``)."""
    if isinstance(key, rsa.RSAPublicKey):
        bits = key.key_size
        return next((k.value for k in KeyKind if k.rsa_bits == bits), f"rsa-{bits}")
    if isinstance(key, ec.EllipticCurvePublicKey):
        return next((k.value for k in KeyKind if k.curve_name == key.curve.name),
                    f"ec-{key.curve.name}")
    names: tuple[tuple[type, str], ...] = (
        (ed25519.Ed25519PublicKey, "ed25519"), (ed448.Ed448PublicKey, "ed448"),
        (x25519.X25519PublicKey, "x25519"), (x448.X448PublicKey, "x448"))
    for cls, name in names:
        if isinstance(key, cls):
            return name
    if isinstance(key, dsa.DSAPublicKey):
        return f"dsa-{key.key_size}"
    return UNKNOWN


def _public_key(spki: bytes | None) -> PublicKeyTypes | None:
    if spki is None:
        return None
    try:
        return load_der_public_key(spki)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None


def _scheme(algorithm_oid: str | None, hash_name: str | None, key: PublicKeyTypes | None
            ) -> str:
    """The certificate's own signature algorithm in TLS SignatureScheme words (a pairing TLS
    does not define, such as P-384 with SHA-256, is named the same way), or ``unknown``."""
    if algorithm_oid == ED25519_OID:
        return "ed25519"
    if algorithm_oid == ED448_OID:
        return "ed448"
    for hashed, oid in RSA_PKCS1_OIDS.items():
        if algorithm_oid == oid:
            return f"rsa_pkcs1_{hashed}"
    if algorithm_oid == PSS_OID:
        return f"rsa_pss_rsae_{hash_name}" if hash_name else UNKNOWN
    for hashed, oid in ECDSA_OIDS.items():
        if algorithm_oid == oid and isinstance(key, ec.EllipticCurvePublicKey):
            return f"ecdsa_{key.curve.name}_{hashed}"
    return UNKNOWN


def _iso(seconds: int) -> str:
    t = datetime.fromtimestamp(seconds, UTC) if seconds >= -62135596800 else None
    if t is None:
        return UNKNOWN
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:"
            f"{t.second:02d}Z")


@dataclass(frozen=True)
class Described:
    scheme: str
    key: str
    not_before: str
    not_after: str
    serial: str
    critical: bool
    host_key_protobuf: bytes | None
    spki: bytes | None


@dataclass(frozen=True)
class _Outline:
    """What a lenient walk of the DER finds (each field None when it does not read)."""

    algorithm: str | None = None
    pss_hash: str | None = None
    serial: str | None = None
    spki: bytes | None = None
    validity: tuple[str, str] | None = None


def _pss_hash(buf: bytes, start: int, end: int) -> str | None:
    """The hash of RSASSA-PSS-params (``[0] hashAlgorithm``; absent: SHA-1, the default)."""
    _, ps, pe = tlv(buf, start, end)
    for tag, _, cs, ce in elements(buf, ps, pe):
        if tag == 0xA0:
            _, hs, he = tlv(buf, cs, ce)
            _, os_, oe = tlv(buf, hs, he)
            oid = oid_text(buf, os_, oe)
            return next((h for h, o in HASH_OIDS.items() if o == oid), None)
    return "sha1"


def _outline(leaf: bytes) -> _Outline:
    """signatureAlgorithm, PSS hash, serial and SubjectPublicKeyInfo, read leniently."""
    algorithm = pss = serial = None
    spki: bytes | None = None
    validity: tuple[str, str] | None = None
    try:
        _, start, end = tlv(leaf, 0, len(leaf))
        parts = elements(leaf, start, end)
        _, _, s, e = parts[1]
        t, os_, oe = tlv(leaf, s, e)
        if t == 0x06:
            algorithm = oid_text(leaf, os_, oe)
            if algorithm == PSS_OID and oe < e:
                pss = _pss_hash(leaf, oe, e)
        _, _, ts, te = parts[0]
        tbs = elements(leaf, ts, te)
        at = 1 if tbs and tbs[0][0] == 0xA0 else 0
        if tbs[at][0] == 0x02:
            serial = leaf[tbs[at][2]:tbs[at][3]].hex() or None
        tag, _, vs, ve = tbs[at + 3]
        times = elements(leaf, vs, ve) if tag == 0x30 else []
        if len(times) == 2:
            validity = (time_text(leaf[times[0][1]:times[0][3]]),
                        time_text(leaf[times[1][1]:times[1][3]]))
        tag, begin, _, finish = tbs[at + 5]
        if tag == 0x30:
            spki = leaf[begin:finish]
    except (DERError, IndexError, ValueError):
        pass
    return _Outline(algorithm, pss, serial, spki, validity)


#: The libp2p extension's OID, as DER (found by a scan where the certificate does not parse).
_LIBP2P_OID_DER = bytes.fromhex("060a2b0601040183a25a0101")


def _scan_extension(leaf: bytes) -> tuple[bool, bytes] | None:
    """(critical, value) of the first libp2p extension found by its OID's bytes: a
    certificate that does not parse (trailing bytes, a BER length, a bad time) still names its
    host key, and the dialler can expect its PeerId."""
    at = leaf.find(_LIBP2P_OID_DER)
    if at < 0:
        return None
    pos = at + len(_LIBP2P_OID_DER)
    critical = False
    try:
        tag, s, e = tlv(leaf, pos, len(leaf))
        if tag == 0x01:
            critical, pos = leaf[s:e] == b"\xff", e
            tag, s, e = tlv(leaf, pos, len(leaf))
        return (critical, leaf[s:e]) if tag == 0x04 else None
    except DERError:
        return None


def describe(leaf: bytes) -> Described:
    """Everything the manifest states about a certificate, as far as it decodes: strictly
    first (the reference verifier's parser), else leniently (a walk of the outline and a scan
    for the libp2p extension)."""
    outline = _outline(leaf)
    spki = outline.spki
    not_before = not_after = UNKNOWN
    found: tuple[bool, bytes] | None = None
    try:
        parsed = parse_certificate(leaf)
        spki, not_before, not_after = (parsed.spki, _iso(parsed.not_before),
                                       _iso(parsed.not_after))
        ours = [e for e in parsed.extensions if e.oid == LIBP2P_OID]
        found = (ours[0].critical, ours[0].value) if ours else None
    except (DERError, ValueError, OverflowError, OSError):
        found = _scan_extension(leaf)
        not_before, not_after = outline.validity or (UNKNOWN, UNKNOWN)
    key = _public_key(spki)
    critical, extension = found if found is not None else (False, None)
    return Described(_scheme(outline.algorithm, outline.pss_hash, key), key_type(key),
                     not_before, not_after, outline.serial or UNKNOWN, critical,
                     _host_key_protobuf(extension), spki)


def _host_key_protobuf(extension: bytes | None) -> bytes | None:
    """The first OCTET STRING of the SignedKey, read leniently (the verifier judges it)."""
    if extension is None:
        return None
    try:
        t, s, e = tlv(extension, 0, len(extension))
        if t != 0x30:
            return None
        t, ks, ke = tlv(extension, s, e)
        return extension[ks:ke] if t == 0x04 else None
    except DERError:
        return None


def host_key_info(protobuf: bytes | None) -> HostKeyInfo | None:
    """The host key the extension names, when its type can be read; its kind when its data
    decodes too (else ``unknown``)."""
    if protobuf is None:
        return None
    kind = UNKNOWN
    try:
        type_number, data = decode_public_key(protobuf)
    except ValueError:
        if len(protobuf) < 2 or protobuf[0] != 0x08 or protobuf[1] not in TYPE_NAMES:
            return None  # not even the type reads: nothing to state
        type_number, data = protobuf[1], b""
    name = TYPE_NAMES[type_number]
    if name == "Ed25519" and len(data) == 32:
        kind = "ed25519"
    elif name == "Secp256k1" and len(data) == 33 and data[0] in (2, 3):
        kind = "secp256k1"
    elif name in ("RSA", "ECDSA") and data:
        decoded = key_type(_public_key(data))
        kind = decoded if decoded != UNKNOWN else kind
    return HostKeyInfo(type=name, kind=kind, source="imported",  # type: ignore[arg-type]
                       public_key_protobuf_hex=protobuf.hex())


# -- ids, expectations, fixtures -------------------------------------------------------------


def slug(text: str) -> str:
    """A fixture id's part from a file name: lower case, ``[a-z0-9._-]``, at most 100."""
    out = re.sub(r"[^a-z0-9_-]+", "-", text.lower().replace("/", ".").replace("\\", "."))
    out = re.sub(r"\.+", ".", re.sub(r"-+", "-", out)).strip(".-")
    return out[:100].strip(".-") or "certificate"


#: An RSA key restricted to RSASSA-PSS (RFC 4055): the same key bits as rsaEncryption.
_RSA_PSS_KEY_ID = bytes.fromhex("300b06092a864886f70d01010a")
#: id-ecPublicKey (1.2.840.10045.2.1), as a DER OBJECT IDENTIFIER.
_EC_PUBLIC_KEY = bytes.fromhex("06072a8648ce3d0201")


def _key_matches(pem: str, spki: bytes | None) -> bool | None:
    if spki is None:
        return None
    private = load_pem_private_key(pem.encode(), None)
    own = private.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    if own == spki:
        return True
    try:
        algorithm, bits = der.children(spki)
        own_algorithm, own_bits = der.children(own)
        if bits != own_bits:
            return False
        # The same key bits under another identifier: id-RSASSA-PSS in the certificate where
        # PKCS#8 keeps rsaEncryption, or an EC key whose curve the certificate spells out
        # (specifiedCurve) where PKCS#8 names it: the same key type, the same point.
        return algorithm == _RSA_PSS_KEY_ID or (
            der.children(algorithm)[0] == der.children(own_algorithm)[0] == _EC_PUBLIC_KEY)
    except (ValueError, IndexError):
        return False


def build(source: Source, fixture_id: str, verifier: Verifier, at: datetime) -> Imported:
    """One certificate's manifest entry and files."""
    leaf = source.chain[0]
    d = describe(leaf)
    if source.key_pem is not None and _key_matches(source.key_pem, d.spki) is False:
        raise ImportProblem(f"{source.key_file}: not the key of the certificate in "
                            f"{source.shown}")
    side = source.sidecar
    verdict = verifier.verify(list(source.chain), expect_peer_id=side.expect_peer_id, at=at)
    flags = sorted({Flag(f) for f in verdict.flags if f in BORDERLINE_FLAGS})
    reference: Result = ("invalid" if not verdict.accepted else "acceptable"
                         if EITHER_VERDICT_FLAGS.intersection(flags) else "valid")
    result = side.result or reference
    claimed = peer_id(d.host_key_protobuf) if d.host_key_protobuf else None
    expected_peer = None if result == "invalid" else (
        verdict.peer_id if verdict.accepted else side.expect_peer_id or claimed)
    paths = [f"certs/{fixture_id}.der"]
    paths += [f"certs/{fixture_id}.{i}.der" for i in range(2, len(source.chain) + 1)]
    files = list(zip(paths, source.chain, strict=True))
    key_path = None
    if source.key_pem is not None:
        key_path = f"keys/{fixture_id}.pem"
        files.append((key_path, source.key_pem.encode("ascii")))
    said = (f"the reference verifier: {verdict.error.check.label} fails ({verdict.error})"
            if verdict.error else "the reference verifier accepts it")
    description = side.description or (
        f"Imported from {source.shown}" + (f", with its key ({source.key_file})"
                                           if source.key_file else ", without its key")
        + f"; {said}.")
    rule = (f"stated in its sidecar file ({said})" if side.result
            else f"the reference verifier's verdict at {at.strftime('%Y-%m-%dT%H:%M:%SZ')}")
    fixture = Fixture(
        id=fixture_id, path=paths[0], chain=paths,
        sha256=hashlib.sha256(leaf).hexdigest(), sha512=hashlib.sha512(leaf).hexdigest(),
        description=description, rule=rule, flags=flags, importance=None,
        certificate=CertificateInfo(
            signature_scheme=d.scheme, key=KeyInfo(type=d.key, source="imported", file=None,
                                                   fingerprint=None),
            not_before=d.not_before, not_after=d.not_after, serial=d.serial,
            extension_critical=d.critical),
        certificate_key_path=key_path, host_key=host_key_info(d.host_key_protobuf),
        expect_peer_id=side.expect_peer_id,
        expected=Expected(result=result, error=verdict.error, peer_id=expected_peer),
        imported_from=source.shown)
    overruled = (f"{source.shown}: its sidecar says {side.result}, the reference verifier "
                 f"{reference} ({verdict.error or 'all checks pass'})"
                 if side.result and side.result != reference else None)
    return Imported(fixture, tuple(files), overruled)


def _names(fixture_id: str, chain: int) -> list[str]:
    """The names a fixture takes: its id, its certificates' files (``ID.der``, ``ID.2.der``,
    ... for a chain) and its key's."""
    return [f"id:{fixture_id}", f"certs/{fixture_id}.der",
            *(f"certs/{fixture_id}.{i}.der" for i in range(2, chain + 1)),
            f"keys/{fixture_id}.pem"]


def _clash(fixture_id: str, chain: int, taken: dict[str, str]) -> str | None:
    """The first name ``fixture_id`` would take that another fixture took (compared case
    folded: a case-insensitive file system makes ``X.der`` and ``x.der`` one file)."""
    for name in _names(fixture_id, chain):
        if name.casefold() in taken:
            return name
    return None


@dataclass(frozen=True)
class ImportResult:
    manifest: Manifest
    files: tuple[tuple[str, bytes], ...]
    duplicates: tuple[str, ...]  # "X: the same certificate as Y"
    overruled: tuple[str, ...]


def import_sources(sources: Sequence[Source], *, at: datetime | None = None,
                   reproducible: bool = False) -> ImportResult:
    """The corpus of ``sources`` (in memory): ids derived or stated, duplicates dropped."""
    moment = at or datetime.now(UTC)
    verifier = Verifier()
    seen: dict[bytes, str] = {}
    duplicates: list[str] = []
    taken: dict[str, str] = {}  # every file name written (case folded) -> its fixture's file
    out: list[Imported] = []
    for source in sources:
        digest = hashlib.sha256(b"".join(len(c).to_bytes(4, "big") + c
                                         for c in source.chain)).digest()
        if digest in seen:
            duplicates.append(f"{source.shown}: the same certificate as {seen[digest]}")
            continue
        seen[digest] = source.shown
        if source.sidecar.id is not None:
            fixture_id = source.sidecar.id
            clash = _clash(fixture_id, len(source.chain), taken)
            if clash is not None:
                by = taken[clash.casefold()]
                what = (f"is already taken (by {by})" if clash.startswith("id:")
                        else f"would write {clash}, as {by} does")
                raise ImportProblem(f"{source.shown}: its sidecar's id {fixture_id!r} {what}: "
                                    "give it another id")
        else:
            base = ID_PREFIX + slug(Path(source.shown).with_suffix("").name)
            fixture_id, n = base, 2
            while _clash(fixture_id, len(source.chain), taken) is not None:
                fixture_id, n = f"{base}-{n}", n + 1
        for name in _names(fixture_id, len(source.chain)):
            taken[name.casefold()] = source.shown
        out.append(build(source, fixture_id, verifier, moment))
    used = sorted({f for i in out for f in i.fixture.flags})
    manifest = Manifest(
        schema_version=SCHEMA_VERSION,
        generator=Generator(name="fixturegen", version=__version__),
        seed=None, reproducible=reproducible,
        notes={f: NOTES[f] for f in used}, error_codes=dict(ERROR_CODES),
        fixtures=[i.fixture for i in out])
    files = [f for i in out for f in i.files]
    return ImportResult(manifest, tuple(files), tuple(duplicates),
                        tuple(i.overruled for i in out if i.overruled))


def corpus_files(result: ImportResult) -> list[tuple[str, bytes]]:
    """Every file of the corpus folder: certificates, keys, manifest, schema, README."""
    from fixturegen.output.render import render_readme

    manifest = result.manifest
    return [*result.files,
            ("manifest.json", dumps(manifest.model_dump(mode="json")).encode()),
            ("manifest.schema.json", dumps(manifest_schema()).encode()),
            ("README.md", render_readme(manifest, imported=True).encode())]
