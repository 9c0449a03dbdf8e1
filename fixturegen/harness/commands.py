"""``fixturegen harness run | report | findings | diff | list``: the conformance harness on
the command line.

Exit codes: 0 the run finished (divergences are findings, not failures); 1 with ``--known``,
divergences that the known list does not name (for ``diff``: the runs differ); 2 usage errors
(a bad option, an unreadable corpus, results or known file); 3 an adapter that is not built,
cannot be started, or answered no case at all (with ``--mode handshake`` or ``all``, also a
fixture peer that is not built or cannot start). Whatever happens, ``harness run`` writes the
results of the implementations it ran.
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from fixturegen.builds.build import (
    DEFAULT_BUILD_TIMEOUT,
    BuildError,
    Wanted,
    build_in_place,
    ensure,
    is_installed_copy,
    parse_impl,
)
from fixturegen.builds.cache import CacheError, cache_root
from fixturegen.builds.versions import VersionError
from fixturegen.errors import EXIT_USAGE, fail, out_path
from fixturegen.harness.adapters import (
    ADAPTERS_HELP,
    BY_NAME,
    PEER,
    SHIPPED,
    AdaptersNotFound,
    adapters_dir,
)
from fixturegen.harness.compare import DIVERGENCES
from fixturegen.harness.driver import DEFAULT_STARTUP, DEFAULT_TIMEOUT
from fixturegen.harness.handshake import MESSAGE_PEER_BUILT
from fixturegen.harness.interop import run_interop
from fixturegen.harness.pagedata import write_reports
from fixturegen.harness.reasons import ReasonTable, ReasonTableError, load_table
from fixturegen.harness.report import ReportFolderError, check_report_folder, write_results_only
from fixturegen.harness.requests import CorpusError
from fixturegen.harness.results import (
    Implementation,
    Known,
    ResultsError,
    ResultsFile,
    diff,
    load_known,
    load_results,
    stale_known,
)
from fixturegen.harness.session import (
    Corpus,
    Target,
    mark_known,
    read_corpus,
    results_file,
    run_entries,
)

EXIT_OK, EXIT_NEW, EXIT_ADAPTER = 0, 1, 3
MODES = ("api", "handshake", "all")
#: Adapter processes per entry by default: handshakes on loopback mostly wait, so a few in
#: flight at once keep two cores busy (make bench: the conformance run's wall time).
DEFAULT_JOBS = 2

harness_app = typer.Typer(no_args_is_help=True, help="Run third-party implementations over the "
                          "corpus and report where they disagree with the spec.")


def _known(path: Path | None) -> Known:
    if path is None:
        return frozenset()
    try:
        return load_known(path)
    except ResultsError as exc:
        fail(str(exc))


def _new_divergences(results: ResultsFile) -> int:
    return sum(1 for impl in results.implementations for case in impl.cases
               if case.outcome in DIVERGENCES and not case.known)


def _summary(results: ResultsFile) -> None:
    for impl in results.implementations:
        c = impl.counts
        per_case = 1000 * impl.seconds / max(1, len(impl.cases))
        retried = sum(1 for case in impl.cases if case.first_attempt is not None)
        again = f" (tried twice: {retried})" if retried else ""
        typer.echo(f"{impl.label} {impl.version}: {len(impl.cases)} cases in {impl.seconds:.2f} s "
                   f"({per_case:.2f} ms/case): agree {c['agree']}, acceptable {c['acceptable']}, "
                   f"false_accept {c['false_accept']}, false_reject {c['false_reject']}, "
                   f"wrong_reason {c.get('wrong_reason', 0)}, skip {c['skip']}, "
                   f"hang {c['hang']}, crash {c['crash']}, error {c['error']}{again}")


def say(text: str) -> None:
    typer.echo(text, err=True)


def build_cache(given: Path | None) -> Path:
    try:
        return cache_root(given)
    except CacheError as exc:
        fail(str(exc))


def shipped_targets(impl: list[str], source: Path | None, base: Path, *,
                    cache: Path | None, rebuild: bool, build_timeout: float,
                    holds: contextlib.ExitStack, code: int = EXIT_ADAPTER) -> list[Target]:
    """The targets ``--impl`` names (``NAME``, ``NAME@VERSION``, ``all``), each built: the
    checkout's pinned build, or another version or ``source`` tree from the build cache (a
    build that cannot be made exits ``code`` with one line). Each build's shared lock is held
    by ``holds``."""
    if source is not None and (len(impl) != 1 or impl[0] == "all" or "@" in impl[0]):
        fail("--source PATH goes with one --impl NAME (no @VERSION)")
    targets: list[Target] = []
    root: Path | None = None
    for wanted in impl:
        try:
            name, version = parse_impl(wanted)
        except VersionError as exc:
            fail(str(exc))
        names = [a.name for a in SHIPPED] if name == "all" and version is None else [name]
        for n in names:
            adapter = BY_NAME.get(n)
            if adapter is None:
                fail(f"no shipped adapter {n!r} (known: {', '.join(BY_NAME)}, all)")
            want = Wanted(version=version, source=source)
            if not want.pinned and root is None:
                root = build_cache(cache)
            try:
                built = ensure(adapter.recipe, base, want, root or base, rebuild=rebuild,
                               timeout=build_timeout, say=say)
            except BuildError as exc:
                fail(str(exc), EXIT_USAGE if exc.request and code == EXIT_ADAPTER else code)
            except VersionError as exc:
                fail(str(exc))
            holds.callback(built.hold.release)
            if not want.pinned:
                say(f"harness: {n} {built.version}: "
                     + ("from the build cache" if built.reused else f"built in "
                        f"{built.seconds:.0f} s") + f" ({built.folder})")
            for note in built.notes:
                say(f"harness: {n} {built.version}: {note}")
            try:
                targets.append(adapter.target(base, built))
            except ReasonTableError as exc:
                fail(f"reason table: {exc}")
    return targets


@harness_app.command("run")
def run(
    command: Annotated[list[str] | None, typer.Argument(
        help="Your own adapter: everything after '--' is its command line.")] = None,
    impl: Annotated[list[str] | None, typer.Option(
        "--impl", help="A shipped adapter (repeatable): NAME (the pinned version), "
        "NAME@VERSION (any version its registry serves, built in the build cache), or 'all'.")
    ] = None,
    source: Annotated[Path | None, typer.Option(
        help="With one --impl NAME: build it against this source tree (a checkout, or an "
        "unpacked package) instead of a released version.")] = None,
    adapters: Annotated[Path | None, typer.Option(
        help=ADAPTERS_HELP)
    ] = None,
    cache: Annotated[Path | None, typer.Option(
        help="The build cache for other versions and source trees (default: "
        "$FIXTUREGEN_CACHE, else ~/.cache/fixturegen).")] = None,
    rebuild: Annotated[bool, typer.Option(
        help="Build again even if the cache holds the build (or remembers its failure).")
    ] = False,
    build_timeout: Annotated[float, typer.Option(
        min=1.0, help="Seconds a build may take.")] = DEFAULT_BUILD_TIMEOUT,
    corpus: Annotated[Path | None, typer.Option(help=CORPUS_HELP)] = None,
    out: Annotated[Path | None, typer.Option(parser=out_path,
        help="Where the reports go (default: CORPUS/conformance; ./fixturegen-report with "
        "the generated corpus).")] = None,
    timeout: Annotated[float, typer.Option(min=0.01, help="Seconds per case before 'hang'.")
                       ] = DEFAULT_TIMEOUT,
    startup: Annotated[float, typer.Option(min=0.0, help="Extra seconds for the adapter's first "
                                           "answer (a restart gets what the first start needed, "
                                           "at most this).")] = DEFAULT_STARTUP,
    known: Annotated[Path | None, typer.Option(
        help="Accepted divergences ('IMPLEMENTATION CASE-ID' per line); exit 1 on new ones."
    )] = None,
    transcripts: Annotated[bool, typer.Option(
        help="Also send the CertificateVerify vectors.")] = True,
    interop: Annotated[bool, typer.Option(
        help="Also run the interop stage: certificates made by each implementation, verified "
        "by every one.")] = True,
    mode: Annotated[str, typer.Option(
        help="api (the library's certificate check on DER bytes), handshake (real handshakes "
        "with the fixture peer, both directions, each transport the adapter has) or all.")
    ] = "api",
    name: Annotated[str, typer.Option(help="Your adapter's name in the reports.")] = "custom",
    reasons: Annotated[Path | None, typer.Option(
        help="Your adapter's reason table (JSON: [{\"pattern\": REGEX, \"codes\": [ERROR_CODE, "
        "...]}, ...], as adapters/FOLDER/mutation/NAME.errors.json): each rejection's error "
        "text mapped to the reference's error codes, for the outcome wrong_reason. A shipped "
        "adapter uses its own.")] = None,
    version: Annotated[str, typer.Option(help="Your adapter's version in the reports.")
                       ] = "unknown",
    jobs: Annotated[int, typer.Option(
        min=1, max=64, help="Adapter processes per entry, each with its own fixture peer: "
        "handshakes (and API checks) in flight at once. Verdicts do not depend on it.")
    ] = DEFAULT_JOBS,
) -> None:
    """Run implementations over the corpus and write the four reports."""
    if mode not in MODES:
        fail(f"--mode {mode!r}: use api, handshake or all")
    with contextlib.ExitStack() as holds:
        base = adapters_folder(adapters, cache) if impl or mode != "api" else None
        targets: list[Target] = []
        if impl:
            assert base is not None
            targets = shipped_targets(impl, source, base, cache=cache, rebuild=rebuild,
                                      build_timeout=build_timeout, holds=holds)
        elif source is not None:
            fail("--source PATH goes with one --impl NAME")
        if command:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name) or ".." in name:
                fail(f"--name {name!r}: use letters, digits, '.', '_' and '-' (it names report "
                     "files), at most 64")
            if not version.isprintable() or not version.strip() or len(version) > 64:
                fail(f"--version {version!r}: printable characters, at most 64 (every report "
                     "shows it)")
            targets.append(Target(name, "custom", version, "custom adapter", tuple(command),
                                  "custom adapter", ("tcp",), reasons=_reasons(reasons)))
        elif reasons is not None:
            fail("--reasons FILE goes with your own adapter ('-- COMMAND ARGS...'): a shipped "
                 "adapter uses its own table")
        if not targets:
            fail("nothing to run: give --impl NAME (or --impl all) or '-- COMMAND ARGS...'")
        if len({t.name for t in targets}) != len(targets):
            fail("the same implementation name twice")
        known_set = _known(known)
        peer_argv = fixture_peer(base) if mode != "api" else []
        corpus, generated = corpus_choice(corpus, cache)
        loaded = corpus_or_fail(corpus, transcripts=transcripts, handshakes=mode != "api",
                                timeout=timeout)
        if out is None and generated:  # not beside a corpus that lives in the cache
            out = GENERATED_REPORTS
        folder = _report_folder(out, corpus)
        done: list[Implementation] = []
        broken: str | None = None
        results = results_file(corpus, loaded.seed, loaded.cases, done,
                               catalogue_version=loaded.catalogue)
        write_reports(results, folder)  # a results file exists whatever happens next

        def written(entry: Implementation) -> None:
            # results.json after every entry: a run killed outright keeps what it finished
            # (`harness report` makes the other reports from it). The other four cost twice
            # as much and grow with the run: they are written at the end, or when the run
            # stops or fails on the way.
            nonlocal results
            done.append(entry)
            results = results_file(corpus, loaded.seed, loaded.cases, done,
                                   catalogue_version=loaded.catalogue)
            write_results_only(results, folder)

        try:
            for target in targets:
                if mode != "api" and not target.transports:
                    say(f"harness: {target.name} {target.version}: no handshake mode in this "
                        "build")
                if mode != "handshake" and not target.api:
                    say(f"harness: {target.name} {target.version}: no API mode (handshake "
                        "entries only)")
                _, broken = run_entries(target, loaded, mode, folder, peer_argv=peer_argv,
                                        timeout=timeout, startup=startup, known=known_set,
                                        say=say, done=written, jobs=jobs)
                if broken is not None:
                    break
            results = results_file(corpus, loaded.seed, loaded.cases, done,
                                   catalogue_version=loaded.catalogue)
            if interop and broken is None:
                say(f"harness: interop: {len(targets)} implementations make and check "
                    "certificates")
                try:
                    peer_made = run_interop(targets, folder, timeout=timeout, startup=startup,
                                            peer_argv=peer_argv)
                except OSError as exc:
                    fail(f"interop: cannot keep the certificates in {folder}: "
                         f"{exc.strerror or exc}")
                results = results_file(corpus, loaded.seed, loaded.cases, done, peer_made,
                                       loaded.catalogue)
        except BaseException:
            # Stopped (a signal) or failed on the way (a fail() inside, a report that cannot
            # be written): every report of what finished, then the same way out.
            with contextlib.suppress(OSError, ReportFolderError):
                write_reports(results, folder)
            raise
        write_reports(results, folder)
        _finish(results, folder, known, broken)


def _reasons(path: Path | None) -> ReasonTable | None:
    """The reason table of ``--reasons`` (exit 2 when it is missing or cannot be read)."""
    if path is None:
        return None
    if not path.is_file():
        fail(f"--reasons {path}: no such file")
    try:
        return load_table(path)
    except ReasonTableError as exc:
        fail(f"--reasons {exc}")


def fixture_peer(base: Path | None) -> list[str]:
    """The fixture peer's command (exit 3 when it is not built)."""
    assert base is not None
    if not (base / PEER).is_file() and is_installed_copy(base):
        try:
            build_in_place(base, "fixture-peer", PEER, say=say)
        except BuildError as exc:
            fail(str(exc), EXIT_ADAPTER)
    if not (base / PEER).is_file():
        fail("the fixture peer is not built: run 'make adapters' (adapters/build fixture-peer)",
             EXIT_ADAPTER)
    if is_installed_copy(base) and not (base / MESSAGE_PEER_BUILT).is_file():
        # Its cases are skip without it (the reason says so): the run goes on.
        try:
            build_in_place(base, "message-peer", MESSAGE_PEER_BUILT, say=say)
        except BuildError as exc:
            say(f"the message-level peer cannot be built, its cases are skip: {exc}")
    return [str(base / PEER)]


