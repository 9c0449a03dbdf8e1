"""The command line's one way to fail: one printable line on stderr and a documented exit code.

Shared by ``fixturegen.cli`` and ``fixturegen.harness.commands`` (each documents its codes).
"""

from __future__ import annotations

import os
import signal
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import NoReturn

import typer

from fixturegen.verify.inputs import printable

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # SIGINT; SIGTERM and SIGHUP give 128 + their number

#: The terminating signal received (SIGTERM, SIGHUP), if one was.
received: list[int] = []
_OWNER = os.getpid()  # the process that installed the handler (not a forked worker)


def stop_on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGINT, SIGTERM and SIGHUP take the interrupt's way out (KeyboardInterrupt): every
    ``finally`` runs, so adapters and fixture peers are stopped and staged output is dropped.

    A worker forked by ``generate`` or ``fuzz`` (fixturegen/workers.py) inherits this handler
    until its initializer replaces it: in that instant it leaves SIGINT and SIGHUP to the
    parent and dies on SIGTERM, as it will afterwards, instead of raising in the middle of its
    work."""
    if os.getpid() != _OWNER:
        if signum == signal.SIGTERM:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
        return
    if signum != signal.SIGINT and not received:
        received.append(signum)
    raise KeyboardInterrupt


def stopped_code() -> tuple[str, int]:
    """What to print and the exit code, once a run was interrupted or terminated."""
    if received:
        return "terminated", 128 + received[0]
    return "interrupted", EXIT_INTERRUPTED


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    line = " ".join(printable(message).split())  # one line, printable whatever it holds
    typer.echo(f"fixturegen: error: {line}", err=True)
    raise typer.Exit(code)


MAX_SEED = 4096


def seed_option(text: str) -> str:
    """A ``--seed``: its UTF-8 bytes seed every derivation, so it must have some (a name that
    came from undecodable bytes on the command line has none) and be of a sane length."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise typer.BadParameter("not valid UTF-8 (the seed is hashed as UTF-8)") from None
    if len(text) > MAX_SEED:
        raise typer.BadParameter(f"longer than {MAX_SEED} characters")
    return text


def out_path(value: str | Path) -> Path:
    """An ``--out``/``--dir`` path as typed: an empty one (which ``Path`` would read as the
    current folder) is a usage error, not the current folder."""
    if isinstance(value, Path):
        return value
    if value.strip() == "":
        raise typer.BadParameter("an empty path: name a folder (or '.' for this one)")
    return Path(value)


def parse_time(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        fail(f"--at {text!r} is not an ISO 8601 time (e.g. 2030-01-01T00:00:00Z)")
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    try:
        moment = moment.astimezone(UTC)
        moment.timestamp()
    except (OverflowError, ValueError, OSError):
        fail(f"--at {text!r} is outside the years 1..9999 once in UTC")
    return moment
