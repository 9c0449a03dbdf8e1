"""``fixturegen harness matrix | check | profile | build``: the harness over other builds.

Exit codes: ``matrix`` 0 finished (versions that cannot be built are in the report), 2 usage (a
bad option or SPEC, an unreachable registry, a folder that is not the matrix's), 3 the fixture
peer is missing; ``check`` 0 as expected, 1 diverges, 125 cannot tell (cannot build, or the
case is skipped), 2 usage; ``profile`` 0, 2 usage, 3 a build that cannot be made; ``build`` 0
built, 3 cannot build, 2 usage. Interrupted: 130 (SIGINT), 143 / 129 (SIGTERM / SIGHUP).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from fixturegen.builds.build import DEFAULT_BUILD_TIMEOUT, BuildError, Wanted, ensure
from fixturegen.builds.registries import RegistryError
from fixturegen.builds.versions import VersionError, parse_spec
from fixturegen.errors import fail, out_path
from fixturegen.harness.adapters import ADAPTERS_HELP, BY_NAME, SHIPPED
from fixturegen.harness.commands import (
    CORPUS_HELP,
    EXIT_ADAPTER,
    MODES,
    adapters_folder,
    build_cache,
    corpus_folder,
    corpus_or_fail,
    fixture_peer,
    say,
    shipped_targets,
)
from fixturegen.harness.driver import DEFAULT_STARTUP, DEFAULT_TIMEOUT
from fixturegen.harness.reasons import ReasonTableError
from fixturegen.harness.session import Target
from fixturegen.owned import NotOwned
from fixturegen.owned import check as may_write
from fixturegen.versions.check import ENTRIES, EXIT_CANNOT_TELL, CheckError, Good, check
from fixturegen.versions.matrix import COMMAND, Settings, run_matrix, versions
from fixturegen.versions.profile import profile as run_profile
from fixturegen.versions.profile import table

Cache = Annotated[Path | None, typer.Option(
    help="The build cache (default: $FIXTUREGEN_CACHE, else ~/.cache/fixturegen).")]
Adapters = Annotated[Path | None, typer.Option(
    help=ADAPTERS_HELP)]
Corpus = Annotated[Path | None, typer.Option(help=CORPUS_HELP)]
BuildTimeout = Annotated[float, typer.Option(min=1.0, help="Seconds a build may take.")]


def matrix(
    impl: Annotated[str, typer.Option(help="A shipped adapter's name.")],
    versions_spec: Annotated[str, typer.Option(
        "--versions", help="all, minors (the newest patch of each minor), latest, versions "
        "and comparisons, comma-separated: '>=0.4,<0.7', 'v0.45.0,v0.48.0'.")] = "all",
    out: Annotated[Path, typer.Option(
        parser=out_path, help="The matrix folder (new, empty, or an earlier "
                                      "matrix's, whose finished versions are kept).")
                   ] = Path("matrix"),
    mode: Annotated[str, typer.Option(help="api, handshake or all.")] = "all",
    corpus: Corpus = None,
    adapters: Adapters = None,
    cache: Cache = None,
    rebuild: Annotated[bool, typer.Option(help="Build every version again.")] = False,
    fresh: Annotated[bool, typer.Option(help="Run every version again, even those an "
                                        "earlier run of this matrix finished.")] = False,
    build_timeout: BuildTimeout = DEFAULT_BUILD_TIMEOUT,
    timeout: Annotated[float, typer.Option(min=0.01, help="Seconds per case.")
                       ] = DEFAULT_TIMEOUT,
    startup: Annotated[float, typer.Option(min=0.0, help="Extra seconds for an adapter's "
                                           "first answer.")] = DEFAULT_STARTUP,
    dry_run: Annotated[bool, typer.Option(help="List the versions the SPEC selects, and stop."
                                          )] = False,
    interop: Annotated[bool, typer.Option(
        help="Also run the interop stage per version: the certificates it makes, checked by "
        "it, by every other shipped implementation's pinned build (those built) and by the "
        "reference verifier.")] = True,
) -> None:
    """Run the corpus over many versions of one implementation: per divergence class, the
    versions that show it, the first that does and the first that no longer does; and what the
    certificates each version makes show (sender flags, refusals), across versions."""
    adapter = BY_NAME.get(impl)
    if adapter is None or not adapter.registry_name:
        fail(f"--impl {impl!r}: give a shipped adapter ({', '.join(BY_NAME)})")
    if mode not in MODES:
        fail(f"--mode {mode!r}: use api, handshake or all")
    if not dry_run:
        try:
            may_write(out, COMMAND)  # refused before the registry is asked
        except NotOwned as exc:
            fail(str(exc))
    try:
        spec = parse_spec(versions_spec)
        chosen = versions(adapter, spec)
    except VersionError as exc:
        fail(str(exc))
    except RegistryError as exc:
        fail(f"cannot list the versions of {adapter.registry_name}: {exc}")
    if not chosen:
        fail(f"--versions {versions_spec!r} selects none of the versions the registry serves "
             f"for {adapter.registry_name} (from {adapter.since} on)")
    say(f"matrix: {adapter.name}: {len(chosen)} versions: "
         + ", ".join(r.version.text for r in chosen))
    if dry_run:
        for r in chosen:
            typer.echo(f"{r.version.text}\t{(r.date or '-')[:10]}")
        return
    base = adapters_folder(adapters, cache)
    peer = fixture_peer(base) if mode != "api" else []
    corpus = corpus_folder(corpus, cache)
    loaded = corpus_or_fail(corpus, transcripts=True, handshakes=mode != "api", timeout=timeout)
    checkers = _checkers(adapter.name, base) if interop else ()
    settings = Settings(mode, timeout, startup, build_timeout, rebuild, fresh, checkers)
    try:
        result = run_matrix(adapter, spec, chosen, loaded, out, base=base, cache=build_cache(cache),
                            peer_argv=peer, settings=settings, say=say)
    except NotOwned as exc:
        fail(str(exc))
    except ReasonTableError as exc:
        fail(f"reason table: {exc}")
    built = result.built()
    typer.echo(f"{adapter.name}: {len(chosen)} versions, {len(built)} built and run, "
               f"{len(result.classes)} divergence classes; report: {out}/index.html, "
               f"{out}/matrix.md, {out}/matrix.json")
    for v in result.versions:
        if not v.built:
            typer.echo(f"  not built: {v.version}: {v.reason}")


def _checkers(subject: str, base: Path) -> tuple[Target, ...]:
    """The interop stage's checkers of a matrix of ``subject``: every other shipped
    implementation's pinned build that is built (one that is not is named and left out)."""
    out: list[Target] = []
    for other in SHIPPED:
        if other.name == subject:
            continue
        try:
            built = ensure(other.recipe, base, Wanted(), base)
            out.append(other.target(base, built))
        except (BuildError, ReasonTableError) as exc:
            say(f"matrix: interop: {other.name} checks no certificate: {exc}")
    return tuple(out)


