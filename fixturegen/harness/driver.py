"""Run one adapter process over a list of requests, bounded in time, memory and processes.

One process serves every case. Each request is written as a line; the driver then waits up to
``timeout`` seconds for the answer line. What can go wrong, and what the case becomes:

- no answer in time: ``hang``; the process is killed and a new one started for the next case;
- the process exits (or closes stdout) before answering: ``crash``; a new one is started;
- the answer is not a JSON object matching the reply schema (not UTF-8, a lone surrogate,
  nested too deep, longer than ``MAX_REPLY`` bytes, an unknown verdict), or names another
  case: ``error``; the process is restarted when the stream can no longer be trusted (a wrong
  id, an over-long line);
- a second answer to the case just answered: that case becomes ``error`` ("answered twice")
  and the driver goes on waiting for the current one.

Bounds. Until the adapter has answered once, each start gets ``startup`` extra seconds for its
first answer (interpreters and JITs warm up); after that, a restart gets twice what the first
answer took plus a second, at most ``startup``, so a restart does not pay the full grace again.
An adapter that has answered nothing in its first ``DEAD_STARTS`` starts is broken: the
remaining cases are not sent and get the failure of its last start (``hang`` or ``crash``), so a
mute adapter costs at most ``DEAD_STARTS`` x (``timeout`` + ``startup``). Replies are read in
buffered chunks, one line at most ``MAX_REPLY`` bytes; the adapter's stderr is kept up to
``MAX_STDERR`` bytes. Every adapter runs in its own process group, killed whole on a restart and
at the end, so nothing it started survives the run.

If the process cannot be started at all (the command is missing), ``AdapterStartError`` is
raised: that is a broken adapter, not a finding. If a restart cannot start, that case is
``crash`` and the answers gathered so far are kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Protocol

from pydantic import ValidationError

from fixturegen.harness.protocol import Listening, PeerEvent, Reply, Request
from fixturegen.verify.inputs import is_unicode, printable

DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP = 60.0
MAX_REPLY = 4 * 1024 * 1024  # a generate reply carries a chain: 16 certificates of 64 KiB, base64
MAX_STDERR = 8 * 1024 * 1024
DEAD_STARTS = 3
_CHUNK = 64 * 1024
_EOF = object()
_WAKE = object()  # the partner has news: ask it (not a line of the adapter's)
_PARTNER_POLL = 0.05
_TOO_LONG = object()


#: What makes a request just before it is sent: given when the adapter process first answered,
#: the request and the moment before which it must not be sent.
Late = Callable[[datetime], tuple[Request, datetime]]


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
    reply: Reply | None = None  # the validated reply, for request kinds that carry more
    peer: PeerEvent | None = None  # handshake: how the fixture peer's side ended


class Partner(Protocol):
    """The other end of a handshake request (the fixture peer), driven around each case."""

    def before(self, request: Request) -> Request | Answer:
        """Ready the peer; the request to send (with the address), or the case's answer when
        it cannot be run."""

    def listening(self, request: Request, address: str) -> None:
        """The adapter listens at ``address``: have the peer connect."""

    def waiting(self, request: Request) -> bytes | None:
        """Called while the adapter has not answered: a line to send it (once), e.g. that the
        peer's side is over, for a listener whose library never reports a failed handshake."""

    def after(self, request: Request, answer: Answer) -> Answer:
        """The adapter answered (or failed): collect the peer's side of the case."""

    def attach(self, wake: Callable[[], None]) -> None:
        """``wake`` interrupts the driver's wait for the adapter's answer, so that ``waiting``
        is asked at once when something happened on the partner's side."""

    def close(self) -> None:
        """The run is over: stop the partner's process."""


