"""The CI job of docs/guides/ci.md, run for real: the guide's own script, a wheel of this
checkout, and a source tree of each shipped implementation's pinned release, as its
repository's checkout would be. Used by tests/test_ci_job.py and by ``make bench-ci-job``.

Usage: python -m tools.cijob [IMPL...]   (the job's time per implementation, cold and warm)
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from fixturegen.builds.cache import default_cache
from fixturegen.harness.adapters import BY_NAME
from fixturegen.mutation.bugs import applied, read

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guides" / "ci.md"


@dataclass(frozen=True)
class Job:
    impl: str
    bug: str  # a bug model of adapters/FOLDER/mutation/IMPL.bugs.json, the planted bug
    #: Tools left off PATH, as a CI machine may lack them (the build must fetch them).
    hidden: tuple[str, ...] = ()


#: One job per implementation the guide has a workflow for.
JOBS = (
    Job("go-libp2p", "accepts-multi-cert-chain"),
    Job("rust-libp2p", "parse-ignores-verify-result"),
    Job("js-libp2p", "accepts-expired"),
    Job("py-libp2p-tls", "tls-accepts-expired-certificate"),
    Job("litep2p", "parse-ignores-verify-result", hidden=("protoc",)),
)


def chosen_jobs(names: str | None) -> tuple[Job, ...]:
    """The jobs ``FIXTUREGEN_CI_JOBS`` names (space-separated implementations; all when it is
    unset or empty): ``make builds-check`` runs two, ``make ci-job-check`` all five. A name
    that is no job is refused, so a typo cannot select nothing."""
    wanted = (names or "").split()
    unknown = sorted(set(wanted) - {j.impl for j in JOBS})
    if unknown:
        raise SystemExit(f"FIXTUREGEN_CI_JOBS: no CI job for {', '.join(unknown)}")
    return tuple(j for j in JOBS if not wanted or j.impl in wanted)


@dataclass(frozen=True)
class Ran:
    status: int
    stderr: str
    seconds: float


def the_script(folder: Path) -> Path:
    """The guide's ``fixturegen-ci.sh``, exactly as the page shows it, written in ``folder``."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(r'```sh title="fixturegen-ci.sh"\n(.*?)\n```', text, re.S)
    if found is None:
        raise SystemExit("docs/guides/ci.md has no fixturegen-ci.sh block")
    script = folder / "fixturegen-ci.sh"
    script.write_text(found.group(1) + "\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def build_wheel(out: Path) -> Path:
    """A wheel of this checkout (``pip wheel``), in ``out``."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "--wheel-dir", str(out), str(ROOT)], capture_output=True, text=True,
                          timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip wheel failed: {done.stderr.strip()[-500:]}")
    (made,) = out.glob("fixturegen-*.whl")
    return made


def unpack(impl: str, into: Path) -> None:
    """The registry's source of ``impl``'s pinned release, in ``into``."""
    adapter = BY_NAME[impl]
    done = subprocess.run([sys.executable, str(ROOT / "adapters" / adapter.folder / "mutate"),
                           "source", "--impl", impl, "--version", adapter.version, "--into",
                           str(into)], capture_output=True, text=True, timeout=900, cwd=ROOT,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"cannot unpack {impl}: {(done.stdout + done.stderr).strip()}")


def plant(impl: str, bug_id: str, tree: Path) -> None:
    """Apply the bug model ``bug_id``'s edits to ``tree``."""
    adapter = BY_NAME[impl]
    bugs = read(ROOT / "adapters" / adapter.folder / "mutation" / f"{impl}.bugs.json")
    (bug,) = [b for b in bugs.bugs if b.id == bug_id]
    for edit in bug.edits:
        path = tree / edit.file
        path.write_text(applied(path.read_text(encoding="utf-8"), edit), encoding="utf-8")


def failures(junit: Path) -> set[str]:
    """ENTRY:CASE of every JUnit test case that failed."""
    out = set()
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None:
            out.add(f"{case.get('classname')}:{case.get('name')}")
    return out


def installed_fixturegen(wheel: Path) -> Path:
    """The ``fixturegen`` the guide's script installed ``wheel`` as (its virtualenv is named
    by the wheel's hash, in the build cache)."""
    cache = default_cache()
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    return cache / f"venv-{digest}" / "bin" / "fixturegen"


def path_without(folder: Path, hidden: tuple[str, ...]) -> str:
    """PATH as it is, less the programs ``hidden``: every other program of its folders linked
    into ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not Path(directory).is_dir():
            continue
        for program in Path(directory).iterdir():
            if program.name not in hidden and not (folder / program.name).exists():
                (folder / program.name).symlink_to(program)
    return str(folder)


def run_job(script: Path, tree: Path, job: Job, wheel: Path) -> Ran:
    """The script, from inside ``tree``, as the workflow runs it."""
    env = {**os.environ, "FIXTUREGEN_IMPL": job.impl, "FIXTUREGEN_PACKAGE": str(wheel)}
    for leaked in ("FIXTUREGEN_ADAPTERS", "VIRTUAL_ENV", "PYTHONPATH", "PROTOC"):
        env.pop(leaked, None)  # the installed fixturegen must find its own adapters
    if job.hidden:
        env["PATH"] = path_without(script.parent / "path", job.hidden)
    start = time.perf_counter()
    done = subprocess.run([str(script)], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=3600, check=False)
    return Ran(done.returncode, done.stderr, time.perf_counter() - start)


def main(argv: list[str]) -> int:
    chosen = [j for j in JOBS if not argv or j.impl in argv]
    with tempfile.TemporaryDirectory(prefix="fixturegen-ci-job-") as tmp:
        base = Path(tmp)
        wheel = build_wheel(base / "wheel")
        print("the CI job (docs/guides/ci.md), per implementation, from install to verdict: "
              "the first run of a new tree (its adapter built against it; the venv, corpus "
              "and fixture peer already in the cache), the same tree again (its build from "
              "the cache), and the tree with one file changed (a pull request: rebuilt "
              "incrementally, the planted bug standing in for the change)")
        for job in chosen:
            script = the_script(base)
            tree = base / job.impl
            unpack(job.impl, tree)
            first = run_job(script, tree, job, wheel)
            (tree / ".fixturegen").mkdir()
            (tree / ".fixturegen" / "known-divergences.txt").write_bytes(
                (tree / "fixturegen-report" / "known-divergences.txt").read_bytes())
            warm = run_job(script, tree, job, wheel)
            plant(job.impl, job.bug, tree)
            changed = run_job(script, tree, job, wheel)
            print(f"  {job.impl:14} new tree {first.seconds:5.0f} s (exit {first.status})   "
                  f"same tree {warm.seconds:5.0f} s (exit {warm.status})   one file changed "
                  f"{changed.seconds:5.0f} s (exit {changed.status})   target: under 60 s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