CORPUS_HELP = ("The corpus folder (default: ./out when it holds one, as after 'make fixtures'; "
               "else the corpus this fixturegen generates in the build cache, the first time)")
#: Where ``harness run`` writes its reports when it runs the generated corpus.
GENERATED_REPORTS = Path("fixturegen-report")


def corpus_choice(given: Path | None, cache: Path | None = None) -> tuple[Path, bool]:
    """``--corpus``, else :func:`fixturegen.harness.corpora.default_corpus` (exit 2 with one
    line when it cannot be generated); and whether it is the corpus generated in the cache."""
    from fixturegen.harness.corpora import LOCAL, CorpusUnavailable, default_corpus

    if given is not None:
        return given, False
    try:
        chosen = default_corpus(cache, say)
    except (CorpusUnavailable, CacheError) as exc:
        fail(str(exc))
    return chosen, chosen != LOCAL


def corpus_folder(given: Path | None, cache: Path | None = None) -> Path:
    """:func:`corpus_choice`'s folder."""
    return corpus_choice(given, cache)[0]


def corpus_or_fail(corpus: Path, *, transcripts: bool, handshakes: bool, timeout: float) -> Corpus:
    try:
        return read_corpus(corpus, transcripts=transcripts, handshakes=handshakes,
                           timeout=timeout)
    except CorpusError as exc:
        fail(f"{exc} (build the corpus with 'make fixtures')")


