"""Build an adapter against any version of its implementation, or against a source tree.

The adapter's folder is copied into the build cache (its sources only: what
``adapters/.gitignore`` names as build output stays behind) and its own ``build`` script runs
there, in the copy, with ``--version V`` or ``--source PATH``. That script re-pins the
implementation (a Cargo ``[patch]`` or version, a Go ``require``/``replace``, an npm version or
``file:`` dependency, a pip install), selects the adapter's per-version shims, builds, and writes
``build-info.json``: the version it built, the handshake transports that build has, and notes
(what a shim left out, and why). Its exit status: 0 built; 2 the request is wrong (not a
checkout of this implementation, a version the registry does not serve); anything else, the
build failed. Its last line of output says why, and becomes the one line a user sees.

A finished build has a ``build.json`` (written last). A released version is built once; a source
tree is rebuilt in the same folder (incrementally) when its content hash changes. A failed build
is remembered with its reason, and tried again only with ``rebuild``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fixturegen.builds.cache import CacheError, Hold, slug, tree_hash
from fixturegen.builds.registries import Ecosystem
from fixturegen.builds.versions import Version, VersionError

BUILD_JSON = "build.json"
INFO = "build-info.json"  # written by the adapter's build script
LOG = "build.log"
DEFAULT_BUILD_TIMEOUT = 1800.0
MAX_REASON = 300
EXIT_NOT_SERVED = 2  # the adapter's build script: not a checkout, a version not served


class BuildError(Exception):
    """A build that cannot be made; ``str`` is one line naming implementation, version, cause.
    ``request`` is True when the request itself was wrong (not a checkout, not served)."""

    def __init__(self, message: str, *, request: bool = False, log: Path | None = None) -> None:
        super().__init__(message)
        self.request = request
        self.log = log


@dataclass(frozen=True)
class Recipe:
    """What the build machinery knows of an adapter; its build specifics are in its folder."""

    name: str  # the implementation (go-libp2p)
    folder: str  # its folder under adapters/
    ecosystem: Ecosystem
    package: str  # as the registry names it (github.com/libp2p/go-libp2p)
    pinned: str  # the version the checkout's lock files pin
    since: str  # the oldest version that carries the verifier the adapter calls
    marker: str  # what a finished build leaves, relative to the folder

    def carries(self, version: Version) -> bool:
        return version >= Version.parse(self.since)


@dataclass(frozen=True)
class Wanted:
    """Which build: the pinned one (nothing set), a released ``version``, or a ``source`` tree."""

    version: str | None = None
    source: Path | None = None

    @property
    def pinned(self) -> bool:
        return self.version is None and self.source is None

    def describe(self, recipe: Recipe) -> str:
        if self.source is not None:
            return f"{recipe.name} --source {self.source}"
        return f"{recipe.name}@{self.version or recipe.pinned}"


@dataclass(frozen=True)
class Built:
    """A finished build: run its adapter from ``folder``."""

    recipe: Recipe
    folder: Path
    version: str  # what results record: the version, or VERSION+src.HASH for a source tree
    transports: tuple[str, ...] | None  # None: what the adapter entry declares (pinned build)
    notes: tuple[str, ...] = ()
    reused: bool = False  # the cache had it
    seconds: float = 0.0  # what building took (0 when reused)
    source: str | None = None  # the source tree, for a source build
    hold: Hold = field(default_factory=lambda: Hold(None), compare=False, repr=False)


def parse_impl(text: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME@VERSION``."""
    name, at, version = text.partition("@")
    version = version.strip()  # ' v0.48.0 ' is v0.48.0, to the build script too
    if at and not version:
        raise VersionError(f"--impl {text!r}: give NAME@VERSION (e.g. go-libp2p@v0.48.0)")
    if at:
        Version.parse(version)
    return name, (version if at else None)


def _ignored(adapters: Path, folder: str) -> set[str]:
    """The top-level names ``adapters/.gitignore`` marks as build output of ``folder``."""
    names = {"__pycache__", INFO, BUILD_JSON, LOG, "mutation", "mutate"}  # mutation specifics:
    # not part of a build
    try:
        lines = (adapters / ".gitignore").read_text().splitlines()
    except OSError:
        return names
    for line in lines:
        line = line.strip().rstrip("/")
        if line.startswith(f"{folder}/"):
            names.add(line.split("/")[1])
        elif line and "/" not in line and not line.startswith("#"):
            names.add(line)
    return names


def adapter_hash(adapters: Path, folder: str) -> str:
    """A hash of the adapter folder's own sources (its build output left out)."""
    ignored = frozenset(_ignored(adapters, folder))
    return tree_hash(adapters / folder, frozenset({"__pycache__"}), ignored)[:12]


