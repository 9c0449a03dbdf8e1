"""One harness run: each implementation over every case, into a ResultsFile."""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from fixturegen import __version__
from fixturegen.harness import clock, driver
from fixturegen.harness.compare import OUTCOMES, outcome
from fixturegen.harness.handshake import (
    DIRECTIONS,
    FixturePeer,
    HandshakeCase,
    PeerError,
    clock_refreshed,
    handshake_plans,
    listener_plan,
    message_peer_argv,
)
from fixturegen.harness.protocol import Request
from fixturegen.harness.reach import reachability
from fixturegen.harness.reasons import ReasonTable, reason_of
from fixturegen.harness.requests import HarnessCase, load_corpus
from fixturegen.harness.results import (
    SCHEMA_VERSION,
    CaseResult,
    CatalogueEntry,
    Implementation,
    Known,
    PeerMade,
    PeerSide,
    Presented,
    ResultsFile,
    said,
)
from fixturegen.harness.rules import BASE_FIXTURE, Direction, Transport
from fixturegen.harness.rules import PREFIX as RULE_PREFIX
from fixturegen.verify.verifier import Verifier


class PresentedJudge:
    """The reference verdict on each certificate chain an implementation presented to the
    fixture peer, once per distinct chain (an implementation keeps its certificate, or makes
    one per connection)."""

    def __init__(self, limit: int = 4096) -> None:
        self._verifier = Verifier()
        self._seen: dict[tuple[bytes, ...], Presented] = {}
        self._limit = limit

    def __call__(self, chain: Sequence[bytes] | None) -> Presented | None:
        if not chain:
            return None
        key = tuple(chain)
        got = self._seen.get(key)
        if got is None:
            v = self._verifier.verify(list(chain))
            got = Presented(accepted=v.accepted, error=None if v.error is None else str(v.error),
                            peer_id=v.peer_id, flags=[str(f) for f in v.flags])
            if len(self._seen) >= self._limit:
                self._seen.clear()
            self._seen[key] = got
        return got


#: Cases of one handshake entry that a hang, crash or error sends round once more (more
#: failures than this: the adapter is broken, and a second round would only double the wait).
RETRIED_CASES = 16


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
    notes: tuple[str, ...] = ()  # what this build leaves out, and why (another version's shims)
    env: tuple[tuple[str, str], ...] = ()  # set in the adapter's environment (a mutant's switch)
    #: Its reviewed reason table (fixturegen.harness.reasons): None, no mapped reasons and no
    #: ``wrong_reason``.
    reasons: ReasonTable | None = None
    #: False: it has no API mode (its certificate check is not callable: litep2p), so a run
    #: has no API entry for it, only handshake entries.
    api: bool = True
    #: The transports whose listener takes the PeerId it expects (``Adapter.listener_expects``):
    #: elsewhere a listen case that names one is ``skip``.
    listener_expects: tuple[Transport, ...] = ()


@dataclass(frozen=True)
class Corpus:
    """A corpus read once for a run: the API cases, every transport and direction's handshake
    cases, and the catalogue of both (proof sets are cases only handshakes carry)."""

    path: Path
    seed: str | None
    api: list[HarnessCase]
    plans: dict[tuple[Transport, Direction], list[HandshakeCase]]
    catalogue: str | None = None  # the catalogue version the corpus was drawn from

    @property
    def cases(self) -> list[HarnessCase]:
        proof_sets = {hc.id: hc.case for plan in self.plans.values() for hc in plan
                      if hc.proof_set}
        return self.api + list(proof_sets.values())


def read_corpus(path: Path, *, transcripts: bool, handshakes: bool, timeout: float) -> Corpus:
    """Raises ``CorpusError``."""
    seed, cases, catalogue = load_corpus(path, transcripts=transcripts)
    cases = clock.with_clock_cases(cases, datetime.now(UTC))
    transports: tuple[Transport, ...] = ("tcp", "quic") if handshakes else ()
    return Corpus(path, seed, list(cases), handshake_plans(path, cases, transports, timeout),
                  catalogue)


