"""A fuzzing campaign: mutants through the reference verifier, the independent check and each
implementation; disagreements clustered, minimised and marked covered or new.

A **disagreement** is an implementation whose verdict (accept or reject, or a hang or crash)
differs from the reference verifier's on a mutant (skips and protocol errors are not
verdicts). A **cluster** is (implementation, the reference's verdict: ``accept`` or its error
code, the operators of the minimised mutant). Its representative is minimised: steps are
dropped while the disagreement stays the same, and among the members left the smallest change
in size wins. A cluster is ``covered`` when a catalogue case with the same reference verdict
gets the same verdict from that implementation (the conformance run already shows the class),
else ``new``.

Memory is bounded whatever the run's length: clusters are counted as the mutants come, and a
cluster keeps its best representative and at most :data:`MEMBERS_KEPT` members; a mutant no
cluster keeps is dropped with its verdicts once its batch is done. The reference verifier gets
:data:`REFERENCE_LIMIT` seconds per mutant (a longer one is a ``hang``, a finding like a
traceback).
"""

from __future__ import annotations

import base64
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import TracebackType
from typing import Any

from fixturegen.cases import CATALOGUE, BuildContext, Rendered
from fixturegen.certs.builder import Draft
from fixturegen.fuzz import independent
from fixturegen.fuzz.mutators import Step, build, random_steps
from fixturegen.harness import driver
from fixturegen.harness.protocol import Request
from fixturegen.harness.session import Target
from fixturegen.keys.derive import stream
from fixturegen.verify.verifier import Verifier
from fixturegen.workers import CAN_FORK, Workers

BATCH = 2000
#: Members a cluster keeps beside its representative (its count is exact).
MEMBERS_KEPT = 32
#: Seconds the reference verifier may take on one mutant.
REFERENCE_LIMIT = 2.0


@dataclass(frozen=True)
class Parent:
    rendered: Rendered
    draft: Draft

    @property
    def id(self) -> str:
        return self.rendered.fixture.id

    @cached_property
    def der(self) -> bytes:
        return dict(self.rendered.files)[self.rendered.fixture.path]


@dataclass(frozen=True)
class Mutant:
    id: str
    parent: str
    steps: tuple[Step, ...]
    der: bytes
    signed: bool

    @property
    def operator(self) -> str:
        return "+".join(sorted({s.operator for s in self.steps}))


@dataclass(frozen=True)
class Reference:
    verdict: str  # accept | reject | crash | hang
    error: str | None
    peer_id: str | None
    flags: tuple[str, ...]

    @property
    def key(self) -> str:
        return "accept" if self.verdict == "accept" else (self.error or self.verdict)


@dataclass
class Cluster:
    implementation: str
    reference_key: str
    verdict: str
    operator: str
    members: list[Mutant] = field(default_factory=list)  # the first MEMBERS_KEPT
    representative: Mutant | None = None
    count: int = 0
    #: Every operator of every member (kept or not), for a reference finding's reason.
    operators: set[str] = field(default_factory=set)
    status: str = "new"
    #: The representative's verdict from every selected implementation.
    verdicts: dict[str, str] = field(default_factory=dict)
    #: For a reference finding: why the difference is expected (empty: not explained).
    reason: str = ""


def parents(seed: bytes) -> list[Parent]:
    """Every valid catalogue certificate (one file, the reference's verdict: accept)."""
    out = []
    for c in CATALOGUE:
        if c.result != "valid" or c.error is not None:
            continue
        built = c.build(BuildContext(seed, c.id))
        if len(built.files) != 1 or built.expect_peer_id:
            continue
        out.append(Parent(c.render(seed, built=built), built.draft))
    return out