def _report_folder(out: Path | None, corpus: Path) -> Path:
    folder = out if out is not None else corpus / "conformance"
    if out is None and not _inside(folder, corpus):
        fail(f"{folder} is a symbolic link: reports are never written through one")
    try:
        check_report_folder(folder)
    except ReportFolderError as exc:
        fail(str(exc))
    return folder


def _finish(results: ResultsFile, folder: Path, known: Path | None, broken: str | None = None
            ) -> None:
    """Print the summary, then exit 3 for a broken adapter or 1 for unlisted divergences."""
    _summary(results)
    typer.echo(f"harness: reports in {folder}/ (results.json, junit.xml, summary.md, index.html)",
               err=True)
    if broken is not None:
        fail(broken, EXIT_ADAPTER)
    if known is not None:
        _say_stale(results, known)
    if known is not None and (new := _new_divergences(results)):
        typer.echo(f"harness: {new} divergences not in {known}", err=True)
        raise typer.Exit(EXIT_NEW)


def _say_stale(results: ResultsFile, known: Path) -> None:
    """Name the known list's entries that no longer stand (a warning: they fail nothing)."""
    gone, fixed = stale_known(results, _known(known))
    for what, entries in (("name cases this corpus does not have", gone),
                          ("no longer diverge", fixed)):
        if entries:
            first = ", ".join(f"{label} {case}" for label, case in entries[:3])
            more = f" and {len(entries) - 3} more" if len(entries) > 3 else ""
            typer.echo(f"harness: {len(entries)} entries of {known} {what}: {first}{more}",
                       err=True)


