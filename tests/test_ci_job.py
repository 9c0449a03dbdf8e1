"""The CI job of docs/guides/ci.md, run as a maintainer's repository would run it
(``make builds-check`` runs two of the five jobs, CI with it; ``make ci-job-check`` all).

A wheel is built from this checkout and installed by the guide's own script (taken from the
page) into a virtualenv in the build cache, outside any checkout. For each of the five
implementations the source of its pinned release is unpacked from its registry, as a checkout
would be, and the script runs from inside it (``--source .``, both modes, no ``--corpus``: the
installed fixturegen builds its adapter and generates its corpus in the cache); litep2p's with
no protoc on PATH, as a CI machine without protobuf-compiler (its build installs PyPI's):

1. the untouched tree without a known list fails (exit 1: every divergence is new) and writes
   ``known-divergences.txt``;
2. with that list committed as ``.fixturegen/known-divergences.txt`` it passes (exit 0);
3. the same tree with a planted bug (one of the implementation's reviewed bug models, applied
   as its edits say) fails (exit 1), and the JUnit file's new failures are cases the bug
   changed, none of them in the list; and the installed fixturegen's ``harness check`` (a
   ``git bisect run`` step) on one of them, from the same tree, says it diverges (exit 1).

The build cache is the user's (``$FIXTUREGEN_CACHE``, else ``~/.cache/fixturegen``), as
tests/test_real_builds.py's, so that the builds of a second run come from it; each run's time
is printed (``-s``). ``FIXTUREGEN_CI_JOBS`` names the implementations whose job runs (all five
when unset): ``make builds-check`` runs go-libp2p's and litep2p's (the one without protoc),
``make ci-job-check`` all five.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tools.cijob import (
    JOBS,
    Job,
    build_wheel,
    chosen_jobs,
    failures,
    installed_fixturegen,
    path_without,
    plant,
    run_job,
    the_script,
    unpack,
)

pytestmark = pytest.mark.builds


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.mark.parametrize("job", chosen_jobs(os.environ.get("FIXTUREGEN_CI_JOBS")),
                         ids=lambda j: j.impl)
def test_the_ci_job_fails_on_a_planted_bug_and_passes_the_untouched_tree(
        job: Job, wheel: Path, tmp_path: Path) -> None:
    script = the_script(tmp_path)
    tree = tmp_path / "checkout"
    unpack(job.impl, tree)
    report = tree / "fixturegen-report"

    first = run_job(script, tree, job, wheel)
    print(f"ci job {job.impl}: new tree, no known list: exit {first.status} in "
          f"{first.seconds:.0f} s")
    assert "Traceback" not in first.stderr, first.stderr
    assert first.status == 1, first.stderr
    assert "every divergence is new" in first.stderr
    assert "new divergences" in first.stderr
    listed = (report / "known-divergences.txt").read_text(encoding="utf-8")
    accepted = {f"{line.split()[0]}:{line.split()[1]}" for line in listed.splitlines()
                if line and not line.startswith("#")}
    assert accepted, "the pinned release diverges somewhere: its list cannot be empty"
    assert failures(report / "junit.xml") == accepted
    (tree / ".fixturegen").mkdir()
    (tree / ".fixturegen" / "known-divergences.txt").write_text(listed, encoding="utf-8")

    second = run_job(script, tree, job, wheel)
    print(f"ci job {job.impl}: the same tree, its known list: exit {second.status} in "
          f"{second.seconds:.0f} s")
    assert second.status == 0, second.stderr
    assert failures(report / "junit.xml") == set()
    summary = (report / "summary.md").read_text(encoding="utf-8")
    assert re.search(r"catalogue `\d+-[0-9a-f]{12}`", summary), summary[:400]

    plant(job.impl, job.bug, tree)
    third = run_job(script, tree, job, wheel)
    print(f"ci job {job.impl}: planted bug {job.bug}: exit {third.status} in "
          f"{third.seconds:.0f} s")
    assert third.status == 1, third.stderr
    new = failures(report / "junit.xml")
    assert new, "a planted bug the job does not see"
    assert not new & accepted
    assert f"{len(new)} divergences not in" in third.stderr
    # the installed fixturegen's harness check (a git bisect run's step) on the same tree
    label, case = sorted(new)[0].split(":", 1)
    entry = label.split("@", 1)[1] if "@" in label else "api"
    check = subprocess.run([str(installed_fixturegen(wheel)), "harness", "check", "--impl",
                            job.impl, "--source", ".", "--case", case, "--entry", entry],
                           cwd=tree, capture_output=True, text=True, timeout=1800,
                           env={k: v for k, v in os.environ.items()
                                if k not in ("FIXTUREGEN_ADAPTERS", "PYTHONPATH")}
                           | ({"PATH": path_without(tmp_path / "path", job.hidden)}
                              if job.hidden else {}))
    assert check.returncode == 1, check.stdout + check.stderr


def test_the_installed_fixturegen_builds_other_versions_runs_campaigns_and_profiles(
        wheel: Path, tmp_path: Path) -> None:
    """From inside a py-libp2p checkout, the installed fixturegen (no fixturegen checkout, no
    corpus given) also builds a released version (``--impl NAME@VERSION``), runs a mutation
    campaign over the tree (``mutate --source .``) and compares the tree's handshake cost with
    the pinned release's (``harness profile --against pinned``)."""
    job = next(j for j in JOBS if j.impl == "py-libp2p-tls")
    the_script(tmp_path)
    tree = tmp_path / "checkout"
    unpack(job.impl, tree)
    assert run_job(tmp_path / "fixturegen-ci.sh", tree, job, wheel).status == 1  # installs it
    fixturegen = str(installed_fixturegen(wheel))
    env = {k: v for k, v in os.environ.items() if k not in ("FIXTUREGEN_ADAPTERS", "PYTHONPATH")}

    def installed(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([fixturegen, *args], cwd=tree, env=env, capture_output=True,
                              text=True, timeout=1800, check=False)
        assert "Traceback" not in done.stderr, done.stderr
        return done

    older = installed("harness", "run", "--impl", "py-libp2p-tls@0.7.0", "--no-interop",
                      "--out", "older")
    assert older.returncode == 0, older.stderr
    assert "py-libp2p-tls 0.7.0: 1" in older.stdout
    mutant = "libp2p/security/tls/certificate.py:356:1:ReplaceUnaryOperator_Delete_Not"
    campaign = installed("mutate", "--impl", "py-libp2p-tls", "--source", ".", "--mutant",
                         mutant, "--no-upstream", "--out", str(tmp_path / "campaign"))
    assert campaign.returncode == 0, campaign.stderr
    assert "corpus killed 1 (100.0%)" in campaign.stdout + campaign.stderr
    profile = installed("harness", "profile", "--impl", "py-libp2p-tls", "--source", ".",
                        "--against", "pinned", "--rounds", "2", "--batch", "2")
    assert profile.returncode == 0, profile.stderr
    assert "tcp" in profile.stdout
