"""The command line's one way to fail: one printable line on stderr and a documented exit code.

Shared by ``fixturegen.cli`` and ``fixturegen.harness.commands`` (each documents its codes).
"""

from __future__ import annotations

from typing import NoReturn

import typer

from fixturegen.verify.inputs import printable

EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    line = " ".join(printable(message).split())  # one line, printable whatever it holds
    typer.echo(f"fixturegen: error: {line}", err=True)
    raise typer.Exit(code)
