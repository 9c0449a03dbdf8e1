"""The interop stage: certificates made by each implementation, verified by every other.

1. **Make.** Each implementation gets ``generate`` requests, ``PER_TYPE`` for every host key
   type; its library's own certificate generator answers with a chain, the certificate key and
   the PeerId it announces. A reply that is not a certificate (bad base64, not one DER
   SEQUENCE, over the size limits) is an ``error`` attempt, as are hangs and crashes.
2. **Check.** The reference verifier checks every certificate against the maker's PeerId; then
   every implementation (its maker included) gets it as a ``certificate`` request expecting
   that PeerId. Each cell is an outcome against the maker's claim (the certificate is valid and
   stands for that PeerId): a rejection is an interop finding, and a certificate a live
   implementation made that the reference verifier rejects is a bug in fixturegen, unless
   the sender's judgement says otherwise (next).
2b. **Judge the sender.** Beside its verdict, the reference judges each certificate as a
   sender (:mod:`fixturegen.verify.sender`): every property that entitles a receiver to refuse
   it (a critical extension other than libp2p's, an empty issuer, a GeneralizedTime before
   2050 ...) is a sender flag, kept in ``sender_flags``. The reports blame a refusal on the
   maker when a sender flag can explain it, any other refusal on the verifier
   (:func:`fixturegen.harness.report.blame`).
3. **By handshake** where there is no API: an implementation that answers every certificate
   request with ``skip`` (litep2p: its certificate module is private) checks each certificate
   whose key came with it in a real handshake instead, dialling the fixture peer that presents
   it and expecting the maker's PeerId (over the first transport it has; the run must have the
   fixture peer, as ``--mode handshake`` or ``all`` does). Its cells say so in their error
   text when they reject; a certificate that came without its key stays ``skip``.

The certificates are kept under the reports folder, ``peer-made/ID.der`` (a chain's further
certificates ``ID.2.der`` ...), their keys ``peer-made/ID.pem``.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fixturegen.harness import driver
from fixturegen.harness.compare import outcome
from fixturegen.harness.handshake import HandshakeCase, Presentation
from fixturegen.harness.protocol import HOST_KEY_TYPES, HostKeyType, Request
from fixturegen.harness.requests import Expectation, HarnessCase
from fixturegen.harness.results import (
    CellResult,
    GenerateAttempt,
    PeerMade,
    PeerMadeCertificate,
    PeerVerdict,
    SenderNote,
)
from fixturegen.harness.session import Target, run_handshake
from fixturegen.verify.der import (
    MAX_CERTIFICATE_BYTES,
    MAX_CHAIN_CERTIFICATES,
    DERError,
    tlv,
)
from fixturegen.verify.sender import judge
from fixturegen.verify.verifier import Verifier

PER_TYPE = 2
FOLDER = "peer-made"
MAX_KEY_TEXT = 64 * 1024


@dataclass(frozen=True)
class Made:
    id: str
    maker: str
    host_key_type: HostKeyType
    chain: tuple[bytes, ...]
    key: str | None
    peer_id: str


def generate_requests(per_type: int = PER_TYPE) -> list[tuple[HostKeyType, Request]]:
    return [(kind, Request(id=f"generate.{kind}.{n}", kind="generate", host_key_type=kind))
            for kind in HOST_KEY_TYPES for n in range(1, per_type + 1)]


def _certificate(data: object) -> bytes:
    """One base64 DER certificate from a reply, or ValueError saying why not."""
    if not isinstance(data, str) or len(data) > 2 * MAX_CERTIFICATE_BYTES:
        raise ValueError("a certificate is not a base64 string of at most "
                         f"{MAX_CERTIFICATE_BYTES} bytes")
    try:
        der = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a certificate is not base64") from None
    try:
        tag, _, end = tlv(der, 0, len(der))
    except DERError as exc:
        raise ValueError(f"a certificate is not DER: {exc}") from None
    if tag != 0x30 or end != len(der) or len(der) > MAX_CERTIFICATE_BYTES:
        raise ValueError("a certificate is not one DER SEQUENCE")
    return der


def made_from(maker: str, kind: HostKeyType, number: int, answer: driver.Answer
              ) -> tuple[GenerateAttempt, Made | None]:
    """One ``generate`` answer as an attempt, and the certificate it made (None: no
    certificate; the attempt says why). The mutation campaigns read their answers with it too."""
    def attempt(result: str, error: str | None, cert: str | None = None) -> GenerateAttempt:
        return GenerateAttempt(maker=maker, host_key_type=kind, outcome=result,  # type: ignore[arg-type]
                               error=error, certificate=cert)

    if answer.failure is not None:
        return attempt(answer.failure, answer.error), None
    if answer.verdict != "accept":
        return attempt("skip" if answer.verdict == "skip" else "reject", answer.error), None
    reply = answer.reply
    assert reply is not None
    try:
        chain = reply.certificates or []
        if not chain or len(chain) > MAX_CHAIN_CERTIFICATES:
            raise ValueError(f"the reply holds {len(chain)} certificates "
                             f"(1 to {MAX_CHAIN_CERTIFICATES} expected)")
        ders = tuple(_certificate(c) for c in chain)
        if not reply.peer_id:
            raise ValueError("the reply names no PeerId")
        key = reply.certificate_key
        if key is not None and (len(key) > MAX_KEY_TEXT or "-----BEGIN" not in key):
            raise ValueError("the certificate key is not a PEM text")
    except ValueError as exc:
        return attempt("error", f"not a certificate: {exc}"), None
    ident = f"{maker}.{kind}.{number}"
    return attempt("made", None, ident), Made(ident, maker, kind, ders, key, reply.peer_id)


def make_all(targets: Sequence[Target], *, timeout: float, startup: float,
             per_type: int = PER_TYPE) -> tuple[list[GenerateAttempt], list[Made]]:
    """Ask every implementation for certificates; every failure is an attempt's outcome."""
    attempts: list[GenerateAttempt] = []
    made: list[Made] = []
    plan = generate_requests(per_type)
    for target in targets:
        try:
            answers = driver.run(target.argv, [r for _, r in plan], timeout=timeout,
                                 startup=startup)
        except driver.AdapterStartError as exc:
            attempts += [GenerateAttempt(maker=target.name, host_key_type=kind, outcome="crash",
                                         error=str(exc), certificate=None) for kind, _ in plan]
            continue
        for (kind, request), answer in zip(plan, answers, strict=True):
            number = int(request.id.rsplit(".", 1)[1])
            attempt, cert = made_from(target.name, kind, number, answer)
            attempts.append(attempt)
            if cert is not None:
                made.append(cert)
    return attempts, made