@harness_app.command("report")
def report(
    results: Annotated[Path, typer.Argument(help="A results.json.")],
    out: Annotated[Path | None, typer.Option(
        parser=out_path, help="Where the reports go (default: beside it).")
                   ] = None,
    known: Annotated[Path | None, typer.Option(
        help="Accepted divergences; exit 1 on divergences it does not name.")] = None,
) -> None:
    """Re-render the reports from a results file (optionally with a new known list)."""
    try:
        loaded = load_results(results)
    except ResultsError as exc:
        fail(str(exc))
    if known is not None:
        loaded = mark_known(loaded, _known(known))
    folder = out if out is not None else results.parent
    try:
        check_report_folder(folder)
    except ReportFolderError as exc:
        fail(str(exc))
    write_reports(loaded, folder)
    _finish(loaded, folder, known)


@harness_app.command("findings")
def findings_reports(
    results: Annotated[Path, typer.Argument(help="A results.json (or its folder).")],
    impl: Annotated[str, typer.Option(help="The implementation: its name, or one entry's "
                                      "label (NAME@TRANSPORT-DIRECTION).")],
    out: Annotated[Path, typer.Option(
        parser=out_path, help="The folder for the reports (new, empty, or one an earlier "
        "'harness findings' wrote: only its files are replaced).")],
    corpus: Annotated[Path | None, typer.Option(
        help="The corpus the run read (default: the one results.json names).")] = None,
    matrix: Annotated[Path | None, typer.Option(
        help="A version matrix of the implementation (its matrix.json): each report names the "
        "versions its class affects and where it was fixed. Default: the matrix whose "
        "versions/ folder holds RESULTS, if any.")] = None,
) -> None:
    """One Markdown report per divergence class (a rule and an outcome), ready for the
    implementation's tracker."""
    from fixturegen.harness.classes import FindingsError
    from fixturegen.harness.findings import write
    from fixturegen.harness.matrix import MatrixError, load_matrix

    path = results / "results.json" if results.is_dir() else results
    if matrix is None and path.parent.parent.name == "versions":
        beside = path.parent.parent.parent / "matrix.json"
        matrix = beside if beside.is_file() else None
    try:
        loaded = load_results(path)
        versions = load_matrix(matrix) if matrix is not None else None
        count = write(loaded, impl, out, corpus, versions)
    except (ResultsError, FindingsError, MatrixError) as exc:
        fail(str(exc))
    typer.echo(f"harness: {count} divergence classes of {impl} in {out}/ (index: findings.md)",
               err=True)


