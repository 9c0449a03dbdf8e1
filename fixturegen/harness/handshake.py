"""Handshake mode: every case as a real libp2p secure-channel handshake with the fixture peer.

The fixture peer (``adapters/fixture-peer``, Go's crypto/tls) presents the case's chain as raw
bytes and signs its CertificateVerify with the case's key, honestly or with the vector's one
fault; the implementation's adapter runs its library's own upgrade against it, over TCP
(multistream-select, ``/tls/1.0.0``, TLS 1.3 with ALPN ``libp2p``). ``dial``: the
implementation dials and the peer is the TLS server (a server CertificateVerify); ``listen``:
the implementation listens and the peer is the TLS client. The verdict is the implementation's.

Which cases a direction carries:

- every certificate fixture whose key the corpus holds;
- every CertificateVerify vector of the direction's context, its fault reproduced on the live
  transcript (scheme, context, transcript, key, length);
- what Go's crypto/tls will not send (a PKCS#1 v1.5 or Ed448 CertificateVerify, an Ed448
  certificate key, the rule cases marked ``peer="message"``) goes to the message-level peer
  (``adapters/message-peer``, tlslite-ng) instead, over TCP; over QUIC those are ``skip`` with
  the reason;
- every three-proof set of that side: all valid, then the certificate, the extension or the
  transcript proof corrupted alone (each must fail the handshake);
- in ``listen``, one more: the fixture peer dials with no certificate at all
  (``ps.no-certificate.client``), which the listener must refuse.

A dialler always knows whom it dials: a ``dial`` request names the PeerId the presented
certificate claims (the manifest's ``expect_peer_id`` where a case sets one, else the PeerId of
the fixture's host key), so that a PeerId check is never the fault a case trips over.

A listener usually expects nobody, and its request names no PeerId. The exception is a case
that is about the expected PeerId (``expect_peer_id`` in the manifest: the ``peer-id`` cases):
its ``listen`` request names that PeerId, as a libp2p stack does when it accepts a connection
from a peer it already knows. The entry runs it only where the implementation's listener API
takes one (``Adapter.listener_expects``: go-libp2p's ``SecureInbound`` peer argument,
@libp2p/tls's ``secureInbound`` ``remotePeer`` option, both over TCP); elsewhere it is ``skip``.

A case the implementation cannot take because it offers no scheme the case sends (say,
P-521) is ``skip`` with what it offered: the handshake failed before any certificate was sent.
"""

from __future__ import annotations

import base64
import contextlib
import queue
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fixturegen.harness import clock, driver
from fixturegen.harness.protocol import (
    Cancel,
    PeerAddress,
    PeerEvent,
    PeerRequest,
    PeerStop,
    Request,
)
from fixturegen.harness.requests import (
    CorpusError,
    Expectation,
    HarnessCase,
    load_corpus,
    read_corpus_json,
)
from fixturegen.harness.rules import (
    BASE_FIXTURE,
    PROTOCOL_FAULTS,
    Direction,
    PeerKind,
    Transport,
)
from fixturegen.identity.peerid import peer_id_base58

DIRECTIONS: tuple[Direction, ...] = ("dial", "listen")
#: Whose CertificateVerify the fixture peer sends in each direction.
CONTEXT: dict[Direction, str] = {"dial": "server", "listen": "client"}
#: The faults of the corpus's invalid CertificateVerify vectors the peer reproduces live.
FAULTS = frozenset({"signature-corrupted", "wrong-context", "transcript-hash-changed",
                    "other-key", "wrong-length", "scheme-mismatch"})