def entries(target: Target, corpus: Corpus, mode: str
            ) -> list[tuple[str, tuple[Transport, Direction] | None]]:
    """The entries ``mode`` runs for ``target``: its label and (transport, direction), or None
    for the API entry."""
    runs: list[tuple[str, tuple[Transport, Direction] | None]] = []
    if mode != "handshake" and target.api:
        runs.append((target.name, None))
    if mode != "api":
        runs += [(f"{target.name}@{t}-{d}", (t, d)) for t in target.transports
                 for d in DIRECTIONS if (t, d) in corpus.plans]
    return runs


def run_entries(target: Target, corpus: Corpus, mode: str, folder: Path, *,
                peer_argv: Sequence[str], timeout: float, startup: float,
                known: Known = frozenset(), jobs: int = 1,
                say: Callable[[str], None] | None = None,
                done: Callable[[Implementation], None] | None = None,
                progress: Callable[[str, driver.Answer], None] | None = None,
                ) -> tuple[list[Implementation], str | None]:
    """Every entry of ``target`` in ``mode``, in order; stops at an adapter that cannot start.
    Returns the entries run and, if one was broken (could not start, or answered no case), why
    (one line). ``done`` is called after each entry, ``progress`` with each answer and its
    entry's label (an exception it raises ends the run, the processes stopped)."""
    ran: list[Implementation] = []
    broken: str | None = None
    for label, way in entries(target, corpus, mode):
        log = folder / f"{label}.stderr.log"
        told = None if progress is None else functools.partial(progress, label)
        try:
            if way is None:
                if say is not None:
                    say(f"harness: {label} {target.version}: {len(corpus.api)} cases")
                entry = run_target(target, clock.refreshed(corpus.api, datetime.now(UTC)),
                                   timeout=timeout, startup=startup,
                                   stderr_path=log, known=known, jobs=jobs, progress=told)
            else:
                plan = listener_plan(clock_refreshed(corpus.plans[way], datetime.now(UTC)),
                                     *way, target.listener_expects)
                if say is not None:
                    say(f"harness: {label} {target.version}: {len(plan)} handshakes")
                entry = run_handshake(target, peer_argv, plan, *way, timeout=timeout,
                                      startup=startup, stderr_path=log, known=known, jobs=jobs,
                                      progress=told)
        except (driver.AdapterStartError, PeerError) as exc:
            return ran, f"{label}: {exc}"
        ran.append(entry)
        if entry.cases and all(c.outcome in ("hang", "crash", "error") for c in entry.cases):
            broken = f"{label}: answered no case (see {log})"
        if done is not None:
            done(entry)
    return ran, broken


def catalogue(cases: Sequence[HarnessCase]) -> list[CatalogueEntry]:
    """The catalogue entries of ``cases`` (a handshake-only case is a proof set, or a rule of
    the handshake broken: :mod:`fixturegen.harness.rules`)."""
    return [CatalogueEntry(id=c.id, kind=_kind(c),

                           expected=c.expected.result,  # type: ignore[arg-type]
                           expected_error=c.expected.error, expected_peer_id=c.expected.peer_id,
                           rule=c.rule, description=c.description,
                           importance=c.importance,  # type: ignore[arg-type]
                           path=c.path, family=c.family, host_key_type=c.host_key_type)
            for c in cases]


def _kind(case: HarnessCase) -> Literal["certificate", "certificate_verify", "proof_set", "rule"]:
    if case.request.kind == "handshake":
        return "rule" if case.id.startswith(RULE_PREFIX) else "proof_set"
    return case.request.kind  # type: ignore[return-value]


def firsts(cases: Sequence[HarnessCase], every: Sequence[HarnessCase]
           ) -> dict[str, HarnessCase]:
    """For each of ``cases`` checked after another (the manifest's ``after``), that other case,
    found among ``every`` (the whole corpus: a run of one case still sends its first)."""
    by_id = {c.id: c for c in every}
    return {c.id: by_id[c.after] for c in cases if c.after and c.after in by_id}


