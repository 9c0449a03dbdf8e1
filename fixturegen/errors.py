"""The command line's one way to fail: one printable line on stderr and a documented exit code.

Shared by ``fixturegen.cli`` and ``fixturegen.harness.commands`` (each documents its codes).
"""

from __future__ import annotations

from types import FrameType
from typing import NoReturn

import typer

from fixturegen.verify.inputs import printable

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # SIGINT; SIGTERM and SIGHUP give 128 + their number

#: The terminating signal received (SIGTERM, SIGHUP), if one was.
received: list[int] = []


def stop_on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM and SIGHUP take the interrupt's way out (KeyboardInterrupt): every ``finally``
    runs, so adapters and fixture peers are stopped and staged output is dropped."""
    if not received:
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
