"""``fixturegen fuzz``: the command line of a differential fuzzing campaign.

Exit codes: 0 the campaign ran (disagreements are findings, in the report); 2 a usage error
(a bad option, an unusable --out or adapters folder); 3 an adapter cannot start, or gave no
verdict on any mutant (only protocol errors: not compared; the report is still written); 4 a
worker process that makes mutants died (killed, out of memory; nothing is written).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from fixturegen.errors import fail, out_path, seed_option
from fixturegen.harness.adapters import (
    ADAPTERS_HELP,
    BY_NAME,
    SHIPPED,
    AdaptersNotFound,
    adapters_dir,
)
from fixturegen.harness.driver import DEFAULT_STARTUP, DEFAULT_TIMEOUT, AdapterStartError
from fixturegen.harness.reasons import ReasonTableError
from fixturegen.harness.session import Target
from fixturegen.workers import WorkerDied

EXIT_ADAPTER = 3
EXIT_WORKER = 4
DEFAULT_SEED = "libp2p-fixturegen"


def fuzz(
    command: Annotated[list[str] | None, typer.Argument(
        help="Your own adapter: everything after '--' is its command line.")] = None,
    name: Annotated[str, typer.Option(help="Your adapter's name in the report.")] = "custom",
    impl: Annotated[list[str] | None, typer.Option(
        "--impl", help="A shipped adapter (repeatable); 'all' for every one. None: the "
        "reference verifier against the independent check only.")] = None,
    cases: Annotated[int | None, typer.Option(
        "--cases", min=1, max=10_000_000, help="How many mutants to try.")] = None,
    seconds: Annotated[float | None, typer.Option(
        "--time", min=1.0, max=86_400.0, help="Or: run for this many seconds.")] = None,
    seed: Annotated[str, typer.Option(help="Seed of the parents and the mutations.",
                                      callback=seed_option)] = DEFAULT_SEED,
    out: Annotated[Path, typer.Option(
        parser=out_path, help="The report folder (replaced only on success).")
                   ] = Path("fuzz-report"),
    adapters: Annotated[Path | None, typer.Option(
        help=ADAPTERS_HELP)
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, max=600.0, help="Seconds per mutant.")
                       ] = DEFAULT_TIMEOUT,
    startup: Annotated[float, typer.Option(min=0.1, max=3600.0,
                                           help="Seconds an adapter may take to start.")
                       ] = DEFAULT_STARTUP,
    jobs: Annotated[int, typer.Option(
        min=0, max=64, help="Processes that make the mutants (0: one per core). The mutants "
        "do not depend on it.")] = 0,
) -> None:
    """Mutate the corpus's valid certificates and report where implementations differ."""
    from fixturegen.fuzz.campaign import Campaign
    from fixturegen.fuzz.report import (
        FuzzOutputError,
        check_out,
        check_writable,
        report,
        write,
    )

    if cases is not None and seconds is not None:
        fail("give --cases or --time, not both")
    if cases is None and seconds is None:
        cases = 5000
    try:
        check_out(out.absolute())
        check_writable(out.absolute())
    except (FuzzOutputError, OSError) as exc:
        fail(str(exc))
    targets = _targets(impl or [], adapters)
    if command:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name) or name in BY_NAME:
            fail(f"--name {name!r}: letters, digits, '.', '_' and '-', at most 64, and not a "
                 "shipped adapter's name")
        targets.append(Target(name, "custom", "unknown", "custom adapter", tuple(command)))
    started = time.perf_counter()

    def progress(text: str) -> None:
        print(f"fuzz: {text} ({time.perf_counter() - started:.0f} s)", file=sys.stderr,
              flush=True)

    campaign = Campaign(seed.encode(), targets, timeout=timeout, startup=startup,
                        progress=progress, jobs=jobs or os.cpu_count() or 1)
    try:
        campaign.run(count=cases, seconds=seconds)
        clusters = campaign.clusters()
    except AdapterStartError as exc:
        fail(f"an adapter cannot start: {exc}", EXIT_ADAPTER)
    except WorkerDied as exc:
        fail(f"a worker process died while making mutants ({exc})", EXIT_WORKER)
    findings = campaign.reference_findings()
    r = report(campaign, clusters, findings, seed, time.perf_counter() - started)
    try:
        write(campaign, clusters, findings, r, out)
    except (FuzzOutputError, OSError) as exc:
        fail(f"cannot write {out}: {exc}")
    new = sum(c.status == "new" for c in r.clusters)
    typer.echo(f"{r.mutants} mutants; {len(r.clusters)} clusters ({new} new), "
               f"{len(r.reference_findings)} reference findings; report in {out}/summary.md")
    # An adapter that never gave a verdict (garbage, or only protocol errors) was not compared:
    # "0 disagreements" would pass it as a perfect one.
    # An adapter that died or hung on every mutant (/bin/false) was not compared either.
    silent = [name for name, a in r.answers.items() if r.mutants and a["verdicts"] == 0
              and a["errors"] + a["crashes"] + a["hangs"] > 0]
    if silent:
        a = r.answers[silent[0]]
        fail(f"{silent[0]} gave no verdict on any of {r.mutants} mutants ({a['errors']} protocol "
             f"errors, {a['crashes']} crashes, {a['hangs']} hangs, {a['skips']} skips): it was "
             f"not compared (the report in {out} says so)", EXIT_ADAPTER)


def _targets(names: list[str], adapters: Path | None) -> list[Target]:
    if not names:
        return []
    try:
        base = adapters_dir(adapters)
    except AdaptersNotFound as exc:
        fail(str(exc))
    targets: list[Target] = []
    for wanted in names:
        # The fuzzer asks for certificate checks (API mode): an adapter without one (litep2p,
        # handshakes only) is left out of 'all' and refused by name.
        for n in [a.name for a in SHIPPED if a.api] if wanted == "all" else [wanted]:
            adapter = BY_NAME.get(n)
            if adapter is None:
                fail(f"no shipped adapter {n!r} (known: {', '.join(BY_NAME)}, all)")
            if not adapter.api:
                fail(f"adapter {n} has no API mode (handshakes only), which the fuzzer needs: "
                     "fuzz the others")
            if not adapter.built(base):
                fail(f"adapter {n} is not built: run 'make adapters' (adapters/build {n})",
                     EXIT_ADAPTER)
            if n not in [t.name for t in targets]:
                try:
                    targets.append(adapter.target(base))
                except ReasonTableError as exc:
                    fail(f"reason table: {exc}")
    return targets
