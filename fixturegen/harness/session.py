"""One harness run: each implementation over every case, into a ResultsFile."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixturegen import __version__
from fixturegen.harness import driver
from fixturegen.harness.compare import OUTCOMES, outcome
from fixturegen.harness.handshake import Direction, FixturePeer, HandshakeCase, Transport
from fixturegen.harness.requests import HarnessCase
from fixturegen.harness.results import (
    SCHEMA_VERSION,
    CaseResult,
    CatalogueEntry,
    Implementation,
    Known,
    PeerMade,
    PeerSide,
    ResultsFile,
)


@dataclass(frozen=True)
class Target:
    """An implementation to run: a shipped adapter, or anyone's command."""

    name: str
    package: str
    version: str
    verifier: str
    argv: tuple[str, ...]
    handshake: str = ""  # the secure-channel upgrade its handshake mode runs ("": none)
    transports: tuple[Transport, ...] = ()  # the transports its handshake mode has


def catalogue(cases: Sequence[HarnessCase]) -> list[CatalogueEntry]:
    """The catalogue entries of ``cases`` (a handshake-only case is a proof set)."""
    return [CatalogueEntry(id=c.id, kind="proof_set" if c.request.kind == "handshake"
                           else c.request.kind,  # type: ignore[arg-type]
                           expected=c.expected.result,  # type: ignore[arg-type]
                           expected_error=c.expected.error, expected_peer_id=c.expected.peer_id,
                           rule=c.rule, description=c.description,
                           importance=c.importance,  # type: ignore[arg-type]
                           path=c.path) for c in cases]


def run_target(target: Target, cases: Sequence[HarnessCase], *, timeout: float,
               startup: float, stderr_path: Path | None, known: Known = frozenset(),
               progress: Callable[[driver.Answer], None] | None = None) -> Implementation:
    """Run one implementation; raises ``driver.AdapterStartError`` if it cannot start."""
    start = time.perf_counter()
    answers = driver.run(target.argv, [c.request for c in cases], timeout=timeout,
                         startup=startup, stderr_path=stderr_path, progress=progress)
    seconds = time.perf_counter() - start
    results: list[CaseResult] = []
    for case, answer in zip(cases, answers, strict=True):
        result = outcome(case.expected, answer.verdict, answer.peer_id, answer.failure)
        results.append(CaseResult(id=case.id, verdict=answer.verdict,  # type: ignore[arg-type]
                                  peer_id=answer.peer_id, error=answer.error, outcome=result,
                                  known=(target.name, case.id) in known,
                                  seconds=round(answer.seconds, 6)))
    counts = Counter(r.outcome for r in results)
    return Implementation(name=target.name, package=target.package, version=target.version,
                          verifier=target.verifier, command=list(target.argv),
                          seconds=round(seconds, 3),
                          counts={o: counts.get(o, 0) for o in OUTCOMES}, cases=results)


def run_handshake(target: Target, peer_argv: Sequence[str], cases: Sequence[HandshakeCase],
                  transport: Transport, direction: Direction, *, timeout: float,
                  startup: float, stderr_path: Path | None, known: Known = frozenset(),
                  progress: Callable[[driver.Answer], None] | None = None) -> Implementation:
    """Run one implementation's handshakes in one direction against the fixture peer. The
    adapter and the peer get three quarters of ``timeout`` for a handshake, so that a library
    that gives up answers ``reject`` before the driver calls it ``hang``."""
    inner = 0.75 * timeout
    requests = [c.case.request.model_copy(update={"timeout_ms": int(inner * 1000)})
                for c in cases]
    peer = FixturePeer(peer_argv, cases, transport, direction, inner)
    start = time.perf_counter()
    try:
        answers = driver.run(target.argv, requests, timeout=timeout, startup=startup,
                             stderr_path=stderr_path, progress=progress, partner=peer)
    finally:
        peer.close()
    seconds = time.perf_counter() - start
    results: list[CaseResult] = []
    label = f"{target.name}@{transport}-{direction}"
    for hc, answer in zip(cases, answers, strict=True):
        result = outcome(hc.case.expected, answer.verdict, answer.peer_id, answer.failure)
        side = None
        if answer.peer is not None and answer.peer.outcome is not None:
            side = PeerSide(outcome=answer.peer.outcome, error=answer.peer.error,
                            scheme=answer.peer.sent, seconds=round(answer.peer.seconds, 6),
                            cpu_seconds=round(answer.peer.cpu_seconds, 6))
        results.append(CaseResult(id=hc.id, verdict=answer.verdict,  # type: ignore[arg-type]
                                  peer_id=answer.peer_id, error=answer.error, outcome=result,
                                  known=(label, hc.id) in known,
                                  seconds=round(answer.seconds, 6), peer=side))
    counts = Counter(r.outcome for r in results)
    return Implementation(name=target.name, mode="handshake", transport=transport,
                          direction=direction, package=target.package, version=target.version,
                          verifier=target.handshake or target.verifier,
                          command=list(target.argv), seconds=round(seconds, 3),
                          counts={o: counts.get(o, 0) for o in OUTCOMES}, cases=results)


def results_file(corpus: Path, seed: str | None, cases: Sequence[HarnessCase],
                 implementations: list[Implementation], peer_made: PeerMade | None = None
                 ) -> ResultsFile:
    return ResultsFile(schema_version=SCHEMA_VERSION, generator=f"fixturegen {__version__}",
                       corpus=str(corpus), seed=seed, catalogue=catalogue(cases),
                       implementations=implementations, peer_made=peer_made)


def mark_known(results: ResultsFile, known: Known) -> ResultsFile:
    """The same results with ``known`` set from a (new) known list."""
    impls = [impl.model_copy(update={"cases": [
        case.model_copy(update={"known": (impl.label, case.id) in known}) for case in impl.cases]})
        for impl in results.implementations]
    return results.model_copy(update={"implementations": impls})