#: CertificateVerify schemes crypto/tls will not sign in TLS 1.3, which the message-level peer
#: sends: rsa_pkcs1_sha1, rsa_pkcs1_sha256/384/512 and ed448.
MESSAGE_SCHEMES = frozenset({0x0201, 0x0401, 0x0501, 0x0601, 0x0808})
#: The PKCS#8 AlgorithmIdentifier's OID of an Ed448 key (1.3.101.113, DER), a key crypto/tls
#: cannot sign with.
ED448_OID = bytes.fromhex("06032b6571")
#: The message-level peer (``adapters/build message-peer``): its venv's Python and its program,
#: under the adapters folder, beside the fixture peer.
MESSAGE_PEER = ("message-peer/.venv/bin/python", "message-peer/peer.py")
#: What its build leaves once the venv is complete.
MESSAGE_PEER_BUILT = "message-peer/.venv/.installed"
ONLY_OVER_TCP = ("Go's crypto/tls cannot send this case (a PKCS#1 v1.5 or Ed448 "
                 "CertificateVerify, an Ed448 key, a message-level rule), and the message-level "
                 "peer that can speaks TLS over TCP only")
MESSAGE_PEER_MISSING = ("the message-level peer is not built: run 'adapters/build message-peer' "
                        "(it sends what crypto/tls will not)")
#: One valid certificate per scheme the fixture peer can present (Ed448: crypto/tls cannot),
#: the handshakes of a profile (``make bench-handshake``, ``harness profile``).
PROFILE_CASES = ("matrix.ed25519.ed25519.fixed", "matrix.ecdsa_secp256r1_sha256.ed25519.fixed",
                 "matrix.ecdsa_secp384r1_sha384.ed25519.fixed",
                 "matrix.ecdsa_secp521r1_sha512.ed25519.fixed",
                 "matrix.rsa_pss_rsae_sha256.ed25519.fixed",
                 "matrix.rsa_pss_rsae_sha384.ed25519.fixed",
                 "matrix.rsa_pss_rsae_sha512.ed25519.fixed")
#: How long a listening adapter still waits for a connection once the fixture peer's side
#: completed cleanly (its library may hand an accepted connection over a little later).
CANCEL_GRACE_MS = 250
PROOF_SET_RULE = ("tls.md: the certificate's self-signature, the extension's signature and the "
                  "CertificateVerify each prove the key; a handshake with any one corrupted "
                  "fails")
#: A listener's case no certificate can carry: the dialer presents none at all.
NO_CERTIFICATE_ID = "ps.no-certificate.client"
NO_CERTIFICATE_RULE = ("tls.md: Peer Authentication: both peers present a certificate; the "
                       "listener requests the dialer's (client authentication) and refuses a "
                       "dialer without one")


@dataclass(frozen=True)
class Presentation:
    """What the fixture peer presents: the chain, the key it signs with, the scheme it must
    announce (None: any that fits the key), the fault of its CertificateVerify and the rule
    of the handshake it breaks."""

    certificates: tuple[str, ...]
    key: str | None
    scheme: int | None
    fault: str
    protocol: str = ""  # a rule of the handshake broken on purpose (fixturegen.harness.rules)
    peer: PeerKind = "go"  # which program presents it (fixturegen.harness.rules.PeerKind)


@dataclass(frozen=True)
class HandshakeCase:
    case: HarnessCase  # its request is the adapter's handshake request
    presentation: Presentation
    skip: str | None  # why this direction cannot carry the case
    proof_set: bool = False  # a three-proof set: a case only handshakes have
    #: A listen case that tells the listener the PeerId it expects (a ``peer-id`` case): run
    #: only where the implementation's listener API takes one (:func:`listener_plan`).
    listener_peer: bool = False

    @property
    def id(self) -> str:
        return self.case.id


LISTENER_EXPECTS_NONE = ("this implementation's listener takes no expected PeerId (its "
                         "inbound upgrade has no such argument): the case needs one")


def listener_plan(plan: Sequence[HandshakeCase], transport: Transport, direction: Direction,
                  expects: Sequence[Transport]) -> list[HandshakeCase]:
    """``plan`` for an implementation whose listener takes an expected PeerId over
    ``expects``: a listen case that names one is kept there and ``skip`` elsewhere."""
    if direction != "listen" or transport in expects:
        return list(plan)
    return [replace(hc, skip=hc.skip or LISTENER_EXPECTS_NONE) if hc.listener_peer else hc
            for hc in plan]


