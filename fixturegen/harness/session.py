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
from fixturegen.harness.requests import HarnessCase
from fixturegen.harness.results import (
    SCHEMA_VERSION,
    CaseResult,
    CatalogueEntry,
    Implementation,
    Known,
    PeerMade,
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


def catalogue(cases: Sequence[HarnessCase]) -> list[CatalogueEntry]:
    return [CatalogueEntry(id=c.id, kind=c.request.kind, expected=c.expected.result,  # type: ignore[arg-type]
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


def results_file(corpus: Path, seed: str | None, cases: Sequence[HarnessCase],
                 implementations: list[Implementation], peer_made: PeerMade | None = None
                 ) -> ResultsFile:
    return ResultsFile(schema_version=SCHEMA_VERSION, generator=f"fixturegen {__version__}",
                       corpus=str(corpus), seed=seed, catalogue=catalogue(cases),
                       implementations=implementations, peer_made=peer_made)


def mark_known(results: ResultsFile, known: Known) -> ResultsFile:
    """The same results with ``known`` set from a (new) known list."""
    impls = [impl.model_copy(update={"cases": [
        case.model_copy(update={"known": (impl.name, case.id) in known}) for case in impl.cases]})
        for impl in results.implementations]
    return results.model_copy(update={"implementations": impls})