def check_command(
    impl: Annotated[str, typer.Option(help="NAME or NAME@VERSION of a shipped adapter.")],
    case: Annotated[str, typer.Option(help="The case id (the manifest's, a vector's or a "
                                      "proof set's).")],
    source: Annotated[Path | None, typer.Option(
        help="Build against this source tree (e.g. '.' in a git bisect).")] = None,
    entry: Annotated[str, typer.Option(help=f"Which entry runs it: {', '.join(ENTRIES)}.")
                     ] = "api",
    good: Annotated[str, typer.Option(
        help="expected: exit 0 when the case gets the outcome the manifest expects; diverges: "
        "exit 0 when it diverges (to find the commit that fixed it).")] = "expected",
    corpus: Corpus = None,
    adapters: Adapters = None,
    cache: Cache = None,
    build_timeout: BuildTimeout = DEFAULT_BUILD_TIMEOUT,
    timeout: Annotated[float, typer.Option(min=0.01, help="Seconds for the case.")
                       ] = DEFAULT_TIMEOUT,
    rebuild: Annotated[bool, typer.Option(
        help="Build again even if the cache holds the build or remembers its failure.")
    ] = False,
) -> None:
    """Whether one case still diverges in one build: exit 0 as expected, 1 diverges, 125
    cannot tell (the git bisect run convention)."""
    if good not in ("expected", "diverges"):
        fail(f"--good {good!r}: use expected or diverges")
    if entry not in ENTRIES:
        fail(f"--entry {entry!r}: use one of {', '.join(ENTRIES)}")
    base = adapters_folder(adapters, cache)
    with contextlib.ExitStack() as holds:
        (target,) = shipped_targets([impl], source, base, cache=cache, rebuild=rebuild,
                                    build_timeout=build_timeout, holds=holds,
                                    code=EXIT_CANNOT_TELL)
        peer = fixture_peer(base) if entry != "api" else []
        corpus = corpus_folder(corpus, cache)
        loaded = corpus_or_fail(corpus, transcripts=True, handshakes=entry != "api",
                                timeout=timeout)
        try:
            checked = check(target, loaded, case, entry, peer_argv=peer, timeout=timeout,
                            startup=DEFAULT_STARTUP)
        except CheckError as exc:
            fail(str(exc))
    typer.echo(checked.line(target.version))
    chosen: Good = "expected" if good == "expected" else "diverges"
    raise typer.Exit(checked.status(chosen))


