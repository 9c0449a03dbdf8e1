"""``fixturegen doctor``: which shipped adapters are built here, which can be, and what each
build lacks.

Each adapter folder's ``build`` script names what it needs on its ``# needs:`` line (beside
its ``# adapters:`` line), and on a ``# fetches: TOOL ...`` line a tool it installs itself from
a registry into the user's cache when it is not on ``PATH`` (litep2p's protoc, from PyPI): such
a tool is never missing. So an adapter's specifics stay in its folder; this module knows only
how to find a tool on ``PATH`` and where a missing one comes from.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fixturegen.harness.adapters import PEER, SHIPPED
from fixturegen.harness.handshake import MESSAGE_PEER_BUILT

#: Where a tool an adapter build needs comes from (one line each).
HOW: dict[str, str] = {
    "cargo": "Rust's toolchain: https://rustup.rs (rustup installs cargo in your home)",
    "cc": "a C compiler, for the Rust crates' native parts (ring): apt-get install gcc, or "
          "Xcode's command line tools",
    "go": "Go 1.26 (or a Go from 1.21 on, which fetches the 1.26 toolchain the go.mod files ask "
          "for): https://go.dev/dl (unpack anywhere, add its bin to PATH)",
    "node": "Node.js 20 or later: https://nodejs.org (or nvm, in your home)",
    "npm": "comes with Node.js",
    "python3": "Python 3.11 or later, with its venv module",
    "protoc": "protobuf's compiler: apt-get install protobuf-compiler, or unpack a protoc "
              "release from https://github.com/protocolbuffers/protobuf/releases into PATH",
}


@dataclass(frozen=True)
class Readiness:
    """One adapter folder's state: the adapters it builds, whether they are built, what its
    build needs and which of those this machine lacks."""

    folder: str
    names: tuple[str, ...]
    built: bool
    needs: tuple[str, ...]
    missing: tuple[str, ...]
    #: Needed tools not on PATH that the build installs from a registry into the user's cache.
    fetched: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        if self.built:
            return "built"
        return "cannot be built" if self.missing else "can be built"


def _header(script: Path, key: str) -> tuple[str, ...]:
    for line in script.read_text(encoding="utf-8", errors="replace").splitlines()[:20]:
        if line.startswith(f"# {key}:"):
            return tuple(line.split(":", 1)[1].split())
    return ()


def readiness(adapters: Path, which: Callable[[str], str | None] = shutil.which
              ) -> list[Readiness]:
    """Every adapter folder under ``adapters`` (the fixture peer's first), by its build
    script's header."""
    built = {a.name: a.built(adapters) for a in SHIPPED}
    built["fixture-peer"] = (adapters / PEER).is_file()
    built["message-peer"] = (adapters / MESSAGE_PEER_BUILT).is_file()
    scripts = sorted(adapters.glob("*/build"), key=lambda p: (p.parent.name != "fixture-peer",
                                                              p.parent.name))
    out: list[Readiness] = []
    for script in scripts:
        names = _header(script, "adapters")
        if not names:
            continue
        needs = _header(script, "needs")
        fetches = _header(script, "fetches")[:1]  # the tool; the rest of the line says how
        absent = tuple(t for t in needs if which(t) is None)
        out.append(Readiness(script.parent.name, names,
                             all(built.get(n, False) for n in names), needs,
                             tuple(t for t in absent if t not in fetches),
                             tuple(t for t in absent if t in fetches)))
    return out


def lines(ready: list[Readiness]) -> list[str]:
    """The report: one line per folder, then one per missing tool with where it comes from."""
    width = max((len(", ".join(r.names)) for r in ready), default=0)
    out = []
    for r in ready:
        needs = ", ".join(f"{t} (missing)" if t in r.missing else
                          f"{t} (not on PATH: the build fetches it)" if t in r.fetched else t
                          for t in r.needs)
        out.append(f"{', '.join(r.names):<{width}}  {r.state:<15}  needs {needs or 'nothing'}")
    for tool in dict.fromkeys(t for r in ready for t in r.missing):
        out.append(f"{tool}: {HOW.get(tool, 'not found on PATH')}")
    return out