def _write(folder: Path, made: Sequence[Made]) -> dict[str, str]:
    """Keep the certificates under ``folder/peer-made``; the leaf path of each, relative."""
    target = folder / FOLDER
    if target.is_symlink():
        raise OSError(f"{target} is a symbolic link")
    target.mkdir(exist_ok=True)
    for old in target.iterdir():  # the previous run's certificates
        if old.is_file() and old.suffix in (".der", ".pem"):
            old.unlink()
    paths: dict[str, str] = {}
    for cert in made:
        for index, der in enumerate(cert.chain):
            name = f"{cert.id}.der" if index == 0 else f"{cert.id}.{index + 1}.der"
            (target / name).write_bytes(der)
        if cert.key is not None:
            fd = os.open(target / f"{cert.id}.pem", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(cert.key)
        paths[cert.id] = f"{FOLDER}/{cert.id}.der"
    return paths


def _by_handshake(target: Target, made: Sequence[Made], requests: Sequence[Request],
                  answers: list[driver.Answer], peer_argv: Sequence[str], *, timeout: float,
                  startup: float) -> list[driver.Answer]:
    """For an implementation without an API (every answer a skip): each certificate whose key
    came with it, checked by dialling the fixture peer that presents it."""
    keyed = [(i, m) for i, m in enumerate(made) if m.key is not None]
    if not (peer_argv and target.transports and keyed and answers
            and all(a.verdict == "skip" for a in answers)):
        return answers
    transport = target.transports[0]
    claim = "the maker's certificate stands for the maker's PeerId"
    cases = [HandshakeCase(
        HarnessCase(Request(id=m.id, kind="handshake", transport=transport, direction="dial",
                            expect_peer_id=m.peer_id, timeout_ms=int(timeout * 1000)),
                    Expectation("valid", m.peer_id, None), claim, f"made by {m.maker}", None,
                    f"{FOLDER}/{m.id}.der"),
        Presentation(tuple(requests[i].certificates or ()), m.key, None, ""), None)
        for i, m in keyed]
    entry = run_handshake(target, peer_argv, cases, transport, "dial",
                          timeout=timeout, startup=startup, stderr_path=None)
    out = list(answers)
    for (i, _), case in zip(keyed, entry.cases, strict=True):
        error = f"{transport} dial handshake: {case.error}" if case.error else None
        failure = case.outcome if case.outcome in ("hang", "crash", "error") else None
        out[i] = driver.Answer(case.id, case.verdict, case.peer_id, error, failure,
                               case.seconds)
    return out


def check_all(targets: Sequence[Target], made: Sequence[Made], folder: Path, *, timeout: float,
              startup: float, peer_argv: Sequence[str] = ()) -> list[PeerMadeCertificate]:
    """The reference verifier and every implementation over every peer-made certificate
    (by handshake where an implementation has no API and the fixture peer is given)."""
    paths = _write(folder, made)
    reference = Verifier()
    requests = [Request(id=m.id, kind="certificate",
                        certificates=[base64.b64encode(d).decode() for d in m.chain],
                        expect_peer_id=m.peer_id, certificate_key=m.key) for m in made]
    cells: dict[str, dict[str, CellResult]] = {m.id: {} for m in made}
    for target in targets:
        answers: list[driver.Answer]
        try:
            answers = driver.run(target.argv, requests, timeout=timeout, startup=startup)
        except driver.AdapterStartError as exc:
            answers = [driver.Answer(r.id, None, None, str(exc), "crash", 0.0) for r in requests]
        answers = _by_handshake(target, made, requests, answers, peer_argv, timeout=timeout,
                                startup=startup)
        for cert, answer in zip(made, answers, strict=True):
            claim = Expectation("valid", cert.peer_id, None)
            cells[cert.id][target.name] = CellResult(
                verdict=answer.verdict,  # type: ignore[arg-type]
                error=answer.error, peer_id=answer.peer_id,
                outcome=outcome(claim, answer.verdict, answer.peer_id, answer.failure))
    out: list[PeerMadeCertificate] = []
    now = datetime.now(UTC)
    for cert in made:
        verdict = reference.verify(list(cert.chain), expect_peer_id=cert.peer_id, at=now)
        out.append(PeerMadeCertificate(
            id=cert.id, maker=cert.maker, host_key_type=cert.host_key_type, path=paths[cert.id],
            peer_id=cert.peer_id,
            reference=PeerVerdict(verdict="accept" if verdict.accepted else "reject",
                                  error=verdict.error, peer_id=verdict.peer_id),
            verifiers=cells[cert.id], sender_flags=sender_notes(cert.chain, now)))
    return out


def sender_notes(chain: Sequence[bytes], at: datetime) -> list[SenderNote]:
    """The sender's judgement on a chain an implementation made, as results.json keeps it."""
    return [SenderNote(flag=f.flag, detail=f.detail) for f in judge(chain, at=at)]


def run_interop(targets: Sequence[Target], folder: Path, *, timeout: float, startup: float,
                per_type: int = PER_TYPE, peer_argv: Sequence[str] = (),
                makers: Sequence[str] | None = None) -> PeerMade:
    """Every target (or only those ``makers`` names) makes certificates; every target checks
    every one of them."""
    making = [t for t in targets if makers is None or t.name in makers]
    attempts, made = make_all(making, timeout=timeout, startup=startup, per_type=per_type)
    return PeerMade(certificates=check_all(targets, made, folder, timeout=timeout,
                                           startup=startup, peer_argv=peer_argv),
                    attempts=attempts)
