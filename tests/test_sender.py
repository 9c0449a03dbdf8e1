"""The sender's judgement (fixturegen/verify/sender.py): each sender flag on a certificate made
with the project's builders to have it, and absent from the same certificate without it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixturegen.cases.context import BuildContext
from fixturegen.certs import der
from fixturegen.certs.builder import EMPTY_NAME, Draft, validity
from fixturegen.certs.extension import extension
from fixturegen.certs.schemes import SCHEMES
from fixturegen.verify import Verifier
from fixturegen.verify.codes import Flag, SenderFlag
from fixturegen.verify.sender import judge

BASIC_CONSTRAINTS = "2.5.29.19"
SUBJECT_ALT_NAME = "2.5.29.17"
AT = datetime(2026, 12, 6, tzinfo=UTC)


def base() -> Draft:
    """A valid ECDSA P-256 certificate draft with an Ed25519 host key."""
    return BuildContext(b"sender-test", "sender.base").draft()


def flags(*chain: bytes, at: datetime = AT) -> dict[SenderFlag, str]:
    return {f.flag: f.detail for f in judge(list(chain), at=at)}


def basic_constraints(critical: bool) -> bytes:
    return extension(BASIC_CONSTRAINTS, der.sequence(), critical)


def test_a_valid_certificate_has_no_sender_flag() -> None:
    good = base().sign()
    assert Verifier().verify([good], at=AT).accepted
    assert flags(good) == {}
    # The libp2p extension marked critical is the spec's MAY: no sender flag.
    assert flags(BuildContext(b"sender-test", "sender.critical").draft(critical=True).sign()) == {}


# (the flag, the draft that has it, the draft just like it that does not)
CASES: list[tuple[SenderFlag, Any, Any]] = [
    (SenderFlag.VERSION_NOT_V3, lambda d: d.but(version=b""),
     lambda d: d.but(version=der.explicit(0, der.integer(2)))),
    (SenderFlag.SERIAL_NOT_POSITIVE, lambda d: d.but(serial=der.integer(0)),
     lambda d: d.but(serial=der.integer(1))),
    (SenderFlag.SERIAL_TOO_LONG, lambda d: d.but(serial=der.integer(1 << (8 * 20))),
     lambda d: d.but(serial=der.integer((1 << (8 * 20 - 1)) - 1))),
    (SenderFlag.SERIAL_NOT_MINIMAL, lambda d: d.but(serial=der.tlv(0x02, b"\x00\x05")),
     lambda d: d.but(serial=der.tlv(0x02, b"\x00\x85"))),
    (SenderFlag.EMPTY_ISSUER, lambda d: d.but(issuer=EMPTY_NAME), lambda d: d),
    (SenderFlag.EMPTY_SUBJECT, lambda d: d.but(subject=EMPTY_NAME), lambda d: d),
    (SenderFlag.FRACTIONAL_SECONDS,
     lambda d: d.but(validity=der.sequence(der.tlv(0x17, b"250101000000Z"),
                                           der.tlv(0x18, b"30000101000000.5Z"))),
     lambda d: d.but(validity=der.sequence(der.tlv(0x17, b"250101000000Z"),
                                           der.tlv(0x18, b"30000101000000Z")))),
    (SenderFlag.TIME_NOT_DER,
     lambda d: d.but(validity=der.sequence(der.tlv(0x17, b"2501010000Z"),
                                           der.tlv(0x18, b"30000101000000Z"))),
     lambda d: d.but(validity=der.sequence(der.tlv(0x17, b"250101000000Z"),
                                           der.tlv(0x18, b"30000101000000Z")))),
    (SenderFlag.GENERALIZED_TIME_BEFORE_2050,
     lambda d: d.but(validity=der.sequence(der.generalized_time(datetime(2025, 1, 1, tzinfo=UTC)),
                                           der.time(datetime(2060, 1, 1, tzinfo=UTC)))),
     # GeneralizedTime from 2050 on, and before 1950 (no UTCTime form), is the sender's due
     lambda d: d.but(validity=der.sequence(der.generalized_time(datetime(1949, 1, 1, tzinfo=UTC)),
                                           der.generalized_time(datetime(2050, 1, 1,
                                                                         tzinfo=UTC))))),
    (SenderFlag.UNIQUE_ID_PRESENT, lambda d: d.but(subject_unique_id=der.tlv(0x82, b"\x00\x01")),
     lambda d: d),
    (SenderFlag.CRITICAL_FALSE_ENCODED,
     lambda d: d.but(extensions=(*d.tbs.extensions, der.sequence(
         der.oid(BASIC_CONSTRAINTS), der.boolean(False), der.octet_string(der.sequence())))),
     lambda d: d.but(extensions=(*d.tbs.extensions, basic_constraints(False)))),
    (SenderFlag.EXTENSION_DUPLICATE,
     lambda d: d.but(extensions=(*d.tbs.extensions, basic_constraints(False),
                                 basic_constraints(False))),
     lambda d: d.but(extensions=(*d.tbs.extensions, basic_constraints(False)))),
    (SenderFlag.CRITICAL_EXTENSION,
     lambda d: d.but(extensions=(*d.tbs.extensions, basic_constraints(True))),
     lambda d: d.but(extensions=(*d.tbs.extensions, basic_constraints(False)))),
]


@pytest.mark.parametrize(("flag", "bad", "good"), CASES,
                         ids=[flag.value for flag, _, _ in CASES])
def test_each_flag_on_a_certificate_that_has_it_and_not_on_its_twin(
        flag: SenderFlag, bad: Any, good: Any) -> None:
    with_it = flags(bad(base()).sign())
    assert flag in with_it
    assert set(with_it) == {flag}, with_it  # nothing else about the certificate is flagged
    assert flags(good(base()).sign()) == {}


def test_what_the_details_say() -> None:
    d = base()
    critical = flags(d.but(extensions=(*d.tbs.extensions, basic_constraints(True), extension(
        "2.5.29.15", der.bit_string(b"\x80", 7), True))).sign())
    assert critical[SenderFlag.CRITICAL_EXTENSION] == ("2.5.29.19 (basicConstraints); "
                                                       "2.5.29.15 (keyUsage)")
    assert flags(d.but(serial=der.integer(-5)).sign())[SenderFlag.SERIAL_NOT_POSITIVE] == \
        "negative"
    assert flags(d.but(serial=der.integer(1 << (8 * 20))).sign())[SenderFlag.SERIAL_TOO_LONG] \
        == "21 octets"
    assert flags(d.but(version=der.explicit(0, der.integer(1))).sign())[
        SenderFlag.VERSION_NOT_V3] == "version field 020101"
    # An empty subject is allowed with a critical subjectAltName (RFC 5280 4.1.2.6), which is
    # then a critical extension a libp2p receiver may not understand.
    san = extension(SUBJECT_ALT_NAME, der.sequence(der.tlv(0x82, b"libp2p.example")), True)
    assert flags(d.but(subject=EMPTY_NAME, extensions=(*d.tbs.extensions, san)).sign()) == {
        SenderFlag.CRITICAL_EXTENSION: "2.5.29.17 (subjectAltName)"}


def test_signature_algorithms_that_differ_inside_and_outside() -> None:
    d = base()
    other = SCHEMES["ecdsa_secp384r1_sha384"].algorithm.algorithm_identifier()
    assert flags(d.sign(outer_algorithm=other)) == {
        SenderFlag.SIGNATURE_ALGORITHM_MISMATCH: "1.2.840.10045.4.3.2 inside, "
                                                 "1.2.840.10045.4.3.3 outside"}
    assert flags(d.sign(outer_algorithm=d.algorithm.algorithm_identifier())) == {}


def test_the_validity_window_at_receipt() -> None:
    d = base().but(validity=validity(datetime(2025, 1, 1, tzinfo=UTC),
                                     datetime(2027, 1, 1, tzinfo=UTC)))
    cert = d.sign()
    assert flags(cert, at=AT) == {}
    assert flags(cert, at=datetime(2028, 1, 1, tzinfo=UTC)) == {
        SenderFlag.NOT_VALID_AT_RECEIPT: "notAfter 2027-01-01T00:00:00Z before "
                                         "2028-01-01T00:00:00Z"}
    assert SenderFlag.NOT_VALID_AT_RECEIPT in flags(cert, at=datetime(2024, 1, 1, tzinfo=UTC))


def test_a_chain_and_bytes_that_are_no_certificate() -> None:
    good = base().sign()
    assert flags(good, good) == {SenderFlag.CHAIN_NOT_ONE: "2 certificates"}
    assert set(flags(b"\x30\x03\x02\x01")) == {SenderFlag.NOT_DER}
    assert set(flags(good + b"\x00")) == {SenderFlag.NOT_DER}
    assert flags() == {SenderFlag.CHAIN_NOT_ONE: "0 certificates"}


def test_flags_the_verifier_rejects_for_are_still_named() -> None:
    """The verifier stops at its first check (malformed_certificate); the judgement names every
    sender flag of the certificate."""
    d = base()
    bad = d.but(serial=der.integer(0), issuer=EMPTY_NAME,
                extensions=(*d.tbs.extensions, basic_constraints(True))).sign()
    assert Verifier().verify([bad], at=AT).error == "malformed_certificate"
    assert list(flags(bad)) == [SenderFlag.SERIAL_NOT_POSITIVE, SenderFlag.EMPTY_ISSUER,
                                SenderFlag.CRITICAL_EXTENSION]


def test_the_corpus_judged_as_sent(corpus: Path) -> None:
    """Every valid fixture is one a conforming sender may send; a verifier flag that is a sender
    rule comes with its sender flag."""
    manifest: dict[str, Any] = json.loads((corpus / "manifest.json").read_text())
    pairs = {Flag.CRITICAL_KNOWN_EXTENSION: SenderFlag.CRITICAL_EXTENSION,
             Flag.GENERALIZED_TIME_BEFORE_2050: SenderFlag.GENERALIZED_TIME_BEFORE_2050,
             Flag.UNIQUE_ID_PRESENT: SenderFlag.UNIQUE_ID_PRESENT}
    verifier = Verifier()
    seen: set[Flag] = set()
    valid = 0
    for fixture in manifest["fixtures"]:
        chain = [(corpus / p).read_bytes() for p in fixture["chain"]]
        judged = flags(*chain)
        if fixture["expected"]["result"] == "valid":
            valid += 1
            assert judged == {}, (fixture["id"], judged)
        for flag in verifier.verify(chain, at=AT).flags:
            if flag in pairs:
                seen.add(flag)
                assert pairs[flag] in judged, (fixture["id"], flag)
    assert valid > 100 and seen == set(pairs)


GOOD = base().sign()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048) | st.builds(
    lambda edits: _edited(GOOD, edits),
    st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(0, 255)), min_size=1,
             max_size=6)))
def test_any_bytes_are_judged_without_raising(data: bytes) -> None:
    """Random bytes, and a valid certificate with a few bytes changed: a list of findings,
    never an exception."""
    found = judge([data], at=AT)
    assert all(isinstance(f.flag, SenderFlag) and f.detail for f in found)
    assert len({f.flag for f in found}) == len(found)  # each flag once, details joined


def _edited(der: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(der)
    for position, value in edits:
        out[position] = value
    return bytes(out)