def _copy_sources(adapters: Path, folder: str, into: Path) -> None:
    ignored = _ignored(adapters, folder)
    root = adapters / folder

    def ignore(directory: str, names: list[str]) -> set[str]:
        top = Path(directory) == root
        return {n for n in names if n == "__pycache__" or (top and n in ignored)}

    shutil.copytree(root, into, ignore=ignore, symlinks=True, dirs_exist_ok=True)


def _key(recipe: Recipe, wanted: Wanted, adapter: str) -> str:
    """The cache folder's name: the source tree's path, or the version as it orders (so
    ``v0.48.0`` and ``0.48.0`` share a build), and the adapter's own sources."""
    if wanted.source is not None:
        where = hashlib.sha256(str(wanted.source.resolve()).encode("utf-8", "surrogateescape"))
        return f"src-{where.hexdigest()[:12]}-{adapter}"
    version = Version.parse(wanted.version or recipe.pinned)
    numbers = ".".join(str(n) for n in version.release)
    exact = hashlib.sha256(repr(version.key).encode()).hexdigest()[:8]
    return f"v-{slug(numbers)[:40]}-{exact}-{adapter}"


def _record(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _reason(log: Path) -> str:
    """The last non-empty line of a build log, shortened."""
    try:
        with open(log, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 65536))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return "no build log"
    lines = [" ".join(line.split()) for line in tail.splitlines() if line.strip()]
    text = lines[-1] if lines else "the build script printed nothing"
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def ensure(recipe: Recipe, adapters: Path, wanted: Wanted, cache: Path, *,
           rebuild: bool = False, timeout: float = DEFAULT_BUILD_TIMEOUT,
           say: Any = None) -> Built:
    """The build ``wanted`` asks for, made if the cache does not hold it; the returned build
    holds a shared lock on its folder until ``built.hold.release()``. Raises BuildError."""
    if wanted.pinned:
        folder = adapters / recipe.folder
        if not (folder / recipe.marker).exists() and is_installed_copy(adapters):
            build_in_place(adapters, recipe.name, f"{recipe.folder}/{recipe.marker}",
                           timeout=timeout, say=say)
        if not (folder / recipe.marker).exists():
            raise BuildError(f"{recipe.name} {recipe.pinned}: not built: run 'make adapters' "
                             f"(adapters/build {recipe.name})")
        return Built(recipe, folder, recipe.pinned, None, reused=True)
    if wanted.source is not None and not wanted.source.is_dir():
        raise BuildError(f"{recipe.name} --source {wanted.source}: not a folder", request=True)
    if wanted.source is not None and wanted.source.resolve() == Path(wanted.source.anchor
                                                                      or "/").resolve():
        raise BuildError(f"{recipe.name} --source {wanted.source}: the filesystem's root is "
                         "not a source tree", request=True)
    if wanted.version is not None:
        version = Version.parse(wanted.version)
        if not recipe.carries(version):
            raise BuildError(f"{recipe.name}@{wanted.version}: older than {recipe.since}, the "
                             f"first {recipe.package} version with the verifier the adapter "
                             "calls", request=True)
    try:
        adapter = adapter_hash(adapters, recipe.folder)
        tree = tree_hash(wanted.source) if wanted.source is not None else None
    except (CacheError, OSError) as exc:
        raise BuildError(f"{wanted.describe(recipe)}: {exc}", request=True) from None
    base = cache / "builds" / recipe.folder
    key = _key(recipe, wanted, adapter)
    folder = base / key
    hold = Hold(base / f"{key}.lock", exclusive=True)
    try:
        record = _record(folder / BUILD_JSON)
        if record is not None and not rebuild and record.get("tree") == tree:
            # an entry is trusted only whole: a build that says ok has left what the adapter
            # runs; a timeout says nothing of the build (a busy machine), so it is tried again
            if record.get("status") == "ok" and (folder / recipe.marker).exists():
                return _built(recipe, folder, record, hold.share(), reused=True)
            if record.get("status") == "failed":
                raise BuildError(
                    f"{wanted.describe(recipe)}: cannot build: {record.get('reason')} "
                    f"(remembered from {record.get('when')}; --rebuild tries again; log: "
                    f"{folder / LOG})", request=bool(record.get("request")), log=folder / LOG)
        with contextlib.suppress(FileNotFoundError):
            (folder / BUILD_JSON).unlink()
        if wanted.version is not None and folder.exists():
            shutil.rmtree(folder)  # half a build of a version: start clean
        _copy_sources(adapters, recipe.folder, folder)
        if say is not None:
            say(f"building {wanted.describe(recipe)} in {folder}")
        start = time.perf_counter()
        status, request = _run_build(folder, wanted, cache / "shared" / recipe.folder, timeout)
        seconds = time.perf_counter() - start
        info = _record(folder / INFO) or {}
        if status != "ok":
            timed_out = status.startswith("timed out")
            reason = status if timed_out else _reason(folder / LOG)
            record = {"status": "timed_out" if timed_out else "failed", "reason": reason,
                      "request": request, "tree": tree, "when": _now(),
                      "seconds": round(seconds, 1)}
            _write_record(folder, record)
            raise BuildError(f"{wanted.describe(recipe)}: cannot build: {reason} (log: "
                             f"{folder / LOG})", request=request, log=folder / LOG)
        made = str(info.get("version") or wanted.version or "unknown")
        if tree is not None:
            made = f"{made}+src.{tree[:10]}"
        record = {"status": "ok", "version": made, "tree": tree, "when": _now(),
                  "seconds": round(seconds, 1), "source": str(wanted.source.resolve())
                  if wanted.source is not None else None,
                  "transports": info.get("transports"), "notes": info.get("notes") or []}
        _write_record(folder, record)
        return _built(recipe, folder, record, hold.share(), reused=False)
    except BaseException:
        hold.release()
        raise