def clock_refreshed(plan: Sequence[HandshakeCase], now: datetime) -> list[HandshakeCase]:
    """A plan with each clock case's certificate (and the key the peer signs with) made again
    for an entry that starts at ``now`` (:mod:`fixturegen.harness.clock`); the request keeps
    what the plan told the adapter."""
    if not any(clock.is_clock(hc.id) for hc in plan):
        return list(plan)
    made = {case.id: clock.mint(case, now) for case in clock.CLOCK_CASES}
    out = []
    for hc in plan:
        m = made.get(hc.id)
        out.append(hc if m is None else replace(hc, presentation=replace(
            hc.presentation, certificates=(m.certificate,), key=m.key)))
    return out


def _ed448(pem: str | None) -> bool:
    """Whether a PKCS#8 PEM key is Ed448 (its AlgorithmIdentifier near the start)."""
    if not pem:
        return False
    body = "".join(line for line in pem.splitlines() if line and not line.startswith("-----"))
    try:
        der = base64.b64decode(body[:64] + "=" * (-len(body[:64]) % 4))
    except ValueError:
        return False
    return ED448_OID in der[:24]


def _peer_for(scheme: int | None, key: str | None) -> PeerKind:
    return "message" if scheme in MESSAGE_SCHEMES or _ed448(key) else "go"


def _fault(vector_id: str) -> str:
    tail = vector_id.rsplit(".", 1)[-1]
    if vector_id.startswith("cv-invalid.") and tail in FAULTS:
        return tail
    return ""  # an honest CertificateVerify (for some, by the key of a bad certificate)


def handshake_cases(corpus: Path, transport: Transport, direction: Direction,
                    timeout: float) -> list[HandshakeCase]:
    """The cases one direction carries, in corpus order (the clock cases first), proof sets
    last."""
    cases = load_corpus(corpus).cases
    cases = clock.with_clock_cases(cases, datetime.now(UTC))
    return handshake_plans(corpus, cases, (transport,), timeout)[transport, direction]


def handshake_plans(corpus: Path, cases: Sequence[HarnessCase],
                    transports: Sequence[Transport], timeout: float
                    ) -> dict[tuple[Transport, Direction], list[HandshakeCase]]:
    """Every transport and direction's cases, from one reading of the corpus (``cases`` is
    what ``load_corpus`` read; the manifest's host keys and the proof sets are read here once)."""
    claimed = _claimed_peer_ids(corpus) | clock.claimed()
    vectors = read_corpus_json(corpus / "transcripts.json", "transcripts", "transcripts file") if (
        corpus / "transcripts.json").exists() else {"proof_sets": []}
    return {(t, d): _plan(corpus, cases, claimed, vectors, t, d, timeout)
            for t in transports for d in DIRECTIONS}