class _Process:
    def __init__(self, argv: Sequence[str], stderr: IO[bytes] | None, cwd: Path | None,
                 on_line: Callable[[], None] | None = None,
                 env: dict[str, str] | None = None) -> None:
        try:
            self.proc = subprocess.Popen(
                list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if stderr is not None else subprocess.DEVNULL,
                cwd=cwd, bufsize=0, start_new_session=True,
                env={**os.environ, **env} if env else None)
        except (OSError, ValueError) as exc:
            raise AdapterStartError(f"cannot start {' '.join(argv)}: {exc}") from exc
        self.lines: queue.Queue[object] = queue.Queue(maxsize=16)
        self.on_line = on_line  # called after each line is queued (a partner wakes the driver)
        self.answered = 0
        self.first_answer: datetime | None = None  # when it first answered (UTC)
        self._stopping = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()
        if stderr is not None:
            threading.Thread(target=self._keep_stderr, args=(stderr,), daemon=True).start()

    def _put(self, item: object) -> bool:
        while not self._stopping.is_set():
            try:
                self.lines.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _pump(self) -> None:
        """Split stdout into lines of at most MAX_REPLY bytes; an over-long one is _TOO_LONG.

        This thread alone reads and closes stdout: were another thread to close it while this
        one still reads, the descriptor number could go to the next adapter's pipe and this
        thread would swallow that adapter's answers."""
        assert self.proc.stdout is not None
        try:
            self._split(self.proc.stdout.fileno())
        finally:
            with contextlib.suppress(OSError):
                self.proc.stdout.close()

    def _split(self, fd: int) -> None:
        buffer = bytearray()
        skipping = False
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                break
            seen = len(buffer)  # only the new bytes can hold a newline not yet found
            buffer += chunk
            while (cut := buffer.find(b"\n", seen)) >= 0:
                line = bytes(buffer[:cut + 1])
                del buffer[:cut + 1]
                seen = 0
                if skipping:
                    skipping = False
                elif not self._put(line):
                    return
                elif self.on_line is not None:
                    self.on_line()
            if len(buffer) > MAX_REPLY:
                buffer.clear()
                if not skipping:
                    skipping = True
                    if not self._put(_TOO_LONG):
                        return
        if buffer and not skipping:
            self._put(bytes(buffer))
        self._put(_EOF)

    def _keep_stderr(self, sink: IO[bytes]) -> None:
        """Copy stderr to ``sink`` up to MAX_STDERR; like stdout, only this thread closes it."""
        assert self.proc.stderr is not None
        try:
            self._copy(self.proc.stderr.fileno(), sink)
        finally:
            with contextlib.suppress(OSError):
                self.proc.stderr.close()

    def _copy(self, fd: int, sink: IO[bytes]) -> None:
        kept = 0
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            if kept < MAX_STDERR:
                piece = chunk[:MAX_STDERR - kept]
                kept += len(piece)
                with contextlib.suppress(OSError, ValueError):
                    sink.write(piece)
                    if kept >= MAX_STDERR:
                        sink.write(b"\n[fixturegen: stderr cut here, at its size limit]\n")
                    sink.flush()

    def send(self, line: bytes) -> bool:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def stop(self) -> None:
        """Kill the adapter and everything it started (its process group)."""
        self._stopping.set()
        self._kill_group()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        if self.proc.stdin is not None:  # stdout and stderr are closed by their readers
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def close(self) -> None:
        """End of the corpus: close stdin, let the adapter exit on its own, then stop the rest."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        self.stop()


def _exit_text(proc: subprocess.Popen[bytes]) -> str:
    try:
        code = proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        return "closed its output"
    return f"exited with status {code}" if code >= 0 else f"killed by signal {-code}"


class _Run:
    """The state of one adapter over the request list."""

    def __init__(self, argv: Sequence[str], timeout: float, startup: float,
                 stderr: IO[bytes] | None, cwd: Path | None,
                 env: dict[str, str] | None = None) -> None:
        self.argv, self.timeout, self.startup = argv, timeout, startup
        self.env = env
        self.stderr, self.cwd = stderr, cwd
        self.proc: _Process | None = None
        self.starts = 0
        self.dead_starts = 0  # starts in a row that answered nothing
        self.ever_answered = False
        self.warmup: float | None = None  # what the first start needed for its first answer
        self.last_failure = "hang"
        self.cancel: threading.Event | None = None

    def grace(self) -> float:
        if self.warmup is None:  # not answered yet: every start may need the full warm-up
            return self.startup
        return min(self.startup, 2 * self.warmup + 1.0)

    def start(self) -> _Process:
        if self.proc is None:
            self.proc = _Process(self.argv, self.stderr, self.cwd, env=self.env)
            self.starts += 1
        return self.proc

    def drop(self, failure: str) -> None:
        self.last_failure = failure
        if self.proc is not None:
            if self.proc.answered == 0:
                self.dead_starts += 1
            self.proc.stop()
            self.proc = None

    def broken(self) -> bool:
        return not self.ever_answered and self.dead_starts >= DEAD_STARTS


class Stopped(Exception):
    """The run was told to stop (another shard of the same run failed or was interrupted)."""


def run_jobs(argv: Sequence[str], requests: Sequence[Request], *, jobs: int,
             timeout: float = DEFAULT_TIMEOUT, startup: float = DEFAULT_STARTUP,
             stderr_path: Path | None = None,
             progress: Callable[[Answer], None] | None = None,
             partner: Callable[[], Partner] | None = None,
             env: dict[str, str] | None = None,
             firsts: Mapping[str, Request] | None = None,
             late: Mapping[str, Late] | None = None,
             warmup: Request | None = None) -> list[Answer]:
    """:func:`run` over ``jobs`` adapter processes at once (each with its own partner, from
    ``partner()``), the requests dealt round-robin; the answers in the order of ``requests``.
    Each process sees its requests in corpus order, as a sequential run would, so a case's
    verdict does not depend on ``jobs`` (a request of ``firsts`` goes with its case). Shard
    K > 1 keeps its stderr in ``NAME.K.stderr.log`` beside ``stderr_path``. If one shard
    raises (or the run is interrupted), every other is stopped, its processes killed, and the
    exception goes on."""
    jobs = max(1, min(jobs, len(requests)))
    if jobs == 1:
        own = partner() if partner is not None else None
        try:
            return run(argv, requests, timeout=timeout, startup=startup,
                       stderr_path=stderr_path, progress=progress, partner=own, env=env,
                       firsts=firsts, late=late, warmup=warmup)
        finally:
            if own is not None:
                own.close()
    shards = [list(range(k, len(requests), jobs)) for k in range(jobs)]
    answers: list[Answer | None] = [None] * len(requests)
    lock = threading.Lock()
    stop = threading.Event()
    failures: list[BaseException] = []

    def told(answer: Answer) -> None:
        if progress is not None:
            with lock:
                progress(answer)

    def work(k: int) -> None:
        own = partner() if partner is not None else None
        log = stderr_path
        if stderr_path is not None and k > 0:
            log = stderr_path.with_name(stderr_path.name.replace(".stderr.log", "")
                                        + f".{k + 1}.stderr.log")
        try:
            got = run(argv, [requests[i] for i in shards[k]], timeout=timeout, startup=startup,
                      stderr_path=log, progress=told, partner=own, cancel=stop, env=env,
                      firsts=firsts, late=late, warmup=warmup)
            for i, answer in zip(shards[k], got, strict=True):
                answers[i] = answer
        except BaseException as exc:
            stop.set()
            with lock:
                failures.append(exc)
        finally:
            if own is not None:
                own.close()

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(jobs)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:
        stop.set()  # an interrupt: every shard kills its adapter and returns
        for t in threads:
            t.join()
        raise
    real = [f for f in failures if not isinstance(f, Stopped)]
    if real:
        raise real[0]
    if failures:
        raise failures[0]
    return [a for a in answers if a is not None]


def run(argv: Sequence[str], requests: Sequence[Request], *, timeout: float = DEFAULT_TIMEOUT,
        startup: float = DEFAULT_STARTUP, stderr_path: Path | None = None,
        cwd: Path | None = None,
        progress: Callable[[Answer], None] | None = None,
        partner: Partner | None = None,
        cancel: threading.Event | None = None,
        env: dict[str, str] | None = None,
        firsts: Mapping[str, Request] | None = None,
        late: Mapping[str, Late] | None = None,
        warmup: Request | None = None) -> list[Answer]:
    """Send every request to one adapter process (restarted after a hang or crash); with a
    ``partner``, each request is a handshake with it. With ``cancel``, the run checks it while
    it waits and raises :class:`Stopped` (its adapter killed) once it is set. ``firsts``: for
    a request's id, a request sent to the same process just before it (a case checked after
    another: the manifest's ``after``); that request's answer is not returned (the case it
    belongs to is answered under its own id). If the first fails (a hang or crash restarts
    the process, a skip presents nothing), the case is answered all the same, by a verifier
    that has not seen its first; to a broken adapter the first is not sent. ``late``: for a
    request's id, what makes it just before it is sent, from the moment the adapter process
    first answered, with the moment it may be sent: the run waits until then
    (:mod:`fixturegen.harness.clock`'s cases made after the adapter started). A process that
    has not answered yet (the first request of a run, or a restart) is sent ``warmup`` first,
    its answer dropped, so that it has loaded before that moment."""
    stderr: IO[bytes] | None = open(stderr_path, "wb") if stderr_path else None  # noqa: SIM115
    answers: list[Answer] = []
    state = _Run(argv, timeout, startup, stderr, cwd, env)
    if partner is not None:
        def wake() -> None:
            proc = state.proc
            if proc is not None:
                with contextlib.suppress(queue.Full):
                    proc.lines.put_nowait(_WAKE)

        partner.attach(wake)
    state.cancel = cancel
    try:
        for index, request in enumerate(requests):
            if cancel is not None and cancel.is_set():
                raise Stopped("stopped")
            previous = requests[index - 1].id if index else None
            past = answers
            if late and request.id in late:
                proc = state.proc
                if (warmup is not None and not state.broken()
                        and (proc is None or proc.first_answer is None)):
                    past = [_exchange(state, warmup, previous, past, partner)]
                    previous = warmup.id
                request = _made_late(state, late[request.id], cancel)
            first = firsts.get(request.id) if firsts else None
            if first is not None and not state.broken():
                past = [_exchange(state, first, previous, past, partner)]
                previous = first.id
            answer = _exchange(state, request, previous, past, partner)
            answers.append(answer)
            if progress is not None:
                progress(answer)
    finally:
        if state.proc is not None:
            state.proc.close()
        if stderr is not None:
            stderr.close()
    return answers


def _made_late(state: _Run, make: Late, cancel: threading.Event | None) -> Request:
    """The request ``make`` gives for the current process, once its moment has come (the wait
    is short: a second or two; a cancel ends it)."""
    proc = state.proc
    started = proc.first_answer if proc is not None and proc.first_answer is not None else (
        datetime.now(UTC))
    request, after = make(started)
    while (left := (after - datetime.now(UTC)).total_seconds()) > 0:
        if cancel is not None and cancel.wait(min(left, _PARTNER_POLL * 4)):
            raise Stopped("stopped")
        if cancel is None:
            time.sleep(min(left, _PARTNER_POLL * 4))
    return request


def _exchange(state: _Run, request: Request, previous: str | None, answers: list[Answer],
              partner: Partner | None) -> Answer:
    """One request and its answer (with a partner, the handshake around it)."""
    if partner is None or state.broken():
        return _one(state, request, previous, answers)
    prepared = partner.before(request)
    if isinstance(prepared, Answer):
        return prepared
    return partner.after(prepared, _one(state, prepared, previous, answers, partner))


def _one(state: _Run, request: Request, previous: str | None, answers: list[Answer],
         partner: Partner | None = None) -> Answer:
    if state.broken():
        return Answer(request.id, None, None,
                      f"not sent: the adapter answered nothing in {state.dead_starts} starts",
                      state.last_failure, 0.0)
    try:
        proc = state.start()
    except AdapterStartError as exc:
        if state.starts == 0:
            raise
        return Answer(request.id, None, None, f"restart failed: {exc}", "crash", 0.0)
    line = (request.model_dump_json() + "\n").encode()
    start = time.perf_counter()
    limit = state.timeout + (state.grace() if proc.answered == 0 else 0.0)
    if not proc.send(line):
        text = f"adapter {_exit_text(proc.proc)} before reading the request"
        state.drop("crash")
        return Answer(request.id, None, None, text, "crash", time.perf_counter() - start)
    while True:
        left = limit - (time.perf_counter() - start)
        if state.cancel is not None and state.cancel.is_set():
            raise Stopped("stopped")
        try:
            if partner is None and state.cancel is None:
                raw = proc.lines.get(timeout=max(0.0, left))
            else:  # look at the partner (or the cancel) between short waits
                raw = proc.lines.get(timeout=max(0.0, min(left, _PARTNER_POLL)))
        except queue.Empty:
            if partner is None and left > _PARTNER_POLL:
                continue  # only the cancel was to be looked at
            raw = _WAKE if partner is not None and left > _PARTNER_POLL else None
            if raw is None:
                state.drop("hang")
                return Answer(request.id, None, None, f"no answer within {limit:g} s", "hang",
                              time.perf_counter() - start)
        if raw is _WAKE:
            assert partner is not None
            note = partner.waiting(request)
            if note is not None:
                proc.send(note)
            continue
            return Answer(request.id, None, None, f"no answer within {limit:g} s", "hang",
                          time.perf_counter() - start)
        elapsed = time.perf_counter() - start
        if raw is _EOF:
            text = f"adapter {_exit_text(proc.proc)} without answering"
            state.drop("crash")
            return Answer(request.id, None, None, text, "crash", elapsed)
        if raw is _TOO_LONG:
            state.drop("error")
            return Answer(request.id, None, None,
                          f"answer longer than {MAX_REPLY} bytes", "error", elapsed)
        assert isinstance(raw, bytes)
        if partner is not None and (address := _listening(request.id, raw)) is not None:
            partner.listening(request, address)  # not the answer yet: go on waiting
            continue
        if proc.answered == 0 and state.starts == 1 and state.warmup is None:
            state.warmup = elapsed
        if proc.answered == 0:
            proc.first_answer = datetime.now(UTC)
        proc.answered += 1
        state.ever_answered = True
        state.dead_starts = 0
        answer, in_step, named = _parse(request.id, raw, elapsed)
        if (previous is not None and named == previous and answer.failure == "error"
                and answers and answers[-1].failure is None):
            # A second answer to the case before: that case is in error, this one still open.
            answers[-1] = replace(answers[-1], verdict=None, peer_id=None,
                                  error="answered twice", failure="error", reply=None)
            continue
        if not in_step:  # answers no longer match requests: start afresh
            state.drop("error")
        return answer


def _listening(case: str, raw: bytes) -> str | None:
    """The address of a ``listening`` line for ``case``; None for any other line."""
    if b'"listening"' not in raw:
        return None
    try:
        line = Listening.model_validate_json(raw)
    except (ValueError, ValidationError, RecursionError):
        return None
    return line.listening if line.id == case and is_unicode(line.listening) else None


def _parse(case: str, raw: bytes, elapsed: float) -> tuple[Answer, bool, str | None]:
    """The answer to ``case``, whether the adapter's stream is still in step, and the case the
    reply names (None when it is unreadable)."""
    shown = raw[:200].decode("utf-8", "replace").rstrip()
    try:
        data = json.loads(raw)
        reply = Reply.model_validate(data)
    except (ValueError, ValidationError, RecursionError):
        return (Answer(case, None, None, f"unreadable answer: {shown!r}", "error", elapsed),
                True, None)
    texts = (reply.id, reply.peer_id, reply.error, reply.certificate_key,
             *(reply.certificates or []))
    if not all(is_unicode(t) for t in texts if t is not None):
        return (Answer(case, None, None, "answer holds text that is not Unicode (a lone "
                       "surrogate)", "error", elapsed), reply.id == case, None)
    if reply.id != case:
        return (Answer(case, None, None, f"the answer names case {printable(repr(reply.id))}",
                       "error", elapsed), False, reply.id)
    return (Answer(case, reply.verdict, reply.peer_id, reply.error, None, elapsed, reply),
            True, case)