def make_mutants(seed: bytes, pool: Sequence[Parent], start: int, count: int) -> list[Mutant]:
    """Mutants ``start`` .. ``start + count - 1`` that apply to their parent (a step that does
    not, e.g. nothing to drop, skips that number): each from its own seeded randomness."""
    out = []
    drafts = tuple(p.draft for p in pool)
    for n in range(start, start + count):
        r = random.Random(stream(seed, "fuzz", f"mutant-{n}", 16))
        parent = pool[r.randrange(len(pool))]
        steps = random_steps(r)
        others = tuple(d for d in drafts if d is not parent.draft)
        try:
            der, signed = build(parent.draft, others, steps)
        except (ValueError, IndexError, TypeError, OverflowError):
            continue
        out.append(Mutant(f"fuzz.{n:07d}", parent.id, steps, der, signed))
    return out


#: Mutants per task of a forked maker (a batch is split into tasks of this size).
CHUNK = 250
#: In a maker's worker: the seed and the parents it makes mutants of (inherited by the fork).
_WORKER_POOL: list[tuple[bytes, Sequence[Parent]]] = []


def _adopt(seed: bytes, pool: Sequence[Parent]) -> None:
    _WORKER_POOL[:] = [(seed, pool)]


def _make_chunk(start: int, count: int) -> list[Mutant]:
    seed, pool = _WORKER_POOL[0]
    return make_mutants(seed, pool, start, count)


