"""Which of the CI jobs of tests/test_ci_job.py run: ``FIXTUREGEN_CI_JOBS`` (``make
builds-check`` names two, ``make ci-job-check`` none, that is all five)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.cijob import JOBS, chosen_jobs

ROOT = Path(__file__).resolve().parents[1]


def test_unset_or_empty_runs_every_job() -> None:
    assert chosen_jobs(None) == JOBS
    assert chosen_jobs("  ") == JOBS
    assert len({j.impl for j in JOBS}) == 5


def test_named_jobs_run_in_the_jobs_order() -> None:
    chosen = chosen_jobs("litep2p go-libp2p")
    assert [j.impl for j in chosen] == ["go-libp2p", "litep2p"]
    assert chosen[1].hidden == ("protoc",)


def test_a_name_that_is_no_job_is_refused() -> None:
    with pytest.raises(SystemExit, match="no CI job for go-libp2p2"):
        chosen_jobs("go-libp2p2 litep2p")


def test_builds_check_names_jobs_that_exist_and_ci_job_check_runs_all() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    named = re.search(r'^builds-check:.*\n\tFIXTUREGEN_CI_JOBS="([^"]*)"', makefile, re.M)
    assert named is not None
    assert [j.impl for j in chosen_jobs(named.group(1))] == ["go-libp2p", "litep2p"]
    every = re.search(r"^ci-job-check:.*\n\t(.*)$", makefile, re.M)
    assert every is not None
    assert "tests/test_ci_job.py" in every.group(1)
    assert every.group(1).startswith("FIXTUREGEN_CI_JOBS= ")  # all five, whatever is exported
