"""The ``fixturegen`` command (and ``python -m fixturegen``).

SIGINT is answered with one line and exit 130 from the first instant: the handler is installed
before the CLI's imports (typer, cryptography, pydantic), which take a noticeable fraction of a
second, and the CLI itself turns a later KeyboardInterrupt into the same line.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def _interrupted_early(signum: int, frame: FrameType | None) -> None:
    sys.stderr.write("fixturegen: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def run() -> None:
    signal.signal(signal.SIGINT, _interrupted_early)
    from fixturegen.cli import main

    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())


if __name__ == "__main__":
    run()