@harness_app.command("diff")
def diff_runs(
    old: Annotated[Path, typer.Argument(help="The earlier results.json.")],
    new: Annotated[Path, typer.Argument(help="The later results.json.")],
) -> None:
    """What changed between two runs (exit 1 when something did)."""
    try:
        a, b = load_results(old), load_results(new)
    except ResultsError as exc:
        fail(str(exc))
    lines = diff(a, b)
    for line in lines:
        typer.echo(line)
    if not lines:
        typer.echo("no change")
    raise typer.Exit(EXIT_NEW if lines else EXIT_OK)


def adapters_folder(given: Path | None, cache: Path | None = None) -> Path:
    try:
        return adapters_dir(given, cache)
    except AdaptersNotFound as exc:
        fail(str(exc))


@harness_app.command("list")
def listadapters_folder(
    adapters: Annotated[Path | None, typer.Option(
        help=ADAPTERS_HELP)
    ] = None,
) -> None:
    """The shipped adapters, their pinned versions and whether they are built."""
    base = adapters_folder(adapters)
    for a in SHIPPED:
        state = "built" if a.built(base) else "not built"
        typer.echo(f"{a.name:16} {a.package} {a.version:8} {state:9} {a.verifier}")


def _inside(path: Path, root: Path) -> bool:
    """``path`` (which may not exist yet) resolves inside ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: fixturegen harness ...")