def run_target(target: Target, cases: Sequence[HarnessCase], *, timeout: float,
               startup: float, stderr_path: Path | None, known: Known = frozenset(),
               progress: Callable[[driver.Answer], None] | None = None,
               jobs: int = 1, every: Sequence[HarnessCase] | None = None) -> Implementation:
    """Run one implementation; raises ``driver.AdapterStartError`` if it cannot start. A case
    checked after another goes to the same adapter process just after it (found among
    ``every``, by default ``cases``)."""
    start = time.perf_counter()
    before = {k: c.request for k, c in firsts(cases, every or cases).items()}
    late: dict[str, driver.Late] = {c.id: functools.partial(clock.late_request, c.id)
                                    for c in cases if clock.is_late(c.id)}
    warmup = next((c.request for c in (every or cases) if c.id == BASE_FIXTURE), None)
    answers = driver.run_jobs(target.argv, [c.request for c in cases], jobs=jobs,
                              timeout=timeout, startup=startup, stderr_path=stderr_path,
                              progress=progress, env=dict(target.env), firsts=before,
                              late=late, warmup=warmup if late else None)
    seconds = time.perf_counter() - start
    results: list[CaseResult] = []
    for case, answer in zip(cases, answers, strict=True):
        reason = reason_of(target.reasons, answer.verdict, answer.error)
        result = outcome(case.expected, answer.verdict, answer.peer_id, answer.failure, reason)
        results.append(CaseResult(id=case.id, verdict=answer.verdict,  # type: ignore[arg-type]
                                  peer_id=answer.peer_id, error=said(answer.error), reason=reason,
                                  outcome=result,
                                  known=(target.name, case.id) in known,
                                  seconds=round(answer.seconds, 6),
                                  cpu_seconds=_cpu(answer)))
    counts = Counter(r.outcome for r in results)
    return Implementation(name=target.name, package=target.package, version=target.version,
                          verifier=target.verifier, command=list(target.argv),
                          seconds=round(seconds, 3),
                          counts={o: counts.get(o, 0) for o in OUTCOMES}, cases=results)


def _cpu(answer: driver.Answer) -> float | None:
    """The CPU time the adapter measured for its answer (None: it did not say)."""
    if answer.reply is None or answer.reply.cpu_seconds is None:
        return None
    return round(answer.reply.cpu_seconds, 6)