def _plan(corpus: Path, cases: Sequence[HarnessCase], claimed: dict[str, str],
          vectors: dict[str, Any], transport: Transport, direction: Direction,
          timeout: float) -> list[HandshakeCase]:
    fixtures = {c.id: c for c in cases if c.request.kind == "certificate"}
    keys = {c.request.certificates[0]: c.request.certificate_key for c in fixtures.values()
            if c.request.certificates and c.request.certificate_key}
    by_leaf = {c.request.certificates[0]: claimed.get(c.id) for c in fixtures.values()
               if c.request.certificates}
    context = CONTEXT[direction]
    ms = int(timeout * 1000)

    def request(case_id: str, expect: str | None) -> Request:
        return Request(id=case_id, kind="handshake", transport=transport, direction=direction,
                       expect_peer_id=expect if direction == "dial" else None, timeout_ms=ms)

    out: list[HandshakeCase] = []
    for case in cases:
        if clock.is_late(case.id):
            continue  # made when the API entry sends it: no handshake carries it
        req = case.request
        if req.kind == "certificate":
            skip = None
            peer = _peer_for(None, req.certificate_key)
            if req.certificate_key is None:
                skip = "the corpus holds no key for this certificate: the peer cannot sign"
            elif peer == "message" and transport != "tcp":
                skip = ONLY_OVER_TCP
            expect = req.expect_peer_id or case.expected.peer_id or claimed.get(case.id)
            told = request(case.id, expect)
            if direction == "listen" and req.expect_peer_id is not None:
                # A listener that knows whom it expects (a library API that takes it): the
                # entry keeps the case only where the implementation's listener takes one.
                told = told.model_copy(update={"expect_peer_id": req.expect_peer_id})
            out.append(HandshakeCase(replace(case, request=told),
                                     Presentation(tuple(req.certificates), req.certificate_key,
                                                  None, "", peer=peer), skip,
                                     listener_peer=told.expect_peer_id is not None
                                     and direction == "listen"))
        elif req.kind == "certificate_verify" and req.context == context:
            leaf = req.certificates[0] if req.certificates else ""
            out.append(_vector_case(case, request(case.id, by_leaf.get(leaf)), keys, transport))
    try:
        for ps in vectors["proof_sets"]:
            if ps["sender"] != context:
                continue
            cert = fixtures[ps["certificate"]]
            exp = ps["expected"]
            corrupted = ps["corrupted"]
            harness_case = HarnessCase(
                request(ps["id"], claimed.get(ps["certificate"])),
                Expectation(exp["result"], None, exp.get("error")),
                PROOF_SET_RULE,
                f"Three proofs by the {ps['sender']}: "
                + (f"the {corrupted} proof corrupted alone." if corrupted else "all valid."),
                "critical" if corrupted else None, cert.path)
            out.append(HandshakeCase(harness_case, Presentation(
                tuple(cert.request.certificates), cert.request.certificate_key, None,
                "signature-corrupted" if corrupted == "transcript" else ""), None, True))
    except (KeyError, TypeError) as exc:
        raise CorpusError(f"{corpus / 'transcripts.json'} is not a transcripts file: {exc}"
                          ) from exc
    if direction == "listen":
        # No proof at all: the fixture peer dials with an empty Certificate message. A
        # listener that does not ask for one, or does not insist, lets an anonymous dialer in.
        out.append(HandshakeCase(HarnessCase(
            request(NO_CERTIFICATE_ID, None),
            Expectation("invalid", None, "malformed_certificate"), NO_CERTIFICATE_RULE,
            "The dialer (the fixture peer) presents no certificate: its Certificate message is "
            "empty, so it proves no key and no PeerId. The listener must refuse it.",
            "critical", ""), Presentation((), None, None, "no-certificate"), None, True))
    out += _rule_cases(fixtures.get(BASE_FIXTURE), claimed.get(BASE_FIXTURE), transport,
                       direction, request)
    return out


def _rule_cases(base: HarnessCase | None, peer_id: str | None, transport: Transport,
                direction: Direction, request: Callable[[str, str | None], Request]
                ) -> list[HandshakeCase]:
    """The protocol faults this transport and direction carry, each over the base fixture.
    A corpus without it (an imported one, made of an implementation's own certificates)
    carries none: the rules are the generated corpus's cases."""
    if base is None or not base.request.certificate_key:
        return []
    out: list[HandshakeCase] = []
    for fault in PROTOCOL_FAULTS:
        if fault.carried(transport, direction):
            case = HarnessCase(request(fault.id(direction), peer_id),
                               Expectation(fault.result, None, None), fault.rule,
                               fault.description, fault.importance, base.path)
            out.append(HandshakeCase(case, Presentation(
                tuple(base.request.certificates), base.request.certificate_key, None, "",
                fault.protocol, fault.peer), None, True))
    return out


