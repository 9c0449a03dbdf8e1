"""The boundary model (fixturegen/cases/boundaries.py): the declarations make exactly their
partitions, each case's bytes really sit at its boundary value (read from the outside), the
reference verifier gives each its declared verdict, and a malformed declaration is refused."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_der_public_key,
)

from fixturegen.cases import CATALOGUE, Rendered
from fixturegen.cases.boundaries import (
    ED25519_L,
    ED25519_P,
    PROPERTIES,
    VALID,
    Limit,
    Partition,
    Property,
    Verdict,
    _without_sign_octet,
    around,
    boundary,
    field_number_edges,
    generated,
    integer_edges,
    invalid,
    one_arc_away,
    tag_neighbours,
    with_integer,
    with_length,
)
from fixturegen.certs import der
from fixturegen.certs.extension import LIBP2P_EXTENSION_OID
from fixturegen.keys import KeyKind
from fixturegen.verify.codes import ErrorCode, Flag
from fixturegen.verify.verifier import Verifier

SEED = b"boundary-test-seed"
BOUNDARY = {c.id: c for c in CATALOGUE if c.section == "boundaries"}
P256_N = KeyKind.P256.order
K1_N = KeyKind.SECP256K1.order


@cache
def rendered(case_id: str, seed: bytes = SEED) -> Rendered:
    return BOUNDARY[case_id].render(seed)


def _leaf(case_id: str) -> bytes:
    return rendered(case_id).files[0][1]


# -- the declarations make exactly their partitions ----------------------------------------------
def test_each_property_generates_exactly_its_new_partitions_in_order() -> None:
    expected = [p_.case_id(part) for p_ in PROPERTIES for part in p_.partitions
                if part.existing is None]
    assert list(BOUNDARY) == expected == [c.id for c in generated()]
    for prop in PROPERTIES:
        for part in prop.partitions:
            if part.existing is not None:
                assert prop.case_id(part) not in BOUNDARY
                continue
            c = BOUNDARY[prop.case_id(part)]
            assert c.family == f"boundary.{prop.name}.{{partition}}"
            assert c.parameters == (("partition", part.name),)
            assert (c.result, c.error, c.flags) == (part.verdict.result, part.verdict.error,
                                                     part.verdict.flags)
            assert c.rule == prop.rule and part.text in c.description


def test_ids_are_stable() -> None:
    for case_id in ("boundary.host-key.rsa-bits.2047", "boundary.host-key.rsa-bits.8193",
                    "boundary.host-signature.rsa-length.k-minus-1",
                    "boundary.self-signature.rsa-length.k-plus-1",
                    "boundary.signed-key.signature-length.overruns-by-one",
                    "boundary.signed-key.public-key-tag.tag-24",
                    "boundary.extension.oid.sibling-next",
                    "boundary.host-key.repeated-fields.data-repeated-last-differs",
                    "boundary.host-key.ed25519-point.small-order-identity",
                    "boundary.host-signature.secp256k1-s.s-plus-n",
                    "boundary.validity.time-switch.generalized-2050"):
        assert case_id in BOUNDARY


def test_around_makes_one_below_at_and_one_above_each_limit_once() -> None:
    parts = around([Limit(10, "a"), Limit(11, "b"), Limit(20, "c")],
                   lambda v: VALID if v <= 11 else invalid(ErrorCode.EXPIRED), "units",
                   existing={10: "x.y"})
    assert [p.name for p in parts] == ["9", "10", "11", "12", "19", "20", "21"]
    assert [p.value for p in parts] == [9, 10, 11, 12, 19, 20, 21]
    assert [p.verdict.result for p in parts] == ["valid"] * 3 + ["invalid"] * 4
    assert [p.existing for p in parts] == [None, "x.y", None, None, None, None, None]
    eleven = parts[2].text
    assert "one above 10 units (a)" in eleven and "at 11 units (b)" in eleven


def test_the_other_rules_make_their_edges() -> None:
    assert [p.value for p in tag_neighbours(0x30, invalid(ErrorCode.EXPIRED))] == [
        0x2F, 0x31, 0x10]
    assert [p.value for p in tag_neighbours(0x04, invalid(ErrorCode.EXPIRED))] == [
        0x03, 0x05, 0x24]
    oids = {p.name: p.value for p in one_arc_away("1.3.6.1.4.1.9.1.1", VALID, VALID)}
    assert oids["parent"] == "1.3.6.1.4.1.9.1" and oids["child"] == "1.3.6.1.4.1.9.1.1.1"
    assert (oids["sibling-previous"], oids["sibling-next"]) == ("1.3.6.1.4.1.9.1.0",
                                                                "1.3.6.1.4.1.9.1.2")
    assert (oids["enterprise-previous"], oids["enterprise-next"]) == ("1.3.6.1.4.1.8.1.1",
                                                                      "1.3.6.1.4.1.10.1.1")
    assert oids["non-minimal-arc"] == bytes.fromhex("06092b06010401090180" + "01")
    assert [p.value for p in field_number_edges(VALID)] == [0, 3, 15, 16, 2**29 - 1]
    assert [p.value for p in integer_edges(VALID)] == ["negative", "leading-zero", 0x01, 0x03,
                                                       0x22]
    assert with_integer(0x80, "negative") == b"\x02\x01\x80"
    assert with_integer(0x80, "leading-zero") == b"\x02\x03\x00\x00\x80"
    assert with_integer(0x7F, "leading-zero") == b"\x02\x02\x00\x7f"
    assert with_integer(0x7F, 0x22) == b"\x22\x01\x7f"
    with pytest.raises(ValueError, match="top bit"):
        with_integer(0x7F, "negative")
    assert with_length(0x04, b"ab", "long-form-81") == b"\x04\x81\x02ab"
    assert with_length(0x04, b"ab", "long-form-82") == b"\x04\x82\x00\x02ab"
    assert with_length(0x04, b"ab", "overruns-by-one") == b"\x04\x03ab"
    assert with_length(0x04, b"ab", "short-by-one") == b"\x04\x01ab"
    with pytest.raises(ValueError, match="minimal form"):
        with_length(0x04, bytes(128), "long-form-81")


def test_existing_partitions_name_a_case_of_the_catalogue_with_the_same_verdict() -> None:
    named = 0
    for prop in PROPERTIES:
        for part in prop.partitions:
            if part.existing is None:
                continue
            named += 1
            matches = [c for c in CATALOGUE if c.id == part.existing
                       or c.family.startswith(part.existing + ".")]
            assert matches, (prop.name, part.name, part.existing)
            for c in matches:
                assert (c.result, c.error) == (part.verdict.result, part.verdict.error), c.id
                assert set(part.verdict.flags) <= set(c.flags), c.id
    assert named >= 15


def test_bytes_are_reproducible_and_follow_the_seed() -> None:
    for case_id in ("boundary.host-signature.rsa-length.k-minus-1",
                    "boundary.host-key.ed25519-point.small-order-identity",
                    "boundary.signed-key.sequence-tag.tag-31"):
        again = BOUNDARY[case_id].render(SEED)
        assert again.files == rendered(case_id).files
        assert BOUNDARY[case_id].render(b"another seed").files[0] != again.files[0]


# -- each case's bytes sit at its boundary, read from the outside ---------------------------------
def _certificate(case_id: str) -> x509.Certificate:
    return x509.load_der_x509_certificate(_leaf(case_id))


def _extension_value(case_id: str) -> bytes:
    """The extnValue of the certificate's first extension (read with the generator's TLV
    splitter, which does not insist on DER)."""
    tbs = der.children(_leaf(case_id))[0]
    extensions = der.children(der.children(tbs)[-1])[0]
    first = der.children(extensions)[0]
    octets = der.children(first)[-1]
    _, start, end = der.split_tlv(octets)
    return octets[start:end]


def _signed_key(case_id: str) -> tuple[bytes, bytes]:
    pb, sig = der.children(_extension_value(case_id))
    return pb[der.split_tlv(pb)[1]:], sig[der.split_tlv(sig)[1]:]


def _fields(pb: bytes) -> list[tuple[int, bytes]]:
    """(field number, value) of each field of a protobuf (varint and length-delimited)."""
    out, pos = [], 0

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            b = pb[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value

    while pos < len(pb):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint().to_bytes(8, "big")))
        else:
            n = varint()
            out.append((key >> 3, pb[pos:pos + n]))
            pos += n
    return out


def _host_data(case_id: str) -> bytes:
    return [v for n, v in _fields(_signed_key(case_id)[0]) if n == 2][-1]


def _check_host_rsa_bits(case_id: str, value: int) -> None:
    key = load_der_public_key(_host_data(case_id))
    assert isinstance(key, rsa.RSAPublicKey) and key.key_size == value


def _check_certificate_rsa_bits(case_id: str, value: int) -> None:
    key = _certificate(case_id).public_key()
    assert isinstance(key, rsa.RSAPublicKey) and key.key_size == value


def _check_host_rsa_length(case_id: str, value: str) -> None:
    sig = _signed_key(case_id)[1]
    assert len(sig) == {"k-minus-1": 255, "k": 256, "k-plus-1": 257}[value]
    assert sig[0] == 0 or value == "k-minus-1"


def _check_self_rsa_length(case_id: str, value: str) -> None:
    sig = _certificate(case_id).signature
    assert len(sig) == {"k-minus-1": 255, "k": 256, "k-plus-1": 257}[value]
    assert sig[0] == 0 or value == "k-minus-1"


def _element(case_id: str, which: str) -> bytes:
    value = _extension_value(case_id)
    if which == "sequence":
        return value
    # the SignedKey's children, by their own (possibly wrong) lengths
    _, start, _ = der.split_tlv(value)
    first_end = der.split_tlv(value, start)[2]
    return value[start:] if which == "public-key" else value[first_end:]


#: The content length of each SignedKey element of an Ed25519 host key: the protobuf (08 01 12
#: 20 and 32 bytes), the 64-byte signature, and both as OCTET STRINGs.
REAL_LENGTH = {"sequence": 38 + 66, "public-key": 36, "signature": 64}


def _check_length(which: str) -> Callable[[str, str], None]:
    def check(case_id: str, edge: str) -> None:
        tlv = _element(case_id, which)
        real = REAL_LENGTH[which]
        if edge == "long-form-81":
            assert tlv[1:3] == bytes([0x81, real]) and real < 0x80
        else:
            assert tlv[1] == {"overruns-by-one": real + 1, "short-by-one": real - 1}[edge]
    return check


def _check_tag(which: str) -> Callable[[str, int], None]:
    def check(case_id: str, tag: int) -> None:
        assert _element(case_id, which)[0] == tag
    return check


def _check_oid(case_id: str, value: str | bytes) -> None:
    tbs = der.children(_leaf(case_id))[0]
    ext = der.children(der.children(der.children(tbs)[-1])[0])[0]
    encoded = der.children(ext)[0]
    if isinstance(value, bytes):
        assert encoded == value and encoded != der.oid(LIBP2P_EXTENSION_OID)
        return
    assert encoded == der.oid(value)
    ext_oid = _certificate(case_id).extensions[0].oid.dotted_string
    assert ext_oid == value != LIBP2P_EXTENSION_OID


def _check_repeated(case_id: str, layout: str) -> None:
    numbers = [n for n, _ in _fields(_signed_key(case_id)[0])]
    assert numbers == {"type-repeated-last-differs": [1, 1, 2],
                       "type-repeated-first-differs": [1, 1, 2],
                       "type-after-data-differs": [1, 2, 1],
                       "data-repeated-last-differs": [1, 2, 2],
                       "data-repeated-first-differs": [1, 2, 2],
                       "data-type-data-differs": [2, 1, 2]}[layout]
    repeated = next(n for n in numbers if numbers.count(n) == 2)
    first, second = [v for n, v in _fields(_signed_key(case_id)[0]) if n == repeated]
    assert first != second  # the two copies differ


def _check_unknown_field(case_id: str, number: int) -> None:
    fields = _fields(_signed_key(case_id)[0])
    assert [n for n, _ in fields] == [1, 2, number]


def _check_ed25519_point(case_id: str, which: str) -> None:
    data = _host_data(case_id)
    y = int.from_bytes(data, "little") & ((1 << 255) - 1)
    assert y % ED25519_P == 1  # the identity, however written
    assert {"small-order-identity": y == 1 and data[31] < 0x80,
            "non-canonical-y": y == ED25519_P + 1,
            "x-sign-on-zero": y == 1 and data[31] >= 0x80}[which]
    sig = _signed_key(case_id)[1]
    # under the identity the signature verifies for any message: [S]B = R
    ed25519.Ed25519PublicKey.from_public_bytes((1).to_bytes(32, "little")).verify(sig, b"any")


def _check_ed25519_s(case_id: str, which: str) -> None:
    s = int.from_bytes(_signed_key(case_id)[1][32:], "little")
    assert s >= ED25519_L
    assert (s >> 255 == 1) if which == "s-top-bit" else (s - ED25519_L < ED25519_L)


def _check_ecdsa_s(order: int | None) -> Callable[[str, str], None]:
    assert order is not None

    def check(case_id: str, which: str) -> None:
        _, s = decode_dss_signature(_signed_key(case_id)[1])
        assert {"high": order // 2 < s < order, "plus-n": s > order, "zero": s == 0}[which]
    return check


def _check_serial_octets(case_id: str, octets: int) -> None:
    """The serial INTEGER's content is ``octets`` octets, read by pyca: positive, and no sign
    octet (its top bit is clear), so its value has 8 * octets - 1 bits."""
    serial = x509.load_der_x509_certificate(_leaf(case_id)).serial_number
    assert serial.bit_length() == 8 * octets - 1


def _check_host_rsa_exponent(case_id: str, value: int) -> None:
    key = load_der_public_key(_host_data(case_id))
    assert isinstance(key, rsa.RSAPublicKey) and key.key_size == 2048
    assert key.public_numbers().e == value


def _check_integer(curve: ec.EllipticCurve) -> Callable[[str, object], None]:
    def check(case_id: str, edge: object) -> None:
        """The signature's INTEGERs read as unsigned magnitudes (not by DER) are a valid
        signature of the host key, checked by cryptography; the one at the edge has its form."""
        signature = _signed_key(case_id)[1]
        assert signature[0] == 0x30
        elements = der.children(signature)
        r_tlv, s_tlv = elements
        content = [e[der.split_tlv(e)[1]:] for e in elements]
        r, s = (int.from_bytes(c, "big") for c in content)
        data = _host_data(case_id)
        key = (ec.EllipticCurvePublicKey.from_encoded_point(curve, data)
               if len(data) == 33 else load_der_public_key(data))
        assert isinstance(key, ec.EllipticCurvePublicKey)
        message = b"libp2p-tls-handshake:" + _certificate(case_id).public_key().public_bytes(
            Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        key.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
        if isinstance(curve, ec.SECP256K1):
            assert s <= K1_N // 2  # the low-S signature as signed, never its high-S twin
        if edge == "negative":
            assert r_tlv[0] == s_tlv[0] == 0x02
            assert any(c[0] & 0x80 for c in content)  # a positive value without its pad
        elif edge == "leading-zero":
            assert r_tlv[0] == 0x02 and content[0][0] == 0 and not content[0][1] & 0x80
        else:
            assert (r_tlv[0], s_tlv[0]) == (edge, 0x02) and not content[0][0] & 0x80
    return check


def _check_point_form(case_id: str, form: str) -> None:
    data = _host_data(case_id)
    point = data if len(data) in (33, 65) else der.children(data)[1][3:]
    first = {"hybrid": (6, 7), "compressed": (2, 3), "parity-flipped": (2, 3)}[form]
    assert point[0] in first and len(point) == (65 if form == "hybrid" else 33)


def _check_data_form(case_id: str, form: str) -> None:
    """The Data, read by cryptography (not fixturegen): the right key type's key, in the
    other form."""
    data = _host_data(case_id)
    key_type = dict(_fields(_signed_key(case_id)[0]))[1][-1]
    if form == "ecdsa-raw-point":
        assert key_type == 3 and len(data) == 65 and data[0] == 4
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), data)
        return
    key = load_der_public_key(data)  # a whole SubjectPublicKeyInfo
    if form == "ed25519-spki":
        assert key_type == 1 and isinstance(key, ed25519.Ed25519PublicKey) and len(data) == 44
    else:
        assert key_type == 2 and isinstance(key, ec.EllipticCurvePublicKey)
        assert key.curve.name == "secp256k1"


def _check_time(case_id: str, which: str) -> None:
    not_after = _certificate(case_id).not_valid_after_utc
    assert not_after.year == {"generalized-2050": 2050, "utc-2050": 1950}[which]
    validity = der.children(der.children(_leaf(case_id))[0])[4]
    tag = der.children(validity)[1][0]
    assert tag == {"generalized-2050": 0x18, "utc-2050": 0x17}[which]


CHECKS: dict[str, Callable[[str, object], None]] = {
    "host-key.rsa-bits": _check_host_rsa_bits,  # type: ignore[dict-item]
    "certificate-key.rsa-bits": _check_certificate_rsa_bits,  # type: ignore[dict-item]
    "host-signature.rsa-length": _check_host_rsa_length,  # type: ignore[dict-item]
    "self-signature.rsa-length": _check_self_rsa_length,  # type: ignore[dict-item]
    **{f"signed-key.{w}-length": _check_length(w)  # type: ignore[misc]
       for w in ("sequence", "public-key", "signature")},
    **{f"signed-key.{w}-tag": _check_tag(w)  # type: ignore[misc]
       for w in ("sequence", "public-key", "signature")},
    "extension.oid": _check_oid,  # type: ignore[dict-item]
    "host-key.repeated-fields": _check_repeated,  # type: ignore[dict-item]
    "host-key.unknown-field": _check_unknown_field,  # type: ignore[dict-item]
    "host-key.ed25519-point": _check_ed25519_point,  # type: ignore[dict-item]
    "host-signature.ed25519-s": _check_ed25519_s,  # type: ignore[dict-item]
    "host-signature.ecdsa-s": _check_ecdsa_s(P256_N),  # type: ignore[dict-item]
    "host-signature.secp256k1-s": _check_ecdsa_s(K1_N),  # type: ignore[dict-item]
    "host-key.secp256k1-point": _check_point_form,  # type: ignore[dict-item]
    "host-key.ecdsa-point": _check_point_form,  # type: ignore[dict-item]
    "validity.time-switch": _check_time,  # type: ignore[dict-item]
    "host-key.data-form": _check_data_form,  # type: ignore[dict-item]
    "host-key.rsa-exponent": _check_host_rsa_exponent,  # type: ignore[dict-item]
    "serial.octets": _check_serial_octets,  # type: ignore[dict-item]
    "host-signature.ecdsa-integer": _check_integer(ec.SECP256R1()),
    "host-signature.secp256k1-integer": _check_integer(ec.SECP256K1()),
}
CASES = [(prop, part) for prop in PROPERTIES for part in prop.partitions
         if part.existing is None]


def test_every_property_has_its_check() -> None:
    assert set(CHECKS) == {p.name for p in PROPERTIES}


@pytest.mark.parametrize(("prop", "part"), CASES, ids=[p.case_id(q) for p, q in CASES])
def test_the_certificate_sits_at_its_boundary_and_the_verifier_agrees(
        prop: Property, part: Partition) -> None:
    case_id = prop.case_id(part)
    CHECKS[prop.name](case_id, part.value)
    r = rendered(case_id)
    verdict = Verifier().verify([data for path, data in r.files if path.endswith(".der")],
                                expect_peer_id=r.fixture.expect_peer_id)
    assert verdict.error == part.verdict.error, verdict.detail
    assert verdict.accepted == (part.verdict.error is None)
    reported = {f for f in part.verdict.flags if f.reported}
    assert reported <= set(verdict.flags)


# -- the model refuses a malformed declaration -----------------------------------------------------
def _prop(*partitions: Partition, name: str = "host-key.example") -> Property:
    return Property(name, "host-key", "d", "r", partitions, lambda ctx, v: None)  # type: ignore


@pytest.mark.parametrize(("partitions", "name", "message"), [
    ((), "host-key.example", "no partition"),
    ((Partition("a", 1, VALID, "t"), Partition("a", 2, VALID, "t")), "host-key.example",
     "two partitions of one name"),
    ((Partition("A b", 1, VALID, "t"),), "host-key.example", "not an id part"),
    ((Partition("a", 1, Verdict("invalid"), "t"),), "host-key.example", "needs its error"),
    ((Partition("a", 1, Verdict("valid", ErrorCode.EXPIRED), "t"),), "host-key.example",
     "no error or flag"),
    ((Partition("a", 1, Verdict("acceptable"), "t"),), "host-key.example", "needs the flag"),
    ((Partition("a", 1, VALID, "t"),), "signed-key.example", "ELEMENT.NAME"),
    ((Partition("a", 1, VALID, "t"),), "host-key.Bad_Name", "ELEMENT.NAME"),
])
def test_a_malformed_declaration_is_refused(partitions: tuple[Partition, ...], name: str,
                                            message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _prop(*partitions, name=name)


def test_a_property_is_declared_once() -> None:
    with pytest.raises(ValueError, match="duplicate boundary property"):
        boundary(PROPERTIES[0])
    good = _prop(Partition("a", 1, Verdict("acceptable", flags=(Flag.EMPTY_NAME,)), "t"))
    assert good.case_id(good.partitions[0]) == "boundary.host-key.example.a"


@pytest.mark.parametrize("host", ["ecdsa", "secp256k1"])
def test_the_sign_octet_case_is_made_for_every_seed(host: str) -> None:
    """The negative-INTEGER case needs r or s with its top bit set; a seed whose first
    signature has neither (about one in two for a low-S Secp256k1 signature) takes another host
    key of the seed, so every seed makes the case, with a signature as signed."""
    case = BOUNDARY[f"boundary.host-signature.{host}-integer.negative"]
    hosts = set()
    for number in range(12):
        r = case.render(f"seed {number}".encode())
        leaf = next(d for p, d in r.files if p.endswith(".der"))
        verdict = Verifier().verify([leaf])
        assert verdict.error == ErrorCode.EXTENSION_SIGNATURE_INVALID, (number, verdict.detail)
        certificate = x509.load_der_x509_certificate(leaf)
        value = certificate.extensions.get_extension_for_oid(
            x509.ObjectIdentifier(LIBP2P_EXTENSION_OID)).value.value  # type: ignore[attr-defined]
        signature = der.children(value)[1][2:]
        first, second = der.children(signature)
        unpadded = [e for e in (first, second) if e[2] & 0x80]
        assert len(unpadded) == 1, number  # exactly one INTEGER lost its sign octet
        hosts.add(r.fixture.host_key.public_key_protobuf_hex if r.fixture.host_key else None)
    assert len(hosts) == 12


def test_without_a_top_bit_there_is_no_sign_octet_to_drop() -> None:
    assert _without_sign_octet(1, 2**254) is None  # neither r nor s has its top bit set
    assert _without_sign_octet(1, 2**255 + 5) == der.sequence(
        der.integer(1), b"\x02\x20" + (2**255 + 5).to_bytes(32, "big"))
    assert _without_sign_octet(2**255 + 5, 1) == der.sequence(
        b"\x02\x20" + (2**255 + 5).to_bytes(32, "big"), der.integer(1))
    with pytest.raises(ValueError, match="positive"):
        with_integer(0, "leading-zero")
    long = 2**1100 + 1  # a content over 127 octets keeps its long-form length
    assert with_integer(long, "leading-zero") == b"\x02\x81\x8b\x00" + long.to_bytes(138, "big")
