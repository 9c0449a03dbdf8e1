"""An implementation's mutation setup: the reviewed files in its adapter's folder, and the
adapter's ``mutate`` script that speaks the language's mutation tool.

``adapters/FOLDER/mutation/NAME.json`` (the scope, one reviewed file per implementation)::

    {"tool": "cargo-mutants 27.1.0",          what lists the mutants
     "files": ["src/certificate.rs", ...],     what is mutated (relative to the source tree)
     "activation": "rebuild",                  rebuild | switch | shadow (below)
     "env": {},                                 for switch / shadow: the adapter's environment,
                                                {mutant}, {switch} and {tree} filled in
     "handshake_files": ["src/verifier.rs"],   code only a handshake reaches: its mutants also
                                                run in handshake mode
     "handshake_entries": ["tcp-dial", ...],   which handshake entries run them
     "bug_files": ["src/peer_id.rs"],          files only bug models edit (the tool lists no
                                                mutant there); their bug models also run in
                                                handshake mode
     "upstream": "what the upstream tests are",
     "bug_activation": "rebuild",              how bug models run (rebuild | shadow; default:
                                                the activation, rebuild for switch)
     "bug_env": {}}                            the environment for bug models (default: env
                                                when bug_activation is the activation, else none)

``rebuild``: each mutant is written into the scratch tree and the adapter rebuilt against it
(incrementally, in the build cache). ``switch``: the tree is instrumented once with every
mutant (Stryker's mutation switching), built once, and an environment variable picks the mutant.
``shadow``: built once from the pristine tree; each mutant is written into the scratch tree,
which the adapter's environment puts in front of the built copy (``PYTHONPATH``).
A bug model (``NAME.bugs.json``, :mod:`fixturegen.mutation.bugs`) is a hand-written patch that
no switch can carry: it runs as ``bug_activation`` says, in an uninstrumented scratch tree.

``NAME.errors.json`` is the reason table (:mod:`fixturegen.harness.reasons`);
``NAME.survivors.tsv`` the reviewed verdict on each survivor: ``ID<TAB>equivalent|gap|
unkillable<TAB>one line`` (equivalent: cannot change behaviour; gap: a missing case, and the
input that would kill it; unkillable: no certificate can, and why).

``adapters/FOLDER/mutate`` (the language specifics)::

    mutate source --impl NAME --version V --into DIR   the pristine source tree of release V
    mutate list --impl NAME --tree DIR                  the mutants, one JSON object per line
    mutate instrument --impl NAME --tree DIR            (switch) every mutant into the tree
    mutate test --impl NAME --tree DIR [--file F]       the implementation's own tests of that
                                                        code: exit 0 pass, 1 fail, 3 cannot run
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fixturegen.harness.reasons import ReasonTable, load_table, table_path

Activation = Literal["rebuild", "switch", "shadow"]
Verdict = Literal["equivalent", "gap", "unkillable"]
MAX_LISTING = 64 * 1024 * 1024


class SetupError(Exception):
    """The adapter has no mutation setup, or it is broken (one line)."""


@dataclass(frozen=True)
class Setup:
    name: str
    folder: Path  # the adapter's folder (in the checkout)
    tool: str
    files: tuple[str, ...]
    activation: Activation
    env: dict[str, str]
    handshake_files: tuple[str, ...]
    handshake_entries: tuple[str, ...]
    upstream: str
    reasons: ReasonTable | None
    survivors: dict[str, tuple[Verdict, str]] = field(default_factory=dict)
    bug_activation: Activation = "rebuild"
    bug_env: dict[str, str] = field(default_factory=dict)
    bug_files: tuple[str, ...] = ()

    @property
    def script(self) -> Path:
        return self.folder / "mutate"

    @property
    def bug_scope(self) -> tuple[str, ...]:
        """Every file a bug model may edit: the tool's files, the handshake files and the
        bug files, each once."""
        return tuple(dict.fromkeys((*self.files, *self.handshake_files, *self.bug_files)))

    @property
    def reaches_handshakes(self) -> tuple[str, ...]:
        """The files whose changes also run in handshake mode."""
        return (*self.handshake_files, *self.bug_files)


def load_setup(adapters: Path, folder: str, name: str) -> Setup:
    base = adapters / folder / "mutation"
    path = base / f"{name}.json"
    if not path.is_file():
        raise SetupError(f"{name} has no mutation setup ({path} is missing)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        activation = data["activation"]
        if activation not in ("rebuild", "switch", "shadow"):
            raise ValueError(f"activation {activation!r}")
        env = {str(k): str(v) for k, v in data.get("env", {}).items()}
        bug_activation = data.get("bug_activation",
                                  "rebuild" if activation == "switch" else activation)
        if bug_activation not in ("rebuild", "shadow"):
            raise ValueError(f"bug_activation {bug_activation!r} (rebuild or shadow: a bug "
                             "model is a patch, no switch carries it)")
        bug_env = ({str(k): str(v) for k, v in data["bug_env"].items()} if "bug_env" in data
                   else env if bug_activation == activation else {})
        setup = Setup(
            name, adapters / folder, str(data["tool"]), tuple(data["files"]), activation,
            env,
            tuple(data.get("handshake_files", [])), tuple(data.get("handshake_entries", [])),
            str(data.get("upstream", "")), load_table(table_path(adapters, folder, name)),
            _survivors(base / f"{name}.survivors.tsv"), bug_activation, bug_env,
            tuple(data.get("bug_files", [])))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SetupError(f"{path}: {exc}") from None
    both = sorted(set(setup.bug_files) & set(setup.files))
    if both:
        raise SetupError(f"{path}: {both[0]} is in files and in bug_files (bug_files are the "
                         "files only bug models edit)")
    if not setup.script.is_file():
        raise SetupError(f"{setup.script} is missing")
    return setup


def _survivors(path: Path) -> dict[str, tuple[Verdict, str]]:
    out: dict[str, tuple[Verdict, str]] = {}
    if not path.is_file():
        return out
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[1] not in ("equivalent", "gap", "unkillable") or not parts[2]:
            raise ValueError(f"{path}:{number}: expected ID<TAB>equivalent|gap|unkillable<TAB>"
                             "reason")
        out[parts[0]] = (parts[1], parts[2])  # type: ignore[assignment]
    return out


def _interpreter(script: Path) -> list[str]:
    """A Python script runs under fixturegen's own interpreter (it may import
    fixturegen.mutation.cargo and the like); any other runs by its #! line."""
    try:
        with open(script, "rb") as f:
            first = f.readline(200)
    except OSError:
        return []
    return [sys.executable] if first.startswith(b"#!") and b"python" in first else []