def _claimed_peer_ids(corpus: Path) -> dict[str, str]:
    """The PeerId each fixture's host key stands for (its protobuf, hashed as the spec says)."""
    manifest = read_corpus_json(corpus / "manifest.json", "manifest", "fixturegen manifest")
    out: dict[str, str] = {}
    for fx in manifest.get("fixtures", []):
        hexed = (fx.get("host_key") or {}).get("public_key_protobuf_hex")
        if isinstance(hexed, str):
            try:
                out[fx["id"]] = peer_id_base58(bytes.fromhex(hexed))
            except (ValueError, KeyError):
                continue
    return out


def _vector_case(case: HarnessCase, request: Request, keys: dict[str, str],
                 transport: Transport) -> HandshakeCase:
    certificate = case.request.certificates
    key = keys.get(certificate[0]) if certificate else None  # the vector's leaf is a fixture's
    scheme = case.request.signature_scheme
    peer = _peer_for(scheme, key)
    skip = None if key else "the corpus holds no key for this certificate: the peer cannot sign"
    if skip is None and peer == "message" and transport != "tcp":
        skip = ONLY_OVER_TCP
    return HandshakeCase(replace(case, request=request), Presentation(
        tuple(certificate), key, scheme, _fault(case.id), peer=peer), skip)


def message_peer_argv(peer_argv: Sequence[str]) -> list[str] | None:
    """The message-level peer's command, found beside the fixture peer whose command is
    ``peer_argv`` (None when it is not built there: its cases are then ``skip``)."""
    if not peer_argv:
        return None
    base = Path(peer_argv[0]).parent.parent
    argv = [str(base / part) for part in MESSAGE_PEER]
    return argv if (base / MESSAGE_PEER_BUILT).is_file() else None


class PeerError(Exception):
    """The fixture peer cannot be started (not built)."""


