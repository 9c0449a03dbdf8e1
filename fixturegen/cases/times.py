"""Validity times: what RFC 5280 section 4.1.2.5 allows and what live implementations send.

RFC 5280: dates through 2049 MUST be UTCTime, from 2050 on GeneralizedTime; both in their one DER
form with seconds and ``Z``, GeneralizedTime without fractional seconds. A year before 1950
cannot be written as UTCTime at all, so GeneralizedTime is its only encoding (rust-libp2p keeps
an RSA-PSS certificate with notBefore 0001-01-01 in its test assets; older go-libp2p releases
made them). nim-libp2p writes every date, 1975 included, as GeneralizedTime; Go's crypto/x509,
rustls-webpki and OpenSSL accept that, so the reference verifier accepts it with a flag.
Fractional seconds and a missing seconds field are outside the DER form (X.690 11.7 and 11.8,
RFC 5280 4.1.2.5.1 and 4.1.2.5.2) and are rejected as malformed, like webpki and Go do. The
cases keep every other field valid, and notBefore in the past and notAfter in the future of
any plausible validation time, so that the time encoding is the only thing under test.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.model import case
from fixturegen.certs import der
from fixturegen.verify.codes import ErrorCode, Flag

RULE = "RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050, seconds and Z"
UTC_TIME, GENERALIZED_TIME = 0x17, 0x18
FAR_PAST = datetime(1999, 1, 1, tzinfo=UTC)
FAR_FUTURE = datetime(3000, 1, 1, tzinfo=UTC)


def _with_times(ctx: BuildContext, not_before: bytes, not_after: bytes) -> Built:
    d = ctx.draft()
    return ctx.built(d.but(validity=der.sequence(not_before, not_after)))


def _generalized(moment: datetime) -> bytes:
    return der.generalized_time(moment)


@case("valid.time.generalized-year-0001", "valid", rule=RULE)
def generalized_year_1(ctx: BuildContext) -> Built:
    """notBefore 0001-01-01T00:00:00Z as GeneralizedTime, the only encoding of a year before
    1950 (rust-libp2p's RSA-PSS test asset has it). Valid, with no flag."""
    return _with_times(ctx, _generalized(datetime(1, 1, 1, tzinfo=UTC)), der.time(FAR_FUTURE))


@case("valid.time.generalized-1949", "valid", rule=RULE)
def generalized_1949(ctx: BuildContext) -> Built:
    """notBefore 1949-12-31T23:59:59Z as GeneralizedTime: the last second before UTCTime's range
    begins, so GeneralizedTime is still the only encoding. Valid, with no flag."""
    return _with_times(ctx, _generalized(datetime(1949, 12, 31, 23, 59, 59, tzinfo=UTC)),
                       der.time(FAR_FUTURE))


@case("valid.time.utc-1950", "valid", rule=RULE)
def utc_1950(ctx: BuildContext) -> Built:
    """notBefore 500101000000Z: UTCTime's first instant, 1950-01-01 (YY 50 means 1950, not
    2050). A verifier that reads YY >= 50 as 20YY finds it not yet valid."""
    return _with_times(ctx, der.tlv(UTC_TIME, b"500101000000Z"), der.time(FAR_FUTURE))


@case("valid.time.utc-2049", "valid", rule=RULE)
def utc_2049(ctx: BuildContext) -> Built:
    """notAfter 491231235959Z: UTCTime's last instant, 2049-12-31T23:59:59Z (YY 49 means 2049,
    not 1949). A verifier that reads YY < 50 as 19YY finds it expired."""
    return _with_times(ctx, der.time(FAR_PAST), der.tlv(UTC_TIME, b"491231235959Z"))


@case("acceptable.time.generalized-1975", "acceptable",
      flags=(Flag.GENERALIZED_TIME_BEFORE_2050,), rule=RULE)
def generalized_1975(ctx: BuildContext) -> Built:
    """notBefore 19750101000000Z as GeneralizedTime, as every certificate nim-libp2p makes: RFC
    5280 wants UTCTime for 1975. Go, webpki and OpenSSL accept it; so does the reference
    verifier, with the flag."""
    return _with_times(ctx, _generalized(datetime(1975, 1, 1, tzinfo=UTC)),
                       der.time(FAR_FUTURE))


@case("acceptable.time.generalized-2049", "acceptable",
      flags=(Flag.GENERALIZED_TIME_BEFORE_2050,), rule=RULE)
def generalized_2049(ctx: BuildContext) -> Built:
    """notAfter 20491231235959Z as GeneralizedTime: the last second RFC 5280 wants as UTCTime.
    Accepted with the flag."""
    return _with_times(ctx, der.time(FAR_PAST),
                       _generalized(datetime(2049, 12, 31, 23, 59, 59, tzinfo=UTC)))


@case("invalid.time.generalized-fractional-seconds", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule="RFC 5280 4.1.2.5.2: GeneralizedTime MUST NOT include fractional "
      "seconds")
def generalized_fraction(ctx: BuildContext) -> Built:
    """notAfter 30000101000000.5Z: GeneralizedTime with fractional seconds, which RFC 5280 forbids
    in certificates (webpki and Go reject it; OpenSSL accepts)."""
    return _with_times(ctx, der.time(FAR_PAST), der.tlv(GENERALIZED_TIME, b"30000101000000.5Z"))


@case("invalid.time.utc-without-seconds", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule="RFC 5280 4.1.2.5.1: UTCTime MUST include seconds (YYMMDDHHMMSSZ)")
def utc_without_seconds(ctx: BuildContext) -> Built:
    """notBefore 9901010000Z: UTCTime without its seconds field, allowed by X.680 but not by
    DER nor by RFC 5280."""
    return _with_times(ctx, der.tlv(UTC_TIME, b"9901010000Z"), der.time(FAR_FUTURE))


@case("invalid.time.generalized-without-seconds", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule="RFC 5280 4.1.2.5.2: GeneralizedTime MUST include seconds")
def generalized_without_seconds(ctx: BuildContext) -> Built:
    """notAfter 300001010000Z: GeneralizedTime without its seconds field."""
    return _with_times(ctx, der.time(FAR_PAST), der.tlv(GENERALIZED_TIME, b"300001010000Z"))


@case("invalid.time.february-30", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule="RFC 5280 4.1.2.5: a calendar date")
def february_30(ctx: BuildContext) -> Built:
    """notBefore 990230000000Z: February 30th does not exist."""
    return _with_times(ctx, der.tlv(UTC_TIME, b"990230000000Z"), der.time(FAR_FUTURE))


@case("invalid.time.utc-without-z", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule="RFC 5280 4.1.2.5.1: UTCTime MUST be expressed in Zulu (Z)")
def utc_without_z(ctx: BuildContext) -> Built:
    """notBefore 990101000000+0000: a UTCTime with a numeric offset instead of Z."""
    return _with_times(ctx, der.tlv(UTC_TIME, b"990101000000+0000"), der.time(FAR_FUTURE))
