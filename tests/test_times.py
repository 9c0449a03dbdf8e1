"""Validity times (RFC 5280 4.1.2.5) as the reference verifier reads them, checked against the
corpus's time cases and against an independent parser (cryptography's rust-asn1)."""

from __future__ import annotations

import calendar
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from fixturegen.verify import Verifier
from fixturegen.verify.der import DERError, generalized_in_utctime_range, time_seconds
from fixturegen.verify.x509 import parse_certificate

FLAG = "generalized-time-before-2050"


def _seconds(tag: int, text: bytes) -> int:
    return time_seconds(text, tag, 0, len(text))


@pytest.mark.parametrize("tag, text, when, flagged", [
    (0x18, b"00010101000000Z", (1, 1, 1, 0, 0, 0), False),
    (0x18, b"19491231235959Z", (1949, 12, 31, 23, 59, 59), False),
    (0x18, b"19500101000000Z", (1950, 1, 1, 0, 0, 0), True),
    (0x18, b"19750101000000Z", (1975, 1, 1, 0, 0, 0), True),
    (0x18, b"20491231235959Z", (2049, 12, 31, 23, 59, 59), True),
    (0x18, b"20500101000000Z", (2050, 1, 1, 0, 0, 0), False),
    (0x17, b"500101000000Z", (1950, 1, 1, 0, 0, 0), False),
    (0x17, b"491231235959Z", (2049, 12, 31, 23, 59, 59), False),
    (0x17, b"000229000000Z", (2000, 2, 29, 0, 0, 0), False),
])
def test_times_and_the_flag(tag: int, text: bytes, when: tuple[int, ...], flagged: bool) -> None:
    seconds = _seconds(tag, text)
    assert seconds == calendar.timegm((*when, 0, 0, 0))
    assert generalized_in_utctime_range(tag, seconds) is flagged


@pytest.mark.parametrize("tag, text", [
    (0x18, b"30000101000000.5Z"), (0x18, b"300001010000Z"), (0x17, b"9901010000Z"),
    (0x17, b"990230000000Z"), (0x17, b"990101000000+0000"), (0x18, b"00000101000000Z"),
    (0x17, b"990101240000Z"), (0x17, b"99O101000000Z"), (0x18, b"20500101000000"),
    (0x17, b"010229000000Z"),
])
def test_malformed_times_are_der_errors(tag: int, text: bytes) -> None:
    with pytest.raises(DERError):
        _seconds(tag, text)


TIME_CASES = {
    "valid.time.generalized-year-0001": (None, False),
    "valid.time.generalized-1949": (None, False),
    "valid.time.utc-1950": (None, False),
    "valid.time.utc-2049": (None, False),
    "acceptable.time.generalized-1975": (None, True),
    "acceptable.time.generalized-2049": (None, True),
    "invalid.time.generalized-fractional-seconds": ("malformed_certificate", False),
    "invalid.time.utc-without-seconds": ("malformed_certificate", False),
    "invalid.time.generalized-without-seconds": ("malformed_certificate", False),
    "invalid.time.february-30": ("malformed_certificate", False),
    "invalid.time.utc-without-z": ("malformed_certificate", False),
}


def test_every_time_case_is_in_the_corpus(fixtures: dict[str, dict[str, Any]]) -> None:
    assert sorted(f for f in fixtures if ".time." in f) == sorted(TIME_CASES)


@pytest.mark.parametrize("fid", sorted(TIME_CASES))
def test_time_cases_verdicts_and_an_independent_parser(
        corpus: Path, fixtures: dict[str, dict[str, Any]], fid: str) -> None:
    error, flagged = TIME_CASES[fid]
    data = (corpus / fixtures[fid]["path"]).read_bytes()
    verdict = Verifier().verify([data])
    assert verdict.error == error, verdict.detail
    assert (FLAG in verdict.flags) is flagged
    assert (FLAG in fixtures[fid]["flags"]) is flagged
    if error is None:  # cryptography reads the same instants
        theirs = x509.load_der_x509_certificate(data)
        ours = parse_certificate(data)
        assert ours.not_before == calendar.timegm(theirs.not_valid_before_utc.timetuple())
        assert ours.not_after == calendar.timegm(theirs.not_valid_after_utc.timetuple())
        assert fixtures[fid]["certificate"]["not_before"] == \
            theirs.not_valid_before_utc.strftime("%Y-%m-%dT%H:%M:%SZ").rjust(20, "0")
    else:  # and refuses the malformed ones too
        with pytest.raises(ValueError):
            x509.load_der_x509_certificate(data)