def _built(recipe: Recipe, folder: Path, record: dict[str, Any], hold: Hold, *,
           reused: bool) -> Built:
    transports = record.get("transports")
    return Built(recipe, folder, str(record.get("version")),
                 tuple(transports) if isinstance(transports, list) else None,
                 tuple(str(n) for n in record.get("notes") or []), reused=reused,
                 seconds=0.0 if reused else float(record.get("seconds") or 0.0),
                 source=record.get("source"), hold=hold)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_record(folder: Path, record: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / f".{BUILD_JSON}.tmp"
    staged.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(staged, folder / BUILD_JSON)


#: The file an installed fixturegen's working copy of its adapters carries
#: (``fixturegen.harness.adapters.installed_adapters``): there, a pinned adapter that is not
#: built yet is built on first use, as ``make adapters`` builds a checkout's.
COPIED = ".copied"


def is_installed_copy(adapters: Path) -> bool:
    return (adapters / COPIED).is_file()


def build_in_place(adapters: Path, name: str, marker: str, *,
                   timeout: float = DEFAULT_BUILD_TIMEOUT, say: Any = None) -> None:
    """Build one shipped adapter (or the fixture peer) where it is, with ``adapters/build
    NAME``, under a lock (two runs build it once); ``marker`` is the path, under ``adapters``,
    that the build leaves. The log is ``adapters/.build-NAME.log``. Raises BuildError."""
    with Hold(adapters / ".pinned.lock", exclusive=True):
        folder = adapters / marker
        if folder.exists():
            return
        log_path = adapters / f".build-{name}.log"
        if say is not None:
            say(f"building {name} (pinned) in {adapters} (log: {log_path})")
        result = _run_logged([str(adapters / "build"), name], adapters, log_path, timeout)
        if isinstance(result, str):
            raise BuildError(f"{name}: {result} (log: {log_path})", log=log_path)
        if result != 0:
            raise BuildError(f"{name}: cannot build: {_reason(log_path)} (log: {log_path})",
                             log=log_path)


def _run_logged(argv: list[str], cwd: Path, log_path: Path, timeout: float,
                env: dict[str, str] | None = None) -> int | str:
    """Run ``argv`` in ``cwd``, its output to ``log_path``, in its own process group (killed
    whole on a timeout or an interrupt): its exit status, or why it did not finish (one line)."""
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as exc:
            return f"cannot run {argv[0]}: {exc.strerror or exc}"
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            return f"timed out after {timeout:g} s"
        except BaseException:
            _kill(proc)
            raise


def _run_build(folder: Path, wanted: Wanted, shared: Path, timeout: float) -> tuple[str, bool]:
    """Run the adapter's build script in ``folder``; ("ok" | why, whether the request was
    wrong). The script runs in its own process group, killed whole on a timeout or an
    interrupt."""
    args = (["--source", str(wanted.source.resolve())] if wanted.source is not None
            else ["--version", str(wanted.version)])
    shared.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "FIXTUREGEN_SHARED": str(shared)}
    result = _run_logged([str(folder / "build"), *args], folder, folder / LOG, timeout, env)
    if isinstance(result, str):
        return result, False
    if result == 0:
        return "ok", False
    return f"exit {result}", result == EXIT_NOT_SERVED


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
