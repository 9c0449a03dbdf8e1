"""``fixturegen harness matrix``: the corpus over every version of one implementation.

For each version the SPEC selects from what the registry serves (oldest first), the adapter is
built (or taken from the build cache) and run over the corpus in the chosen mode; each
version's reports go to ``OUT/versions/VERSION/`` (an ordinary results folder), and after each
version ``OUT/matrix.json``, ``OUT/matrix.md`` and ``OUT/index.html`` are written anew, so an
interrupted matrix keeps what it finished. A version that cannot be built is listed with the
reason and the rest go on. A version an earlier run of the same matrix built and ran (same
corpus seed, same fixturegen, same interop checkers) is not run again (``--fresh`` runs every
version anew); one it could not build is tried again (the build cache remembers a failure
until ``--rebuild``).

With ``checkers`` (the other shipped implementations' pinned builds; ``--no-interop`` gives
none) each version also runs the interop stage: the version makes certificates, and it, every
checker and the reference verifier check them (:func:`fixturegen.harness.interop.run_interop`,
into that version's ``results.json``). The matrix follows what those certificates show across
versions (:func:`fixturegen.harness.matrix.aggregate_made`), so a generator bug has a first and
a fixed version like any divergence class.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixturegen import __version__
from fixturegen.builds.build import BuildError, Wanted, ensure
from fixturegen.builds.cache import slug
from fixturegen.builds.registries import Released, released
from fixturegen.builds.versions import Spec, Version
from fixturegen.harness import driver
from fixturegen.harness.adapters import Adapter
from fixturegen.harness.interop import run_interop
from fixturegen.harness.matrix import (
    SCHEMA_VERSION,
    MatrixError,
    MatrixFile,
    VersionRun,
    aggregate,
    aggregate_made,
    counts,
    load_matrix,
)
from fixturegen.harness.pagedata import write_reports
from fixturegen.harness.report import COMMAND as REPORTS
from fixturegen.harness.report import tolerance_cases, tolerated_by
from fixturegen.harness.results import ResultsError, ResultsFile, load_results
from fixturegen.harness.session import Corpus, Target, results_file, run_entries
from fixturegen.owned import claim, mark, owned_files, write_file
from fixturegen.versions.render import matrix_html, matrix_markdown

COMMAND = "harness matrix"


@dataclass(frozen=True)
class Settings:
    mode: str
    timeout: float
    startup: float
    build_timeout: float
    rebuild: bool = False
    fresh: bool = False
    checkers: tuple[Target, ...] = ()  # the interop stage's other checkers (none: no stage)


def versions(adapter: Adapter, spec: Spec) -> list[Released]:
    """The versions ``spec`` selects from what the registry serves (from the adapter's first
    version with the verifier on; yanked or deprecated ones only when named exactly). Raises
    ``RegistryError``."""
    since = Version.parse(adapter.since)
    served = released(adapter.ecosystem, adapter.registry_name, since)
    by_version = {r.version: r for r in served}
    usable = [r.version for r in served if not r.yanked]
    exact = {Version.parse(t) for t in spec.exact}
    chosen = spec.select(usable + [v for v in by_version if v in exact])
    return [by_version.get(v) or Released(v, None) for v in chosen]


def run_matrix(adapter: Adapter, spec: Spec, chosen: Sequence[Released], corpus: Corpus,
               out: Path, *, base: Path, cache: Path, peer_argv: Sequence[str],
               settings: Settings, say: Callable[[str], None]) -> MatrixFile:
    """Build and run every chosen version; returns the matrix (also written to ``out``)."""
    folder = claim(out, COMMAND)
    written = set(owned_files(folder, COMMAND))
    before = {} if settings.fresh else _previous(folder, settings.mode)
    runs: list[tuple[VersionRun, ResultsFile | None]] = []
    tolerance = _tolerance(settings, corpus, say)
    matrix = _matrix(adapter, spec, corpus, settings.mode, runs, tolerance)
    for number, item in enumerate(chosen, 1):
        v = item.version.text
        rel = f"versions/{slug(v)}"
        earlier = before.get(v)
        results = _load(folder / rel / "results.json") if earlier is not None else None
        if (earlier is not None and earlier.built and results is not None
                and results.seed == corpus.seed and results.generator == matrix.generator
                and results.catalogue_version == corpus.catalogue
                and _same_checkers(earlier, settings)):
            say(f"matrix: {adapter.name} {v} ({number}/{len(chosen)}): kept from the earlier run")
            runs.append((earlier, results))
        else:
            say(f"matrix: {adapter.name} {v} ({number}/{len(chosen)})")
            runs.append(_one(adapter, item, corpus, folder / rel, rel, base=base, cache=cache,
                             peer_argv=peer_argv, settings=settings, say=say))
        written |= {f"{rel}/{name}" for name in _files(folder / rel)}
        matrix = _matrix(adapter, spec, corpus, settings.mode, runs, tolerance)
        _write(folder, matrix, written)
    return matrix


def _tolerance(settings: Settings, corpus: Corpus, say: Callable[[str], None]
               ) -> dict[str, list[str]]:
    """Each checker's tolerance of sender flags, from its API answers to the corpus cases that
    carry them (:func:`fixturegen.harness.report.tolerance_cases`); a checker without an API,
    or one that cannot start, is shown to tolerate none."""
    ids = tolerance_cases()
    requests = [c.request for c in corpus.api if c.id in ids]
    out: dict[str, list[str]] = {}
    for target in settings.checkers:
        out[target.name] = []
        if not target.api or not requests:
            continue
        try:
            answers = driver.run(target.argv, requests, timeout=settings.timeout,
                                 startup=settings.startup)
        except driver.AdapterStartError as exc:
            say(f"matrix: interop: {target.name}: {exc}")
            continue
        verdicts = {r.id: a.verdict for r, a in zip(requests, answers, strict=True)}
        out[target.name] = sorted(f.value for f in tolerated_by(verdicts))
    return out


def _same_checkers(earlier: VersionRun, settings: Settings) -> bool:
    """Whether an earlier run of a version had the interop stage this run wants (a run with
    other checkers, or none, is run again)."""
    if not settings.checkers:
        return not earlier.checkers
    return earlier.checkers[1:] == [t.name for t in settings.checkers]


def _previous(folder: Path, mode: str) -> dict[str, VersionRun]:
    """The versions an earlier run of this matrix recorded (none when there was none, or when
    it ran another mode: an API run is not kept for a run that wants handshakes too)."""
    if not (folder / "matrix.json").is_file():
        return {}
    try:
        earlier = load_matrix(folder / "matrix.json")
    except MatrixError:
        return {}
    return {run.version: run for run in earlier.versions} if earlier.mode == mode else {}


def _one(adapter: Adapter, item: Released, corpus: Corpus, where: Path, rel: str, *,
         base: Path, cache: Path, peer_argv: Sequence[str], settings: Settings,
         say: Callable[[str], None]) -> tuple[VersionRun, ResultsFile | None]:
    v = item.version.text

    def missing(reason: str, seconds: float | None = None) -> tuple[VersionRun, None]:
        say(f"matrix: {adapter.name} {v}: {reason}")
        return VersionRun(version=v, released=item.date, built=False, reason=reason,
                          build_seconds=seconds, run_seconds=None, transports=[], notes=[],
                          entries=[], counts={}, results=None), None

    try:
        built = ensure(adapter.recipe, base, Wanted(version=v), cache, rebuild=settings.rebuild,
                       timeout=settings.build_timeout, say=say)
    except BuildError as exc:
        return missing(str(exc))
    try:
        target = adapter.target(base, built)
        claim(where, REPORTS)  # a reports folder, the harness's (its logs go in first)
        start = time.perf_counter()
        done, broken = run_entries(target, corpus, settings.mode, where, peer_argv=peer_argv,
                                   timeout=settings.timeout, startup=settings.startup)
        peer_made = None
        checkers: list[str] = []
        if done and broken is None and settings.checkers:
            say(f"matrix: {adapter.name} {v}: interop: its certificates, checked by it, "
                f"{', '.join(t.name for t in settings.checkers)} and the reference")
            makers = [target, *settings.checkers]
            peer_made = run_interop(makers, where, timeout=settings.timeout,
                                    startup=settings.startup, peer_argv=peer_argv,
                                    makers=[target.name])
            checkers = [t.name for t in makers]
        seconds = time.perf_counter() - start
    finally:
        built.hold.release()
    results = results_file(corpus.path, corpus.seed, corpus.cases, done, peer_made,
                           corpus.catalogue)
    write_reports(results, where)
    if not done:
        return missing(f"cannot run: {broken}", built.seconds)
    run = VersionRun(version=v, released=item.date, built=True, reason=broken,
                     build_seconds=round(built.seconds, 1), run_seconds=round(seconds, 1),
                     transports=list(target.transports), notes=list(built.notes),
                     entries=[i.label for i in done], counts=counts(results, adapter.name),
                     results=f"{rel}/results.json", checkers=checkers)
    return run, results


def _load(path: Path) -> ResultsFile | None:
    try:
        return load_results(path)
    except ResultsError:
        return None


def _files(where: Path) -> list[str]:
    return [p.name for p in where.iterdir() if p.is_file()] if where.is_dir() else []


def _matrix(adapter: Adapter, spec: Spec, corpus: Corpus, mode: str,
            runs: Sequence[tuple[VersionRun, ResultsFile | None]],
            tolerance: dict[str, list[str]]) -> MatrixFile:
    fixed: list[tuple[VersionRun, ResultsFile | None]] = []
    for run, results in runs:
        if run.built and results is not None and not run.counts:
            run = run.model_copy(update={"counts": counts(results, adapter.name)})
        fixed.append((run, results))
    return MatrixFile(schema_version=SCHEMA_VERSION, generator=f"fixturegen {__version__}",
                      implementation=adapter.name, package=adapter.package,
                      corpus=str(corpus.path), seed=corpus.seed,
                      catalogue_version=corpus.catalogue,
                      mode=mode, spec=spec.text,  # type: ignore[arg-type]
                      versions=[run for run, _ in fixed],
                      classes=aggregate(adapter.name, fixed),
                      made=aggregate_made(adapter.name, fixed, tolerance),
                      tolerance=tolerance)


def _write(folder: Path, matrix: MatrixFile, written: set[str]) -> None:
    text = json.dumps(matrix.model_dump(mode="json"), indent=1) + "\n"
    write_file(folder, "matrix.json", text.encode())
    write_file(folder, "matrix.md", matrix_markdown(matrix).encode())
    write_file(folder, "index.html", matrix_html(matrix).encode())
    mark(folder, COMMAND, written | {"matrix.json", "matrix.md", "index.html"})