def run_handshake(target: Target, peer_argv: Sequence[str], cases: Sequence[HandshakeCase],
                  transport: Transport, direction: Direction, *, timeout: float,
                  startup: float, stderr_path: Path | None, known: Known = frozenset(),
                  progress: Callable[[driver.Answer], None] | None = None,
                  jobs: int = 1, every: Sequence[HandshakeCase] | None = None
                  ) -> Implementation:
    """Run one implementation's handshakes in one direction against the fixture peer. The
    adapter and the peer get three quarters of ``timeout`` for a handshake, so that a library
    that gives up answers ``reject`` before the driver calls it ``hang``. With ``jobs`` > 1,
    that many adapter processes, each with its own fixture peer, take turns through the
    cases, several handshakes in flight at once. A case checked after another is a handshake
    just after that case's handshake, with the same adapter process (the other found among
    ``every``, by default ``cases``)."""
    inner = 0.75 * timeout

    def timed(hc: HandshakeCase) -> Request:
        return hc.case.request.model_copy(update={"timeout_ms": int(inner * 1000)})

    requests = [timed(c) for c in cases]
    message_argv = message_peer_argv(peer_argv)
    pool = {hc.id: hc for hc in (every or cases)}
    earlier = {k: pool[c.id] for k, c in firsts([hc.case for hc in cases],
                                                 [hc.case for hc in pool.values()]).items()}
    before = {k: timed(hc) for k, hc in earlier.items()}
    ids = {hc.id for hc in cases}
    peer_cases = [*cases, *{hc.id: hc for hc in earlier.values() if hc.id not in ids}.values()]
    start = time.perf_counter()
    answers = driver.run_jobs(
        target.argv, requests, jobs=jobs, timeout=timeout, startup=startup,
        stderr_path=stderr_path, progress=progress, env=dict(target.env), firsts=before,
        partner=lambda: FixturePeer(peer_argv, peer_cases, transport, direction, inner,
                                    message_argv))
    first: dict[int, str] = {}
    again = [i for i, a in enumerate(answers) if a.failure is not None]
    if 0 < len(again) <= RETRIED_CASES:
        # Real sockets on a loaded machine: a failure is confirmed before it is reported.
        retry_log = None if stderr_path is None else stderr_path.with_name(
            stderr_path.name.replace(".stderr.log", "") + ".retry.stderr.log")
        second = driver.run_jobs(
            target.argv, [requests[i] for i in again], jobs=1, timeout=timeout,
            startup=startup, stderr_path=retry_log, env=dict(target.env), firsts=before,
            partner=lambda: FixturePeer(
                peer_argv, clock_refreshed([*(cases[i] for i in again), *earlier.values()],
                                           datetime.now(UTC)),
                transport, direction, inner, message_argv))
        for i, answer in zip(again, second, strict=True):
            first[i] = f"{answers[i].failure}: {answers[i].error}"
            answers[i] = answer
    seconds = time.perf_counter() - start
    results: list[CaseResult] = []
    label = f"{target.name}@{transport}-{direction}"
    judge = PresentedJudge()
    for n, (hc, answer) in enumerate(zip(cases, answers, strict=True)):
        reason = reason_of(target.reasons, answer.verdict, answer.error)
        result = outcome(hc.case.expected, answer.verdict, answer.peer_id, answer.failure,
                         reason)
        side = None
        if answer.peer is not None and answer.peer.outcome is not None:
            side = PeerSide(outcome=answer.peer.outcome, error=answer.peer.error,
                            scheme=answer.peer.sent, version=answer.peer.version,
                            alpn=answer.peer.alpn,
                            certificate_requested=answer.peer.certificate_requested,
                            seconds=round(answer.peer.seconds, 6),
                            cpu_seconds=round(answer.peer.cpu_seconds, 6),
                            presented=judge(answer.peer.peer_certificates))
        cpu = answer.reply.cpu_seconds if answer.reply is not None else None
        results.append(CaseResult(id=hc.id, verdict=answer.verdict,  # type: ignore[arg-type]
                                  peer_id=answer.peer_id, error=said(answer.error), reason=reason,
                                  outcome=result, known=(label, hc.id) in known,
                                  seconds=round(answer.seconds, 6),
                                  cpu_seconds=None if cpu is None else round(cpu, 6),
                                  peer=side, first_attempt=first.get(n)))
    counts = Counter(r.outcome for r in results)
    return Implementation(name=target.name, mode="handshake", transport=transport,
                          direction=direction, package=target.package, version=target.version,
                          verifier=target.handshake or target.verifier,
                          command=list(target.argv), seconds=round(seconds, 3),
                          counts={o: counts.get(o, 0) for o in OUTCOMES}, cases=results)


def results_file(corpus: Path, seed: str | None, cases: Sequence[HarnessCase],
                 implementations: list[Implementation], peer_made: PeerMade | None = None,
                 catalogue_version: str | None = None) -> ResultsFile:
    entries = catalogue(cases)
    return ResultsFile(schema_version=SCHEMA_VERSION, generator=f"fixturegen {__version__}",
                       corpus=str(corpus), seed=seed, catalogue_version=catalogue_version,
                       catalogue=entries,
                       implementations=implementations, peer_made=peer_made,
                       reachability=reachability(entries, implementations))


def mark_known(results: ResultsFile, known: Known) -> ResultsFile:
    """The same results with ``known`` set from a (new) known list."""
    impls = [impl.model_copy(update={"cases": [
        case.model_copy(update={"known": (impl.label, case.id) in known}) for case in impl.cases]})
        for impl in results.implementations]
    return results.model_copy(update={"implementations": impls})