@dataclass(frozen=True)
class Ran:
    code: int
    output: str
    seconds: float

    @property
    def last(self) -> str:
        lines = [" ".join(line.split()) for line in self.output.splitlines() if line.strip()]
        text = lines[-1] if lines else "no output"
        return text if len(text) <= 300 else text[:297] + "..."


def run_script(setup: Setup, args: list[str], *, timeout: float,
               env: dict[str, str] | None = None, log: Path | None = None) -> Ran:
    """The adapter's ``mutate`` script, in its own process group (killed whole on a timeout
    or an interrupt); its output kept in ``log`` (and returned, bounded)."""
    import time

    start = time.perf_counter()
    # FIXTUREGEN_PYTHON: the interpreter running fixturegen (a script may need its commands)
    full = {**os.environ, "FIXTUREGEN_PYTHON": sys.executable, **(env or {})}
    sink = open(log, "wb") if log is not None else subprocess.PIPE  # noqa: SIM115
    try:
        proc = subprocess.Popen([*_interpreter(setup.script), str(setup.script), *args],
                                stdin=subprocess.DEVNULL,
                                stdout=sink, stderr=subprocess.STDOUT, env=full,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            return Ran(124, f"timed out after {timeout:g} s", time.perf_counter() - start)
        except BaseException:
            _kill(proc)
            raise
    finally:
        if log is not None and not isinstance(sink, int):
            sink.close()
    text = (out or b"") if log is None else _tail(log)
    return Ran(proc.returncode, text.decode("utf-8", "replace")[-MAX_LISTING:],
               time.perf_counter() - start)


def _tail(path: Path, size: int = 65536) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - size))
        return handle.read()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    import contextlib

    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
