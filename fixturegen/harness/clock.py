"""Validity near the verifier's clock: certificates the harness makes when an entry starts, and
two it makes once the adapter has started.

The corpus keeps its validity dates far from any plausible "now" (1999 to 3000) so that its
bytes are the same on every machine and every day. That leaves one boundary unsampled: the
verifier's own clock. A verifier that checks the validity period against a skewed time (an
hour of allowance, a time zone read as UTC, a cached "now") accepts a certificate that expired
minutes ago, or refuses one that became valid minutes ago, and no fixed date can show it.

These cases are made at run time instead, when each entry starts, and each entry sends them
first, so that they are checked within seconds of being made (a case retried after the entry is
made again first). Two of them keep their verdict for ever (a certificate that has expired stays
expired; one valid since a moment in the past and until the year 3000 stays valid); the other
two change verdict 20 minutes after they are made, far longer than the seconds between making
and checking them, and far shorter than the hour of skew a careless verifier allows.

Two more cases catch a verifier whose clock stopped when it started (a "now" read once, when
its module loaded): their boundary is the moment the adapter process first answered, which the
driver knows only once it has answered, so they are made just before they are sent, at the end
of the API entry (``LATE_CASES``), and sent only once that boundary is over two seconds past
(the driver waits for it: nothing races; a process that has not answered yet is first sent
the base fixture, so that it has loaded before the boundary). One expired at that boundary, one
became valid at it: a verifier still living at its start time accepts the first and refuses
the second. Handshake
entries do not carry them (the fixture peer's certificates are made when the entry starts).

Each case is a valid certificate of the corpus's common shape (the fixed Ed25519 host key, the
fixed P-256 certificate key, ecdsa_secp256r1_sha256) but for its validity; the first four run
in the API entry and in every handshake entry like a fixture, the late two in the API entry
only, and every id starts with ``clock.``. Its bytes
differ from run to run (the validity and the ECDSA self-signature); its expected result does
not.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from fixturegen.certs.builder import NOT_AFTER, NOT_BEFORE, draft
from fixturegen.certs.schemes import SCHEMES
from fixturegen.harness.requests import Expectation, HarnessCase
from fixturegen.harness.rules import BASE_FIXTURE
from fixturegen.identity.hostkey import HostKey
from fixturegen.keys import KeyKind
from fixturegen.keys.fixed import load_fixed

if TYPE_CHECKING:
    from fixturegen.harness.protocol import Request

#: Every clock case's id starts so.
PREFIX = "clock."
#: How far from the entry's start the boundary is: far more than an entry takes, far less than
#: the hour of skew a careless verifier allows.
MARGIN = timedelta(minutes=20)
RULE = ("tls.md: Peer Authentication: endpoints MUST verify the certificate's validity period "
        "(RFC 5280 4.1.2.5: the certificate is valid from notBefore through notAfter), at the "
        "time of the handshake")
SCHEME = "ecdsa_secp256r1_sha256"


@dataclass(frozen=True)
class ClockCase:
    """One validity window relative to the entry's start (``None``: the corpus's far date)."""

    id: str
    description: str
    result: str
    error: str | None
    not_before: timedelta | None
    not_after: timedelta | None


CLOCK_CASES: tuple[ClockCase, ...] = (
    ClockCase(f"{PREFIX}expired-minutes-ago",
              "Expired 20 minutes before the check (notAfter = the entry's start minus 20 "
              "minutes; notBefore 1999). A verifier whose clock allows any skew of more than 20 "
              "minutes backwards (or reads the time in another zone) accepts it.",
              "invalid", "expired", None, -MARGIN),
    ClockCase(f"{PREFIX}valid-since-minutes",
              "Valid since 20 minutes before the check (notBefore = the entry's start minus 20 "
              "minutes; notAfter 3000). A verifier whose clock is behind by more than 20 minutes "
              "(an hour of allowance in the wrong direction) refuses it.",
              "valid", None, -MARGIN, None),
    ClockCase(f"{PREFIX}not-yet-valid-minutes",
              "Valid only from 20 minutes after the check (notBefore = the entry's start plus 20 "
              "minutes; notAfter 3000). A verifier that allows clock skew forwards (an hour of "
              "tolerance on notBefore) accepts it.",
              "invalid", "not_yet_valid", MARGIN, None),
    ClockCase(f"{PREFIX}expires-in-minutes",
              "Valid now, expiring 20 minutes after the check (notBefore 1999; notAfter = the "
              "entry's start plus 20 minutes). A verifier that wants a margin before notAfter, "
              "or whose clock is ahead, refuses it.",
              "valid", None, None, MARGIN),
)


@dataclass(frozen=True)
class LateCase:
    """A validity window that opens or closes at the moment the adapter process first
    answered (rounded up to the next whole second): made when the case is sent."""

    id: str
    description: str
    result: str
    error: str | None
    #: Which bound the moment is: "not_after" (expired there) or "not_before" (valid from there).
    bound: str


LATE_CASES: tuple[LateCase, ...] = (
    LateCase(f"{PREFIX}expired-since-start",
             "Expired since the adapter started: notAfter is the moment the adapter process "
             "first answered (the next whole second), notBefore 1999; made just before it is "
             "sent, at the end of the API entry, and sent only once notAfter is over two seconds "
             "past. A verifier whose \"now\" was read once, when it started, accepts it.",
             "invalid", "expired", "not_after"),
    LateCase(f"{PREFIX}valid-since-start",
             "Valid since the adapter started: notBefore is the moment the adapter process "
             "first answered (the next whole second), notAfter 3000; made just before it is "
             "sent, at the end of the API entry, and sent only once notBefore is over two seconds "
             "past. A verifier whose \"now\" was read once, when it started, refuses it as not "
             "yet valid.",
             "valid", None, "not_before"),
)
#: How long after the boundary a late case is sent (X.509 times are whole seconds; an adapter
#: whose clock is off the harness's by more than this misjudges the two late cases).
LATE_MARGIN = timedelta(seconds=2)


def late_moment(first_answer: datetime) -> datetime:
    """The boundary of the late cases for a process that first answered at ``first_answer``:
    the next whole second after it (strictly after: a verifier loaded before it answered)."""
    moment = first_answer.astimezone(UTC)
    return moment.replace(microsecond=0) + timedelta(seconds=1)


def mint_late(case: LateCase, first_answer: datetime) -> tuple[Minted, datetime]:
    """The certificate of ``case`` for a process that first answered at ``first_answer``, and
    the moment before which it must not be sent."""
    moment = late_moment(first_answer)
    made = _minted(moment, moment if case.bound == "not_before" else NOT_BEFORE,
                   moment if case.bound == "not_after" else NOT_AFTER)
    return made, moment + LATE_MARGIN


def late_request(case_id: str, first_answer: datetime) -> tuple[Request, datetime]:
    """The request of the late case ``case_id`` for a process that first answered at
    ``first_answer``, and when it may be sent (what the driver calls just before sending)."""
    from fixturegen.harness.protocol import Request

    case = next(c for c in LATE_CASES if c.id == case_id)
    made, after = mint_late(case, first_answer)
    return Request(id=case.id, kind="certificate", certificates=[made.certificate],
                   certificate_key=made.key), after


def is_late(case_id: str) -> bool:
    return any(c.id == case_id for c in LATE_CASES)


@dataclass(frozen=True)
class Minted:
    """A clock case's certificate, made for one moment."""

    certificate: str  # base64 DER
    key: str  # PKCS#8 PEM of the certificate key (the fixture peer signs with it)
    peer_id: str