def profile_command(
    impl: Annotated[str, typer.Option(help="NAME or NAME@VERSION: build A.")],
    against: Annotated[str, typer.Option(
        help="Build B: @VERSION, 'pinned', or a source tree's path.")],
    source: Annotated[Path | None, typer.Option(help="Build A from this source tree.")] = None,
    transport: Annotated[list[str] | None, typer.Option(
        help="tcp or quic (repeatable; default: every transport both builds have).")] = None,
    rounds: Annotated[int, typer.Option(min=2, max=1000, help="Batches per build.")] = 10,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Handshakes per batch.")] = 5,
    adapters: Adapters = None,
    cache: Cache = None,
    build_timeout: BuildTimeout = DEFAULT_BUILD_TIMEOUT,
    corpus: Corpus = None,
    rebuild: Annotated[bool, typer.Option(
        help="Build again even if the cache holds the build or remembers its failure.")
    ] = False,
) -> None:
    """Compare two builds' handshake cost: median wall and CPU per handshake, per transport,
    direction and scheme, with the ratio and its 95% interval."""
    name = impl.split("@", 1)[0]
    if against == "pinned":
        other = [name]
        other_source = None
    elif against.startswith("@"):
        other = [f"{name}{against}"]
        other_source = None
    else:
        other, other_source = [name], Path(against)
    base = adapters_folder(adapters, cache)
    with contextlib.ExitStack() as holds:
        (a,) = shipped_targets([impl], source, base, cache=cache, rebuild=rebuild,
                               build_timeout=build_timeout, holds=holds)
        (b,) = shipped_targets(other, other_source, base, cache=cache, rebuild=rebuild,
                               build_timeout=build_timeout, holds=holds)
        both = [t for t in a.transports if t in b.transports]
        chosen = transport or both
        if not set(chosen) <= set(both):
            fail(f"--transport {', '.join(chosen)}: both builds have only {', '.join(both)}")
        if not chosen:
            fail(f"{a.version} and {b.version} share no handshake transport", EXIT_ADAPTER)
        peer = fixture_peer(base)
        corpus = corpus_folder(corpus, cache)
        loaded = corpus_or_fail(corpus, transcripts=False, handshakes=True, timeout=20.0)
        rows = run_profile(a, b, loaded, peer, rounds=rounds, batch=batch,
                           transports=chosen, say=say)  # type: ignore[arg-type]
    sys.stdout.write(table(a, b, rows))


def build_command(
    impl: Annotated[str, typer.Option(help="NAME@VERSION of a shipped adapter (or NAME with "
                                      "--source).")],
    source: Annotated[Path | None, typer.Option(help="Build against this source tree.")] = None,
    adapters: Adapters = None,
    cache: Cache = None,
    rebuild: Annotated[bool, typer.Option(help="Build again even if the cache holds it.")
                       ] = False,
    build_timeout: BuildTimeout = DEFAULT_BUILD_TIMEOUT,
) -> None:
    """Build an adapter against another version (or a source tree) into the build cache, and
    print where it is: what 'run', 'matrix', 'check' and 'profile' would build first."""
    base = adapters_folder(adapters, cache)
    with contextlib.ExitStack() as holds:
        (target,) = shipped_targets([impl], source, base, cache=cache, rebuild=rebuild,
                                    build_timeout=build_timeout, holds=holds)
    typer.echo(f"{target.name} {target.version}: {' '.join(target.argv)} (handshake transports: "
               f"{', '.join(target.transports) or 'none'})")
