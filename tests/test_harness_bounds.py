"""The driver stays bounded whatever the adapter does: time, memory, processes, decoding."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from fixturegen.harness import driver
from fixturegen.harness.protocol import Request

ROOT = Path(__file__).resolve().parents[1]
MISBEHAVE = [sys.executable, str(ROOT / "tests/adapters/misbehave.py")]


def req(case: str) -> Request:
    return Request(id=case, certificates=[])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for every purpose here
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def test_a_never_answering_adapter_costs_three_starts_then_every_case_is_hang(
        tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    ids = [f"ok.{n}" for n in range(500)]
    answers = driver.run([*MISBEHAVE, str(starts), "--mute"], [req(i) for i in ids],
                         timeout=0.3, startup=1.5)
    assert [a.id for a in answers] == ids
    assert {a.failure for a in answers} == {"hang"}
    assert starts.read_text().count("start") == driver.DEAD_STARTS
    # Until it has answered, each start gets the grace; then it is broken and nothing is sent.
    assert [a.error for a in answers[:3]] == ["no answer within 1.8 s"] * 3
    assert answers[-1].error == (
        f"not sent: the adapter answered nothing in {driver.DEAD_STARTS} starts")


@pytest.mark.slow
def test_hangs_after_a_first_answer_are_findings_not_a_broken_adapter(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    ids = ["ok.A", "hang.1", "hang.2", "hang.3", "hang.4", "ok.B"]
    answers = driver.run([*MISBEHAVE, str(starts)], [req(i) for i in ids], timeout=2.0,
                         startup=100.0)
    assert [a.failure for a in answers] == [None, "hang", "hang", "hang", "hang", None]
    # A restart gets the timeout plus twice the first answer's time plus a second, not the
    # whole grace (100 s: far above any interpreter start, however loaded the machine).
    limits = {float(a.error.split()[3]) for a in answers[2:5] if a.error}
    assert len(limits) == 1 and 3.0 <= limits.pop() < 2.0 + 100.0
    assert answers[-1].peer_id == "B"
    # Every hang was sent to a process (four restarts after the first start).
    assert starts.read_text().count("start") == 5


def test_decoding_never_raises(tmp_path: Path) -> None:
    ids = ["flood.x", "ok.A", "surrogate.x", "deep.x", "ok.B", "twice.C", "ok.D", "stderr.E"]
    log = tmp_path / "stderr.log"
    answers = driver.run([*MISBEHAVE, str(tmp_path / "starts")], [req(i) for i in ids],
                         timeout=30.0, startup=60.0, stderr_path=log)  # nothing here hangs
    got = {a.id: a for a in answers}
    assert got["flood.x"].failure == "error"
    assert f"longer than {driver.MAX_REPLY} bytes" in (got["flood.x"].error or "")
    assert got["ok.A"].verdict == "accept"
    assert got["surrogate.x"].failure == "error" and "surrogate" in (got["surrogate.x"].error
                                                                     or "")
    assert got["deep.x"].failure == "error" and "unreadable" in (got["deep.x"].error or "")
    assert got["ok.B"].verdict == "accept"
    # Answered twice: that case is in error, and the next case still gets its own answer.
    assert (got["twice.C"].failure, got["twice.C"].error) == ("error", "answered twice")
    assert got["ok.D"].verdict == "accept" and got["ok.D"].peer_id == "D"
    assert got["stderr.E"].verdict == "accept"
    size = log.stat().st_size
    assert driver.MAX_STDERR <= size < driver.MAX_STDERR + 200


def test_a_restarted_adapter_keeps_every_answer(tmp_path: Path) -> None:
    """After an over-long line the old process is dropped while its reader may still be
    draining the pipe; that reader must never read from the next process's stdout (a CI run
    lost an answer to it: the closed descriptor's number went to the new pipe)."""
    ids = [case for n in range(25) for case in (f"flood.{n}", f"ok.a{n}", f"ok.b{n}")]
    answers = driver.run([*MISBEHAVE, str(tmp_path / "starts")], [req(i) for i in ids],
                         timeout=30.0, startup=60.0)  # nothing here hangs
    assert [a.failure for a in answers] == [
        "error" if case.startswith("flood") else None for case in ids]
    assert [a.peer_id for a in answers if a.id.startswith("ok")] == [
        case.split(".")[1] for case in ids if case.startswith("ok")]


@pytest.mark.slow
def test_no_process_the_adapter_started_survives(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    ids = ["fork.1", "ok.A", "fork.2", "crash.x", "fork.3"]
    answers = driver.run([*MISBEHAVE, str(starts)], [req(i) for i in ids], timeout=2.0,
                         startup=10.0)
    assert [a.failure for a in answers] == ["hang", None, "hang", "crash", "hang"]
    children = [int(line.split()[1]) for line in starts.read_text().splitlines()
                if line.startswith("child ")]
    assert len(children) == 3
    # SIGKILL is delivered asynchronously: give the kernel a bounded moment to finish them
    deadline = time.monotonic() + 10
    while [pid for pid in children if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in children if alive(pid)]


def test_a_restart_that_cannot_start_keeps_what_was_gathered(tmp_path: Path) -> None:
    script = tmp_path / "once.py"
    # Answers one case, then hangs; deletes itself, so that the restart cannot start.
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys, time\n"
        "os.unlink(sys.argv[0])\n"
        "for n, line in enumerate(sys.stdin):\n"
        "    if n:\n"
        "        time.sleep(60)\n"
        "    print(json.dumps({'id': json.loads(line)['id'], 'verdict': 'reject'}), flush=True)\n")
    script.chmod(0o755)
    answers = driver.run([str(script)], [req("a"), req("b"), req("c")],
                         timeout=1.0, startup=10.0)
    assert [a.failure for a in answers] == [None, "hang", "crash"]
    assert answers[0].verdict == "reject"
    assert (answers[2].error or "").startswith("restart failed: cannot start")