def mint(case: ClockCase, now: datetime) -> Minted:
    """The certificate of ``case`` for an entry that starts at ``now`` (whole seconds)."""
    moment = now.astimezone(UTC).replace(microsecond=0)
    return _minted(moment,
                   NOT_BEFORE if case.not_before is None else moment + case.not_before,
                   NOT_AFTER if case.not_after is None else moment + case.not_after)


def _minted(moment: datetime, not_before: datetime, not_after: datetime) -> Minted:
    """The corpus's common certificate (fixed Ed25519 host key, fixed P-256 certificate key)
    with this validity, its serial the moment it was made for."""
    host = HostKey(load_fixed(KeyKind.ED25519))
    cert_key = load_fixed(KeyKind.P256)
    d = draft(cert_key, SCHEMES[SCHEME].algorithm, host, serial=int(moment.timestamp()),
              scheme=SCHEME, not_before=not_before, not_after=not_after)
    return Minted(base64.b64encode(d.sign()).decode("ascii"),
                  cert_key.pkcs8_pem().decode("ascii"), host.peer_id)


def claimed() -> dict[str, str]:
    """The PeerId every clock case's certificate claims (a dialler names it, as for a
    fixture)."""
    peer_id = HostKey(load_fixed(KeyKind.ED25519)).peer_id
    return {case_id: peer_id for case_id in [c.id for c in CLOCK_CASES]
            + [c.id for c in LATE_CASES]}


def harness_cases(now: datetime) -> list[HarnessCase]:
    """The clock cases as API cases (and, through the handshake plans, handshake cases), their
    certificates made for ``now``."""
    from fixturegen.harness.protocol import Request

    out = []
    for case in CLOCK_CASES:
        made = mint(case, now)
        request = Request(id=case.id, kind="certificate", certificates=[made.certificate],
                          certificate_key=made.key)
        out.append(HarnessCase(request, Expectation(
            case.result, made.peer_id if case.result == "valid" else None, case.error),
            RULE, case.description, "high", ""))
    return out


def late_cases(now: datetime) -> list[HarnessCase]:
    """The late cases as API cases, their certificates made as if the adapter had first
    answered at ``now`` (the driver makes them again, just before sending them)."""
    out = []
    peer_id = HostKey(load_fixed(KeyKind.ED25519)).peer_id
    for case in LATE_CASES:
        request, _ = late_request(case.id, now)
        out.append(HarnessCase(request, Expectation(
            case.result, peer_id if case.result == "valid" else None, case.error),
            RULE, case.description, "high", ""))
    return out


def with_clock_cases(cases: Sequence[HarnessCase], now: datetime) -> list[HarnessCase]:
    """``cases`` and, for a corpus of the catalogue (it holds the rules' base fixture), the
    clock cases made for ``now``, first (an entry checks them within seconds of its start), and
    the late cases last (the API entry makes them again just before sending them)."""
    if not any(c.id == BASE_FIXTURE for c in cases):
        return list(cases)
    return [*harness_cases(now), *cases, *late_cases(now)]


def refreshed(cases: Sequence[HarnessCase], now: datetime) -> list[HarnessCase]:
    """``cases`` with each clock case's certificate made again for an entry that starts at
    ``now`` (the other cases as they are)."""
    made = {c.id: c for c in harness_cases(now)} if any(is_clock(c.id) for c in cases) else {}
    return [made.get(c.id, c) for c in cases]


def is_clock(case_id: str) -> bool:
    return case_id.startswith(PREFIX)
