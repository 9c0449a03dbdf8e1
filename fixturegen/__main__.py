"""The ``fixturegen`` command (and ``python -m fixturegen``).

SIGINT is answered with one line and exit 130 from the first instant: the handler is installed
before the CLI's imports (typer, cryptography, pydantic), which take a noticeable fraction of a
second, and the CLI itself turns a later KeyboardInterrupt into the same line. SIGTERM and
SIGHUP (a CI job's timeout, a closed terminal) take the same way out, so that a run stopped by
them also stops its adapters and fixture peers and leaves its output as an interrupt does:
one line (``fixturegen: terminated``) and exit 128 + the signal's number. A signal that was
ignored when the command started (``nohup``, a ``trap '' HUP``) stays ignored.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stopped_early(signum: int, frame: FrameType | None) -> None:
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    sys.stderr.write(f"fixturegen: {word}\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def run() -> None:
    # A signal ignored by whoever started us (nohup, a trap) stays ignored.
    handled = [s for s in _STOPPING if signal.getsignal(s) is not signal.SIG_IGN]
    for signum in handled:
        signal.signal(signum, _stopped_early)
    from fixturegen.cli import main
    from fixturegen.errors import stop_on_signal

    for signum in handled:
        signal.signal(signum, stop_on_signal)
    sys.exit(main())


if __name__ == "__main__":
    run()
