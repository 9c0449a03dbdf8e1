"""Forked worker processes for work that is all CPU (building the corpus, making fuzz mutants),
with the signal handling a command line needs.

Workers are forked (the default on Linux), so they start with the parent's memory: objects that
do not pickle (private keys) reach them as ``initargs``. Each worker dies with its parent (even
on its SIGKILL), leaves SIGINT and SIGHUP (a terminal's, sent to the whole group) to the
parent, which cancels the queued work, and dies on SIGTERM, as the pool expects when it is
broken. A worker that dies is a :class:`WorkerDied`, never a traceback.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, TypeVar

T = TypeVar("T")
#: The signals that stop a run (see fixturegen/__main__.py).
STOPPING = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
_PR_SET_PDEATHSIG = 1


#: Whether this platform forks (not Windows); :class:`Workers` needs it.
CAN_FORK = "fork" in multiprocessing.get_all_start_methods()


class WorkerDied(Exception):
    """A worker process died (killed, out of memory) before its work was done."""


def _worker_start(parent: int, initializer: Callable[..., None] | None,
                  initargs: tuple[Any, ...]) -> None:
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)  # forked while the parent blocked them
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    if initializer is not None:
        initializer(*initargs)


class Workers:
    """A pool of ``count`` forked workers; ``with Workers(2) as w: w.map(fn, items)``.

    Leaving the block by an exception (an interrupt included) drops the queued work: each
    worker finishes the task it holds and exits."""

    def __init__(self, count: int, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> None:
        # Fork by name: Python 3.14 makes forkserver the default on Linux, and macOS spawns,
        # which would pickle initargs (keys do not pickle) and re-import everything.
        self.pool = ProcessPoolExecutor(max_workers=count, initializer=_worker_start,
                                        initargs=(os.getpid(), initializer, initargs),
                                        mp_context=multiprocessing.get_context("fork"))

    def map(self, fn: Callable[..., T], *iterables: Iterable[Any], chunksize: int = 1
            ) -> Iterator[T]:
        """``fn`` over the items, results in their order (as :func:`map`)."""
        # The first submission forks the workers, then starts the pool's manager thread. A
        # stopping signal between the two left a thread that shutdown cannot join: it raised
        # RuntimeError and the run hung (seen on a loaded machine). The signals wait until
        # every task is submitted; one that came meanwhile is handled right after.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
        try:
            results = self.pool.map(fn, *iterables, chunksize=chunksize)
        except BrokenProcessPool as exc:  # a worker died while the pool was idle
            raise self._died(exc) from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return self._results(results)

    def _results(self, results: Iterator[T]) -> Iterator[T]:
        try:
            yield from results
        except BrokenProcessPool as exc:
            raise self._died(exc) from None

    def _died(self, exc: BrokenProcessPool) -> WorkerDied:
        self.pool.shutdown(wait=True, cancel_futures=True)
        return WorkerDied(str(exc))

    def close(self, *, cancel: bool = False) -> None:
        self.pool.shutdown(wait=True, cancel_futures=cancel)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(cancel=kind is not None)
