"""Run one adapter process over a list of requests.

One process serves every case. Each request is written as a line; the driver then waits up to
``timeout`` seconds for the answer line (the first case after a start also gets ``startup``
seconds). What can go wrong, and what the case becomes:

- no answer in time: ``hang``; the process is killed and a new one started for the next case;
- the process exits (or closes stdout) before answering: ``crash``; a new one is started;
- the answer is not a JSON object matching the reply schema, or names another case: ``error``;
  the process is restarted when the stream can no longer be trusted (a wrong id).

If a process cannot be started at all (the command is missing), ``AdapterStartError`` is raised:
that is a broken adapter, not a finding.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from fixturegen.harness.protocol import Reply, Request

DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP = 60.0
_EOF = object()


class AdapterStartError(Exception):
    """The adapter command could not be started."""


@dataclass(frozen=True)
class Answer:
    """What the driver made of one case: a reply, or the failure that stood in for one."""

    id: str
    verdict: str | None  # accept | reject | skip; None when the adapter failed the case
    peer_id: str | None
    error: str | None
    failure: str | None  # hang | crash | error | None
    seconds: float


class _Process:
    def __init__(self, argv: Sequence[str], stderr: IO[bytes] | None, cwd: Path | None) -> None:
        try:
            self.proc = subprocess.Popen(
                list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=stderr if stderr is not None else subprocess.DEVNULL,
                cwd=cwd, bufsize=0)
        except OSError as exc:
            raise AdapterStartError(f"cannot start {' '.join(argv)}: {exc}") from exc
        self.lines: queue.Queue[object] = queue.Queue()
        self.fresh = True
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(_EOF)

    def send(self, line: bytes) -> bool:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def close(self) -> None:
        """End of the corpus: close stdin and let the adapter exit on its own."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.stop()


def _exit_text(proc: subprocess.Popen[bytes]) -> str:
    try:
        code = proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        return "closed its output"
    return f"exited with status {code}" if code >= 0 else f"killed by signal {-code}"


def run(argv: Sequence[str], requests: Sequence[Request], *, timeout: float = DEFAULT_TIMEOUT,
        startup: float = DEFAULT_STARTUP, stderr_path: Path | None = None,
        cwd: Path | None = None,
        progress: Callable[[Answer], None] | None = None) -> list[Answer]:
    """Send every request to one adapter process (restarted after a hang or crash)."""
    stderr: IO[bytes] | None = open(stderr_path, "wb") if stderr_path else None  # noqa: SIM115
    answers: list[Answer] = []
    proc: _Process | None = None
    try:
        for request in requests:
            if proc is None:
                proc = _Process(argv, stderr, cwd)
            line = (request.model_dump_json() + "\n").encode()
            start = time.perf_counter()
            limit = timeout + (startup if proc.fresh else 0.0)
            proc.fresh = False
            answer: Answer
            if not proc.send(line):
                answer = Answer(request.id, None, None,
                                f"adapter {_exit_text(proc.proc)} before reading the request",
                                "crash", time.perf_counter() - start)
                proc.stop()
                proc = None
            else:
                try:
                    raw = proc.lines.get(timeout=limit)
                except queue.Empty:
                    raw = None
                elapsed = time.perf_counter() - start
                if raw is None:
                    answer = Answer(request.id, None, None,
                                    f"no answer within {limit:g} s", "hang", elapsed)
                    proc.stop()
                    proc = None
                elif raw is _EOF:
                    answer = Answer(request.id, None, None,
                                    f"adapter {_exit_text(proc.proc)} without answering",
                                    "crash", elapsed)
                    proc.stop()
                    proc = None
                else:
                    assert isinstance(raw, bytes)
                    answer, in_step = _parse(request.id, raw, elapsed)
                    if not in_step:  # answers no longer match requests: start afresh
                        proc.stop()
                        proc = None
            answers.append(answer)
            if progress is not None:
                progress(answer)
    finally:
        if proc is not None:
            proc.close()
        if stderr is not None:
            stderr.close()
    return answers


def _parse(case: str, raw: bytes, elapsed: float) -> tuple[Answer, bool]:
    """The answer to ``case``, and whether the adapter's stream is still in step."""
    shown = raw[:200].decode("utf-8", "replace").rstrip()
    try:
        data = json.loads(raw)
        reply = Reply.model_validate(data)
    except (ValueError, ValidationError):
        return Answer(case, None, None, f"unreadable answer: {shown!r}", "error", elapsed), True
    if reply.id != case:
        return (Answer(case, None, None, f"the answer names case {reply.id!r}", "error",
                       elapsed), False)
    return Answer(case, reply.verdict, reply.peer_id, reply.error, None, elapsed), True
