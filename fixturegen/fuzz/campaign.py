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
"""

from __future__ import annotations

import base64
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from fixturegen.cases import CATALOGUE, BuildContext, Rendered
from fixturegen.certs.builder import Draft
from fixturegen.fuzz import independent
from fixturegen.fuzz.mutators import Step, build, random_steps
from fixturegen.harness import driver
from fixturegen.harness.protocol import Request
from fixturegen.harness.session import Target
from fixturegen.keys.derive import stream
from fixturegen.verify.verifier import Verifier

BATCH = 2000


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
    verdict: str  # accept | reject | crash
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
    members: list[Mutant] = field(default_factory=list)
    representative: Mutant | None = None
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
        out.append(Parent(c.render(seed), built.draft))
    return out


def make_mutants(seed: bytes, pool: Sequence[Parent], start: int, count: int) -> list[Mutant]:
    """Mutants ``start`` .. ``start + count - 1``: each from its own seeded randomness."""
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
            continue  # a step that does not apply to this parent (e.g. nothing to drop)
        out.append(Mutant(f"fuzz.{n:07d}", parent.id, steps, der, signed))
    return out


def rebuild(m: Mutant, steps: tuple[Step, ...], by_id: dict[str, Parent]) -> Mutant | None:
    parent = by_id[m.parent]
    others = tuple(p.draft for p in by_id.values() if p is not parent)
    try:
        der, signed = build(parent.draft, others, steps)
    except (ValueError, IndexError, TypeError, OverflowError):
        return None
    return Mutant(m.id, m.parent, steps, der, signed)


def reference(v: Verifier, der: bytes) -> Reference:
    """The reference verifier's verdict; a traceback is a finding (``crash``), not an exit."""
    try:
        verdict = v.verify([der])
    except Exception as exc:
        return Reference("crash", f"{type(exc).__name__}: {exc}"[:200], None, ())
    return Reference("accept" if verdict.accepted else "reject",
                     str(verdict.error) if verdict.error else None, verdict.peer_id,
                     tuple(str(f) for f in verdict.flags))


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
    mutants: list[Mutant] = field(default_factory=list)
    references: dict[str, Reference] = field(default_factory=dict)
    verdicts: dict[str, dict[str, str]] = field(default_factory=dict)  # impl -> id -> verdict
    seconds: dict[str, float] = field(default_factory=dict)
    independent: dict[str, tuple[str, str]] = field(default_factory=dict)
    reference_seconds: float = 0.0
    reference_slowest: float = 0.0
    catalogue: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
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
        n = 0
        while True:
            if count is not None and n >= count:
                break
            if seconds is not None and time.perf_counter() - start >= seconds * 0.75:
                break  # the rest of the time is the triage's
            size = BATCH if count is None else min(BATCH, count - n)
            batch = make_mutants(self.seed, self.pool, n, size)
            n += size
            self.add(batch)
            self.say(f"{len(self.mutants)} mutants, "
                     f"{sum(1 for _ in self.raw_disagreements())} disagreements")

    def add(self, batch: list[Mutant]) -> None:
        t = time.perf_counter()
        for m in batch:
            one = time.perf_counter()
            self.references[m.id] = reference(self.verifier, m.der)
            self.reference_slowest = max(self.reference_slowest, time.perf_counter() - one)
        self.reference_seconds += time.perf_counter() - t
        for m in batch:
            self.independent[m.id] = independent.check(m.der)
        for target in self.targets:
            got, secs = implementation_verdicts(target, batch, timeout=self.timeout,
                                                startup=self.startup)
            self.verdicts.setdefault(target.name, {}).update(got)
            self.seconds[target.name] = self.seconds.get(target.name, 0.0) + secs
        self.mutants += batch

    def raw_disagreements(self) -> list[tuple[str, Mutant]]:
        out = []
        for m in self.mutants:
            ref = self.references[m.id]
            for name, got in self.verdicts.items():
                if disagrees(ref, got[m.id]):
                    out.append((name, m))
        return out

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
        groups: dict[tuple[str, str, str, str], Cluster] = {}
        for name, m in self.raw_disagreements():
            ref = self.references[m.id]
            verdict = self.verdicts[name][m.id]
            key = (name, ref.key, verdict, m.operator)
            groups.setdefault(key, Cluster(name, ref.key, verdict, m.operator)).members.append(m)
        for c in groups.values():
            c.representative = min(c.members, key=lambda m: (len(m.steps), self._size(m),
                                                             m.id))
        self._minimise(list(groups.values()), minimise_rounds)
        merged: dict[tuple[str, str, str, str], Cluster] = {}
        for c in groups.values():
            assert c.representative is not None
            c.operator = c.representative.operator
            key = (c.implementation, c.reference_key, c.verdict, c.operator)
            if key in merged:
                merged[key].members += c.members
                if len(c.representative.steps) < len(merged[key].representative.steps):  # type: ignore[union-attr]
                    merged[key].representative = c.representative
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
                        self.independent[m.id] = independent.check(m.der)
                        c.representative = m

    def _verdicts_of_representatives(self, clusters: list[Cluster]) -> None:
        reps = {c.representative.id: c.representative for c in clusters
                if c.representative is not None}
        for target in self.targets:
            missing = [m for i, m in reps.items() if i not in self.verdicts[target.name]]
            if missing:
                got, _ = implementation_verdicts(target, missing, timeout=self.timeout,
                                                 startup=self.startup)
                self.verdicts[target.name].update(got)
        for c in clusters:
            assert c.representative is not None
            c.verdicts = {t.name: self.verdicts[t.name][c.representative.id]
                          for t in self.targets}

    def reference_findings(self) -> list[Cluster]:
        """Mutants where the reference and the independent check differ, clustered the same
        way (implementation ``independent``); status ``documented`` when DOCUMENTED explains
        it. Reference crashes are clustered here too (verdict ``crash``)."""
        groups: dict[tuple[str, str, str], Cluster] = {}
        for m in self.mutants:
            ref = self.references[m.id]
            ind, _ = self.independent[m.id]
            if ref.verdict == ind:
                continue
            key = (ref.key, ind, m.operator)
            groups.setdefault(key, Cluster("independent", ref.key, ind, m.operator)
                              ).members.append(m)
        out = []
        for (ref_key, ind, _), c in sorted(groups.items()):
            c.representative = min(c.members, key=lambda m: (len(m.steps), self._size(m), m.id))
            why = independent.documented(ref_key, ind, {s.operator for m in c.members
                                                         for s in m.steps})
            c.status = "documented" if why else "new"
            c.reason = why or ""
            c.verdicts = {"independent": ind}
            out.append(c)
        return out