class FixturePeer:
    """The fixture peer process, as the driver's partner: one peer request per case."""

    def __init__(self, argv: Sequence[str], cases: Sequence[HandshakeCase],
                 transport: Transport, direction: Direction, timeout: float,
                 message_argv: Sequence[str] | None = None) -> None:
        self.argvs: dict[PeerKind, list[str] | None] = {
            "go": list(argv), "message": list(message_argv) if message_argv else None}
        self.cases = {c.id: c for c in cases}
        self.transport, self.direction, self.timeout = transport, direction, timeout
        #: Each peer's process, started the first time a case needs it.
        self.procs: dict[PeerKind, driver._Process | None] = {"go": None, "message": None}
        self.current: PeerKind = "go"  # the peer of the case that runs
        self.address_sent = False
        self.early: PeerEvent | None = None  # the peer's done, seen while the adapter waits
        self.cancelled = False
        self.wake: Callable[[], None] | None = None

    def attach(self, wake: Callable[[], None]) -> None:
        self.wake = wake

    def _line(self) -> None:
        if self.wake is not None:
            self.wake()

    def _start(self) -> driver._Process:
        proc = self.procs[self.current]
        if proc is None:
            argv = self.argvs[self.current]
            assert argv is not None  # before() skips a case whose peer is not built
            name = "the fixture peer" if self.current == "go" else "the message-level peer"
            try:
                proc = driver._Process(argv, None, None, on_line=self._line)
            except driver.AdapterStartError as exc:
                raise PeerError(f"{name}: {exc}") from exc
            self.procs[self.current] = proc
        return proc

    def _send(self, message: PeerRequest | PeerAddress | PeerStop) -> bool:
        return self._start().send((message.model_dump_json() + "\n").encode())

    def _event(self, case: str, limit: float, *, keep: bool = False) -> PeerEvent | None:
        """The peer's next event for ``case``, or None (the peer is then restarted, unless
        ``keep``: a look that found nothing yet)."""
        proc = self._start()
        deadline = time.monotonic() + limit
        while True:
            try:
                raw = proc.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                if keep:
                    return None
                break
            if not isinstance(raw, bytes):
                break  # it exited
            with contextlib.suppress(ValueError, ValidationError):
                event = PeerEvent.model_validate_json(raw)
                if event.id == case:
                    return event
        self._restart()
        return None

    def before(self, request: Request) -> Request | driver.Answer:
        hc = self.cases[request.id]
        if hc.skip is not None:
            return driver.Answer(request.id, "skip", None, hc.skip, None, 0.0)
        p = hc.presentation
        if self.argvs[p.peer] is None:
            return driver.Answer(request.id, "skip", None, MESSAGE_PEER_MISSING, None, 0.0)
        self.current = p.peer
        self.address_sent, self.early, self.cancelled = False, None, False
        sent = self._send(PeerRequest(
            id=request.id, transport=self.transport,
            role="server" if self.direction == "dial" else "client",
            certificates=list(p.certificates), key=p.key, scheme=p.scheme,
            fault=p.fault, protocol=p.protocol, timeout_ms=int(self.timeout * 1000)))
        event = self._event(request.id, 10.0) if sent else None
        if event is None:
            return driver.Answer(request.id, None, None, "the fixture peer did not answer",
                                 "error", 0.0)
        if event.event == "done":
            return driver.Answer(request.id, "skip", None,
                                 f"the fixture peer cannot present this case: {event.error}",
                                 None, 0.0, peer=event)
        if self.direction == "dial":
            return request.model_copy(update={"address": event.address})
        return request

    def listening(self, request: Request, address: str) -> None:
        self.address_sent = True
        self._send(PeerAddress(id=request.id, address=address))

    def waiting(self, request: Request) -> bytes | None:
        """A QUIC listener may drop a failed handshake without a word (go-libp2p does): once
        the peer's side is over, tell the adapter, which then stops waiting for a connection
        and answers that it accepted none. When the peer's side says the implementation
        refused it (its handshake failed, or the implementation closed it with an error), no
        connection is coming and the adapter answers at once (``grace_ms`` 0); when the peer
        completed cleanly, the implementation's listener may still hand the connection over,
        so the adapter gives it ``CANCEL_GRACE_MS``."""
        if self.cancelled or self.direction != "listen" or self.transport != "quic":
            return None
        if self.early is None:
            self.early = self._event(request.id, 0.0, keep=True)
        if self.early is None or self.early.event != "done":
            self.early = None
            return None
        self.cancelled = True
        said = f"{self.early.outcome}: {self.early.error or 'no error'}"
        refused = self.early.outcome != "complete" or self.early.error is not None
        return (Cancel(id=request.id, cancel=f"the fixture peer's side ended ({said})",
                       grace_ms=0 if refused else CANCEL_GRACE_MS).model_dump_json()
                + "\n").encode()

    def after(self, request: Request, answer: driver.Answer) -> driver.Answer:
        if self.direction == "listen" and not self.address_sent:
            self._send(PeerAddress(id=request.id, address=""))  # the peer gives up at once
        event = self.early
        if event is None:  # end whatever it still waits for
            self._send(PeerStop(id=request.id, stop=True, verdict=answer.verdict))  # type: ignore[arg-type]
            event = self._event(request.id, self.timeout + 5.0)
        if event is None:
            return answer
        if event.outcome == "not_offered":
            said = f"; the implementation said: {answer.error}" if answer.error else ""
            return replace(answer, verdict="skip", failure=None, peer_id=None,
                           error=f"{event.error}{said}", peer=event)
        return replace(answer, peer=event)

    def _restart(self) -> None:
        """End the running case's peer (its next case starts it again)."""
        proc = self.procs[self.current]
        if proc is not None:
            proc.close()
            self.procs[self.current] = None

    def close(self) -> None:
        for kind, proc in self.procs.items():
            if proc is not None:
                proc.close()
                self.procs[kind] = None
