"""``fixturegen mutate``: a mutation campaign on one implementation (``--bugs``: its reviewed
bug models instead of the tool's mutants, in a folder and report of their own), ``mutate
merge`` (shards into one report) and ``mutate review`` (a report with the reviewed survivors
file applied).

Exit codes: 0 the campaign ran (survivors are findings, in the report); 2 usage (a bad option,
a folder that holds something else, an implementation without a mutation setup, with
``--bugs`` a bug model file that is missing or broken; for ``merge``, reports that are not the
shards of one campaign: a bad ``shard``, different corpora or versions, a shard missing or
twice, a mutant in two reports); 3 the campaign cannot run (no source, no mutant listed, a bug
model whose edits do not fit the source, an unmutated build that fails, a fixture peer missing,
a --source link that leaves the tree, a campaign folder whose files are truncated or name a
file outside the source tree). Interrupted: 130 / 143 / 129, the scratch tree put back, the
finished mutants kept (run the same command again to resume).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fixturegen.builds.build import DEFAULT_BUILD_TIMEOUT, Wanted, parse_impl
from fixturegen.builds.versions import VersionError
from fixturegen.errors import fail, out_path
from fixturegen.harness.adapters import ADAPTERS_HELP, BY_NAME
from fixturegen.harness.commands import (
    CORPUS_HELP,
    EXIT_ADAPTER,
    adapters_folder,
    build_cache,
    corpus_folder,
    corpus_or_fail,
    fixture_peer,
    say,
)
from fixturegen.harness.driver import DEFAULT_STARTUP, DEFAULT_TIMEOUT
from fixturegen.harness.reasons import ReasonTableError
from fixturegen.mutation.bugs import BugsError, bugs_path, check, read
from fixturegen.mutation.campaign import Campaign, CampaignError, Settings
from fixturegen.mutation.report import (
    MAX_SHARDS,
    MergeError,
    dumps,
    html,
    load,
    markdown,
    merge,
    parse_shard,
    review,
)
from fixturegen.mutation.setup import SetupError, load_setup
from fixturegen.owned import NotOwned, claim, mark, write_file

mutate_app = typer.Typer(help="Mutation adequacy: plant bugs in an implementation's verifier "
                         "and count the ones the corpus catches.")


def _shard(text: str) -> tuple[int, int]:
    parsed = parse_shard(text)
    if parsed is None:
        fail(f"--shard {text!r}: give K/N with 0 <= K < N <= {MAX_SHARDS} (the cargo-mutants "
             "convention)")
    return parsed


@mutate_app.callback(invoke_without_command=True)
def mutate(
    ctx: typer.Context,
    impl: Annotated[str | None, typer.Option(
        help="A shipped adapter: NAME (its pinned version) or NAME@VERSION.")] = None,
    source: Annotated[Path | None, typer.Option(
        help="Mutate this source tree (a checkout) instead of a released version.")] = None,
    shard: Annotated[str, typer.Option(help="K/N: this shard of the mutants only.")] = "0/1",
    out: Annotated[Path | None, typer.Option(parser=out_path,
        help="The campaign folder (default: mutation-NAME); run again to resume.")] = None,
    mode: Annotated[str, typer.Option(
        help="api, or all (the mutants of handshake-side code also run in handshakes).")
    ] = "all",
    upstream: Annotated[bool, typer.Option(
        help="Also run the implementation's own tests on each mutant.")] = True,
    limit: Annotated[int | None, typer.Option(
        min=1, help="At most this many mutants of the shard (a smoke run).")] = None,
    bugs: Annotated[bool, typer.Option(
        "--bugs", help="Run the implementation's reviewed bug models (adapters/FOLDER/"
        "mutation/NAME.bugs.json) instead of the tool's mutants (default folder: "
        "bugs-NAME).")] = False,
    mutant: Annotated[list[str] | None, typer.Option(
        help="Only this mutant (its id in the report; repeatable): re-check a survivor "
        "after a new case.")] = None,
    corpus: Annotated[Path | None, typer.Option(help=CORPUS_HELP)] = None,
    adapters: Annotated[Path | None, typer.Option(
        help=ADAPTERS_HELP)
    ] = None,
    cache: Annotated[Path | None, typer.Option(help="The build cache.")] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds per case at most (the "
                                           "limit is derived from the baseline).")
                       ] = DEFAULT_TIMEOUT,
    case_timeout: Annotated[float | None, typer.Option(
        min=0.1, help="A fixed limit per case, in seconds, instead of the one derived from the "
        "baseline (ten times its slowest answer, at least 2 s).")] = None,
    build_timeout: Annotated[float, typer.Option(min=1.0, help="Seconds a build may take.")
                             ] = DEFAULT_BUILD_TIMEOUT,
    upstream_timeout: Annotated[float, typer.Option(
        min=1.0, help="Seconds the upstream tests may take on one mutant.")] = 900.0,
) -> None:
    """Run a mutation campaign (or a subcommand: merge)."""
    if ctx.invoked_subcommand is not None:
        return
    if impl is None:
        fail("give --impl NAME (or NAME@VERSION), or a subcommand (merge)")
    if mode not in ("api", "all"):
        fail(f"--mode {mode!r}: use api or all")
    try:
        name, version = parse_impl(impl)
    except VersionError as exc:
        fail(str(exc))
    adapter = BY_NAME.get(name)
    if adapter is None:
        fail(f"no shipped adapter {name!r} (known: {', '.join(BY_NAME)})")
    if source is not None and version is not None:
        fail("--source PATH goes with --impl NAME (no @VERSION)")
    if source is not None and not source.is_dir():
        fail(f"--source {source}: not a folder")
    base = adapters_folder(adapters, cache)
    try:
        setup = load_setup(base, adapter.folder, adapter.name)
    except (SetupError, ReasonTableError) as exc:
        fail(str(exc))
    wanted = Wanted(version=version or adapter.version if source is None else None,
                    source=source)
    if bugs:  # the file checked now (every find once the source is there)
        path = bugs_path(base, adapter.folder, adapter.name)
        if not path.is_file():
            fail(f"{name} has no bug models ({path} is missing)")
        try:
            check(read(path), path, name=name, version=wanted.version,
                  files=setup.bug_scope, tree=None)
        except BugsError as exc:
            fail(str(exc))
    peer = (fixture_peer(base) if mode == "all" and (
        setup.handshake_files or (bugs and setup.bug_files)) else [])
    corpus = corpus_folder(corpus, cache)
    loaded = corpus_or_fail(corpus, transcripts=True, handshakes=bool(peer), timeout=timeout)
    settings = Settings(mode, _shard(shard), upstream, timeout, DEFAULT_STARTUP, build_timeout,
                        upstream_timeout, limit, tuple(mutant or ()), bugs, case_timeout)
    where = out or Path(f"{'bugs' if bugs else 'mutation'}-{name}")
    try:
        campaign = Campaign(adapter, setup, wanted, loaded, where,
                            base=base, cache=build_cache(cache), peer_argv=peer,
                            settings=settings, say=say)
        report = campaign.run()
    except NotOwned as exc:
        fail(str(exc))
    except CampaignError as exc:
        fail(str(exc), EXIT_ADAPTER)
    c = report.counts
    typer.echo(f"{name} {report.version}: {c.generated} {'bug models' if bugs else 'mutants'}, "
               f"{c.unviable} unviable, "
               f"{c.equivalent} equivalent; corpus killed {c.killed_by_corpus} "
               f"({100 * c.corpus_score:.1f}%)"
               + (f", upstream tests {c.killed_by_upstream} ({100 * c.upstream_score:.1f}%)"
                  if c.upstream_score is not None else "")
               + f"; {c.survived} survived both; {c.killed_by_one_case} killed by one case "
               f"only; report: {where}/mutation.md")


@mutate_app.command("merge")
def merge_command(
    folders: Annotated[list[Path], typer.Argument(help="Campaign folders (or their "
                                                  "mutation.json), one per shard.")],
    out: Annotated[Path, typer.Option(
        parser=out_path, help="Where the joined report goes.")],
) -> None:
    """Join the reports of several shards of one campaign."""
    try:
        parts = [load(f / "mutation.json" if f.is_dir() else f) for f in folders]
        joined = merge(parts)
        folder = claim(out, "mutate merge")
        write_file(folder, "mutation.json", dumps(joined).encode())
        write_file(folder, "mutation.md", markdown(joined).encode())
        write_file(folder, "mutation.html", html(joined).encode())
        mark(folder, "mutate merge", ["mutation.json", "mutation.md", "mutation.html"])
    except (MergeError, NotOwned) as exc:
        fail(str(exc))
    c = joined.counts
    typer.echo(f"{joined.implementation} {joined.version}: {len(parts)} shards, {c.generated} "
               f"{'bug models' if joined.kind == 'bugs' else 'mutants'}; corpus "
               f"{100 * c.corpus_score:.1f}%; report: {out}/mutation.md")


@mutate_app.command("review")
def review_command(
    report: Annotated[Path, typer.Argument(help="A campaign folder (or a merged one, or a "
                                           "mutation.json).")],
    out: Annotated[Path, typer.Option(
        parser=out_path, help="Where the reviewed report goes.")],
    adapters: Annotated[Path | None, typer.Option(
        help=ADAPTERS_HELP)
    ] = None,
) -> None:
    """Apply the implementation's reviewed survivors file (adapters/FOLDER/mutation/
    NAME.survivors.tsv) to a finished report, without running anything: each survivor gets
    its verdict (gap, unkillable, equivalent) and note, and the counts are made again."""
    try:
        loaded = load(report / "mutation.json" if report.is_dir() else report)
        adapter = BY_NAME.get(loaded.implementation)
        if adapter is None:
            fail(f"{report}: implementation {loaded.implementation!r} has no shipped adapter")
        setup = load_setup(adapters_folder(adapters), adapter.folder, adapter.name)
        reviewed = review(loaded, setup.survivors)
        folder = claim(out, "mutate review")
        write_file(folder, "mutation.json", dumps(reviewed).encode())
        write_file(folder, "mutation.md", markdown(reviewed).encode())
        write_file(folder, "mutation.html", html(reviewed).encode())
        mark(folder, "mutate review", ["mutation.json", "mutation.md", "mutation.html"])
    except (MergeError, NotOwned, SetupError, ReasonTableError) as exc:
        fail(str(exc))
    c = reviewed.counts
    typer.echo(f"{reviewed.implementation} {reviewed.version}: {c.generated} mutants, "
               f"{c.equivalent} equivalent, {c.gap} gap, {c.unkillable} unkillable; corpus "
               f"{100 * c.corpus_score:.1f}% ({100 * c.corpus_score_killable:.1f}% of the "
               f"killable); report: {out}/mutation.md")
