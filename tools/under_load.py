"""``make test-under-load``: the whole test suite, as ``make test`` runs it, in a fresh clone of
this checkout's HEAD, while every core is kept busy by another process, several times in a row.

A test that passes only when the machine is idle fails here: a limit derived from a measured
time that grows with the load, a delay that is "late" only on a fast machine, a signal sent
before the work it should interrupt has started. CI runs on a developer's busy machine, so
such a test can block a submission for nothing the change did.

The clone is made with ``git clone`` (what is committed, not the work tree's edits), its
adapters are built first with no load (``make adapters``, so that the handshake tests run
too), then each run is ``make test`` with one CPU-bound process per core beside it (started
before the run, stopped after it, whatever happens). Each run's output is kept in
``RUN-N.log`` in the clone's folder; the summary names every failed test of every run.

Usage: python -m tools.under_load [--runs N] [--load N] [--keep] [--into DIR]
Exit 0 when every run passed, 1 when one failed, 2 on a bad option or a clone that cannot be
made.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: A core kept busy: pure Python arithmetic, no I/O, no memory growth.
SPIN = "import itertools\nfor n in itertools.count():\n    n * n\n"
FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


@contextmanager
def load(processes: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``processes`` CPU-bound children for as long as the block runs (killed on the way out,
    by an exception or a signal too)."""
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL,
                                 start_new_session=True) for _ in range(processes)]
    try:
        yield spinners
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


def spinning(spinners: list[subprocess.Popen[bytes]]) -> bool:
    """Every load process is alive (a run under a load that died would prove nothing)."""
    return all(spinner.poll() is None for spinner in spinners)


def clone(into: Path) -> Path:
    tree = into / "fixturegen"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(tree)],
                   check=True, stdin=subprocess.DEVNULL)
    return tree


def run_tests(tree: Path, log: Path) -> tuple[int, float, list[str]]:
    """``make test`` in ``tree``, in a session of its own: stopped with its whole process group
    (pytest and its workers) when this tool is stopped, never left running."""
    start = time.monotonic()
    with log.open("wb") as out:
        make = subprocess.Popen(["make", "test"], cwd=tree, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            status = make.wait()
        finally:
            if make.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(make.pid, signal.SIGKILL)
                make.wait()
    seconds = time.monotonic() - start
    failed = sorted(set(FAILED.findall(log.read_text(errors="replace"))))
    return status, seconds, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.under_load",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="make test runs in a row (3)")
    parser.add_argument("--load", type=int, default=os.cpu_count() or 1,
                        help="CPU-bound processes beside each run (one per core)")
    parser.add_argument("--into", type=Path, help="make the clone here (default: a temporary "
                        "folder, removed afterwards unless --keep or a run failed)")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its logs")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 20 or not 1 <= args.load <= 64:
        parser.error("--runs must be 1 to 20 and --load 1 to 64")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the load is stopped on the way

    base = args.into.resolve() if args.into else Path(tempfile.mkdtemp(prefix="under-load-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        tree = clone(base)
    except (subprocess.CalledProcessError, OSError) as error:
        print(f"test-under-load: cannot clone {ROOT} into {base}: {error}", file=sys.stderr)
        return 2
    print(f"test-under-load: fresh clone of HEAD in {tree}; building its adapters (no load)",
          flush=True)
    if subprocess.run(["make", "adapters"], cwd=tree, stdin=subprocess.DEVNULL).returncode:
        print("test-under-load: make adapters failed in the clone", file=sys.stderr)
        return 1

    results: list[tuple[int, int, float, list[str], bool]] = []
    for number in range(1, args.runs + 1):
        log = base / f"RUN-{number}.log"
        print(f"test-under-load: run {number}/{args.runs}: make test beside {args.load} "
              f"CPU-bound processes (log {log})", flush=True)
        with load(args.load) as spinners:
            status, seconds, failed = run_tests(tree, log)
            loaded = spinning(spinners)
        results.append((number, status, seconds, failed, loaded))
        print(f"test-under-load: run {number}: exit {status} in {seconds:.0f} s"
              + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)

    bad = [r for r in results if r[1] != 0 or not r[4]]
    for number, status, _, failed, loaded in bad:
        if not loaded:
            print(f"test-under-load: run {number}: a load process died; the run proves nothing",
                  file=sys.stderr)
        elif not failed:
            print(f"test-under-load: run {number}: exit {status} (see RUN-{number}.log)",
                  file=sys.stderr)
    if not bad and not args.keep and args.into is None:
        shutil.rmtree(base, ignore_errors=True)
    elif bad or args.keep:
        print(f"test-under-load: the clone and its logs are in {base}")
    print(f"test-under-load: {len(results) - len(bad)} of {len(results)} runs passed under load")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