class Maker:
    """:func:`make_mutants` on ``jobs`` cores: a range is split into tasks of :data:`CHUNK`
    numbers, made by forked workers (started at the first range that needs them, kept until
    :meth:`close`) and joined in order. Each mutant depends only on its number, so the result
    is the same list whatever ``jobs`` is."""

    def __init__(self, seed: bytes, pool: Sequence[Parent], jobs: int = 1) -> None:
        # capped by the machine and by the tasks of a batch: --jobs 64 forks 2 here
        self.jobs = min(jobs, os.cpu_count() or 1, -(-BATCH // CHUNK))
        self.seed, self.pool = seed, pool
        self.workers: Workers | None = None

    def make(self, start: int, count: int) -> list[Mutant]:
        if self.jobs <= 1 or count <= CHUNK or not CAN_FORK:
            return make_mutants(self.seed, self.pool, start, count)
        if self.workers is None:
            self.workers = Workers(self.jobs, _adopt, (self.seed, self.pool))
        starts = range(start, start + count, CHUNK)
        out: list[Mutant] = []
        for part in self.workers.map(_make_chunk, starts,
                                     [min(CHUNK, start + count - s) for s in starts]):
            out += part
        return out

    def close(self, *, cancel: bool = False) -> None:
        if self.workers is not None:
            self.workers.close(cancel=cancel)
            self.workers = None

    def __enter__(self) -> Maker:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(cancel=kind is not None)


def rebuild(m: Mutant, steps: tuple[Step, ...], by_id: dict[str, Parent]) -> Mutant | None:
    parent = by_id[m.parent]
    others = tuple(p.draft for p in by_id.values() if p is not parent)
    try:
        der, signed = build(parent.draft, others, steps)
    except (ValueError, IndexError, TypeError, OverflowError):
        return None
    return Mutant(m.id, m.parent, steps, der, signed)


class _Overtime(Exception):
    pass


def _overtime(signum: int, frame: object) -> None:
    raise _Overtime


def reference(v: Verifier, der: bytes, limit: float = REFERENCE_LIMIT) -> Reference:
    """The reference verifier's verdict; a traceback (``crash``) or more than ``limit``
    seconds (``hang``, measured in the main thread only) is a finding, not an exit."""
    armed = threading.current_thread() is threading.main_thread()
    previous: Any = None
    try:
        if armed:
            previous = signal.signal(signal.SIGALRM, _overtime)
            signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            verdict = v.verify([der])
        finally:  # disarmed before anything else runs: the alarm cannot fire past this point
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _Overtime:
        return Reference("hang", f"more than {limit:g} s", None, ())
    except Exception as exc:
        return Reference("crash", f"{type(exc).__name__}: {exc}"[:200], None, ())
    finally:
        if armed:
            signal.signal(signal.SIGALRM, previous)
    return Reference("accept" if verdict.accepted else "reject",
                     str(verdict.error) if verdict.error else None, verdict.peer_id,
                     tuple(str(f) for f in verdict.flags))


def independent_check(der: bytes) -> tuple[str, str]:
    """The independent check's verdict; an exception it did not foresee is a ``crash`` of that
    check (reported as a reference finding), never the campaign's end."""
    try:
        return independent.check(der)
    except Exception as exc:
        return "crash", f"{type(exc).__name__}: {exc}"[:200]


def request(m: Mutant) -> Request:
    return Request(id=m.id, kind="certificate",
                   certificates=[base64.b64encode(m.der).decode("ascii")])


def implementation_verdicts(target: Target, mutants: Sequence[Mutant], *, timeout: float,
                            startup: float) -> tuple[dict[str, str], float]:
    """Each mutant's verdict from one implementation (accept, reject, skip, hang, crash,
    error), and the seconds it took. Raises ``driver.AdapterStartError``."""
    started = time.perf_counter()
    answers = driver.run(target.argv, [request(m) for m in mutants], timeout=timeout,
                         startup=startup)
    seconds = time.perf_counter() - started
    return {a.id: a.failure or a.verdict or "error" for a in answers}, seconds


ANSWER_KINDS = ("verdicts", "skips", "errors", "hangs", "crashes")


def answer_kind(verdict: str) -> str:
    """Which of ANSWER_KINDS an implementation's answer to one mutant is."""
    return {"accept": "verdicts", "reject": "verdicts", "skip": "skips", "hang": "hangs",
            "crash": "crashes"}.get(verdict, "errors")


def disagrees(ref: Reference, verdict: str) -> bool:
    if verdict in ("hang", "crash"):
        return True
    return verdict in ("accept", "reject") and verdict != ref.verdict


@dataclass
class Campaign:
    seed: bytes
    targets: Sequence[Target]
    timeout: float = 10.0
    startup: float = 60.0
    progress: Callable[[str], None] | None = None
    pool: list[Parent] = field(default_factory=list)
    #: Processes that make the mutants (:class:`Maker`); the checks stay in this one.
    jobs: int = 1
    #: Mutants tried (built and judged by everyone).
    tried: int = 0
    #: (implementation, mutant) pairs that disagree.
    disagreements: int = 0
    reference_crashes: int = 0
    reference_hangs: int = 0
    #: What the clusters keep: each kept mutant's reference verdict, independent verdict and
    #: every implementation's verdict (impl -> id -> verdict).
    references: dict[str, Reference] = field(default_factory=dict)
    independent: dict[str, tuple[str, str]] = field(default_factory=dict)
    verdicts: dict[str, dict[str, str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    #: Per implementation, how its answers went: "verdicts" (accept or reject), "skips",
    #: "errors" (protocol errors: no verdict, not a finding but not an answer either), "hangs",
    #: "crashes". An adapter that answers garbage has no verdicts: not a clean run.
    answers: dict[str, dict[str, int]] = field(default_factory=dict)
    reference_seconds: float = 0.0
    reference_slowest: float = 0.0
    catalogue: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: Disagreements by (implementation, reference key, verdict, operator), counted as they
    #: come; reference findings by (reference key, independent verdict, operator).
    groups: dict[tuple[str, str, str, str], Cluster] = field(default_factory=dict)
    finding_groups: dict[tuple[str, str, str], Cluster] = field(default_factory=dict)
    verifier: Verifier = field(init=False)
    by_id: dict[str, Parent] = field(init=False)

    def __post_init__(self) -> None:
        self.verifier = Verifier()
        if not self.pool:
            self.pool = parents(self.seed)
        self.by_id = {p.id: p for p in self.pool}

    def say(self, text: str) -> None:
        if self.progress:
            self.progress(text)

    def run(self, count: int | None = None, seconds: float | None = None) -> None:
        """Mutants in batches until ``count`` were tried or ``seconds`` have passed."""
        start = time.perf_counter()
        index = 0  # the next mutant number (one that does not apply is skipped)
        with Maker(self.seed, self.pool, self.jobs) as maker:
            while True:
                if count is not None and (self.tried >= count or index >= 10 * count + BATCH):
                    break
                if seconds is not None and time.perf_counter() - start >= seconds * 0.75:
                    break  # the rest of the time is the triage's
                size = BATCH if count is None else min(BATCH, count - self.tried)
                batch = maker.make(index, size)
                index += size
                self.add(batch)
                self.say(f"{self.tried} mutants, {self.disagreements} disagreements")

    def add(self, batch: list[Mutant]) -> None:
        t = time.perf_counter()
        refs: dict[str, Reference] = {}
        for m in batch:
            one = time.perf_counter()
            refs[m.id] = ref = reference(self.verifier, m.der)
            self.reference_slowest = max(self.reference_slowest, time.perf_counter() - one)
            if ref.verdict == "hang":  # interrupted mid-way: start from a clean verifier
                self.reference_hangs += 1
                self.verifier = Verifier()
            self.reference_crashes += ref.verdict == "crash"
        self.reference_seconds += time.perf_counter() - t
        found = {m.id: independent_check(m.der) for m in batch}
        got: dict[str, dict[str, str]] = {}
        for target in self.targets:
            got[target.name], secs = implementation_verdicts(
                target, batch, timeout=self.timeout, startup=self.startup)
            self.seconds[target.name] = self.seconds.get(target.name, 0.0) + secs
            tally = self.answers.setdefault(target.name, dict.fromkeys(ANSWER_KINDS, 0))
            for verdict in got[target.name].values():
                tally[answer_kind(verdict)] += 1
        self.tried += len(batch)
        for m in batch:
            ref, ind = refs[m.id], found[m.id]
            counted = False
            for name, verdicts in got.items():
                if disagrees(ref, verdicts[m.id]):
                    self.disagreements += 1
                    key = (name, ref.key, verdicts[m.id], m.operator)
                    self._count(self.groups, key, Cluster(*key), m)
                    counted = True
            if ref.verdict in ("crash", "hang") or ref.verdict != ind[0]:
                fkey = (ref.key, ind[0], m.operator)
                self._count(self.finding_groups, fkey,
                            Cluster("independent", ref.key, ind[0], m.operator), m)
                counted = True
            if counted:  # recorded for now; _prune keeps only what a cluster holds
                self.references[m.id], self.independent[m.id] = ref, ind
                for name, verdicts in got.items():
                    self.verdicts.setdefault(name, {})[m.id] = verdicts[m.id]
        self._prune()

    def _prune(self) -> None:
        """Drop the verdicts of mutants no cluster holds (beyond its first members, or a
        representative a better one replaced): at most MEMBERS_KEPT + 1 per cluster remain."""
        held = {m.id for g in (*self.groups.values(), *self.finding_groups.values())
                for m in (*g.members, g.representative) if m is not None}
        tables: list[dict[str, Any]] = [self.references, self.independent,
                                         *self.verdicts.values()]
        for table in tables:
            for gone in [k for k in table if k not in held]:
                del table[gone]

    def _count(self, groups: dict[Any, Cluster], key: Any, new: Cluster, m: Mutant) -> None:
        """Count ``m`` in its cluster; keep it as a member while there is room, and as the
        representative when it ranks before the current one."""
        c = groups.setdefault(key, new)
        c.count += 1
        c.operators |= {s.operator for s in m.steps}
        if len(c.members) < MEMBERS_KEPT:
            c.members.append(m)
        if c.representative is None or self._rank(m) < self._rank(c.representative):
            c.representative = m

    def _rank(self, m: Mutant) -> tuple[int, int, str]:
        """Which of two mutants represents a cluster: fewer steps, then a smaller change."""
        return (len(m.steps), self._size(m), m.id)

    def check_catalogue(self) -> None:
        """Each implementation's verdict on every single-certificate catalogue case, keyed by
        the reference's verdict on it (for covered / new)."""
        cases = [c.render(self.seed) for c in CATALOGUE]
        requests, keys = [], []
        for r in cases:
            if len(r.fixture.chain) != 1 or r.fixture.expect_peer_id:
                continue
            der = dict(r.files)[r.fixture.path]
            keys.append(reference(self.verifier, der).key)
            requests.append(Mutant(r.fixture.id, r.fixture.id, (), der, True))
        for target in self.targets:
            got, _ = implementation_verdicts(target, requests, timeout=self.timeout,
                                             startup=self.startup)
            self.catalogue[target.name] = [(k, got[m.id]) for k, m in zip(keys, requests,
                                                                         strict=True)]

    def clusters(self, minimise_rounds: int = 2) -> list[Cluster]:
        groups = list(self.groups.values())
        self._minimise(groups, minimise_rounds)
        merged: dict[tuple[str, str, str, str], Cluster] = {}
        for c in groups:
            assert c.representative is not None
            c.operator = c.representative.operator
            key = (c.implementation, c.reference_key, c.verdict, c.operator)
            if key in merged:
                into = merged[key]
                into.count += c.count
                into.operators |= c.operators
                into.members += c.members[:max(0, MEMBERS_KEPT - len(into.members))]
                assert into.representative is not None
                if len(c.representative.steps) < len(into.representative.steps):
                    into.representative = c.representative
            else:
                merged[key] = c
        result = sorted(merged.values(), key=lambda c: (c.implementation, c.reference_key,
                                                        c.verdict, c.operator))
        self._verdicts_of_representatives(result)
        if not self.catalogue and self.targets:
            self.check_catalogue()
        for c in result:
            seen = self.catalogue.get(c.implementation, [])
            c.status = "covered" if (c.reference_key, c.verdict) in seen else "new"
        return result

    def _size(self, m: Mutant) -> int:
        return abs(len(m.der) - len(self.by_id[m.parent].der))

    def _minimise(self, clusters: list[Cluster], rounds: int) -> None:
        """Drop steps while the implementation still disagrees the same way."""
        targets = {t.name: t for t in self.targets}
        for _ in range(rounds):
            trials: dict[str, list[tuple[Cluster, Mutant]]] = {}
            for c in clusters:
                rep = c.representative
                assert rep is not None
                if len(rep.steps) < 2:
                    continue
                for i in range(len(rep.steps)):
                    fewer = rebuild(rep, rep.steps[:i] + rep.steps[i + 1:], self.by_id)
                    if fewer is not None:
                        fewer = Mutant(f"{rep.id}.m{i}", fewer.parent, fewer.steps, fewer.der,
                                       fewer.signed)
                        trials.setdefault(c.implementation, []).append((c, fewer))
            if not trials:
                return
            for name, pairs in trials.items():
                got, _ = implementation_verdicts(targets[name], [m for _, m in pairs],
                                                 timeout=self.timeout, startup=self.startup)
                for c, m in pairs:
                    ref = reference(self.verifier, m.der)
                    rep = c.representative
                    assert rep is not None
                    if (ref.key == c.reference_key and got[m.id] == c.verdict
                            and len(m.steps) < len(rep.steps)):
                        self.references[m.id] = ref
                        self.independent[m.id] = independent_check(m.der)
                        c.representative = m

    def _verdicts_of_representatives(self, clusters: list[Cluster]) -> None:
        reps = {c.representative.id: c.representative for c in clusters
                if c.representative is not None}
        for target in self.targets:
            known = self.verdicts.setdefault(target.name, {})
            missing = [m for i, m in reps.items() if i not in known]
            if missing:
                got, _ = implementation_verdicts(target, missing, timeout=self.timeout,
                                                 startup=self.startup)
                known.update(got)
        for c in clusters:
            assert c.representative is not None
            c.verdicts = {t.name: self.verdicts[t.name][c.representative.id]
                          for t in self.targets}

    def reference_findings(self) -> list[Cluster]:
        """Mutants where the reference and the independent check differ, clustered the same
        way (implementation ``independent``); status ``documented`` when DOCUMENTED explains
        it. Reference crashes and hangs are clustered here too."""
        out = []
        for (ref_key, ind, _), c in sorted(self.finding_groups.items()):
            why = independent.documented(ref_key, ind, c.operators)
            c.status = "documented" if why else "new"
            c.reason = why or ""
            c.verdicts = {"independent": ind}
            out.append(c)
        return out
