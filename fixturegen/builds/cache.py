"""The build cache: where builds of other versions and of source trees are kept.

``--cache DIR``, else ``$FIXTUREGEN_CACHE``, else ``$XDG_CACHE_HOME/fixturegen``, else
``~/.cache/fixturegen``; never inside a checkout. Layout::

    CACHE/builds/FOLDER/v-VERSION-ADAPTER/     a released version, built once
    CACHE/builds/FOLDER/src-PATH-ADAPTER/      a source tree (PATH: a hash of its real path),
                                               rebuilt in place when the tree's content changes
    CACHE/builds/FOLDER/KEY.lock               taken exclusive to build, shared to run
    CACHE/shared/FOLDER/                       what an adapter's builds share (a cargo target)

FOLDER is the adapter's folder under ``adapters/``; ADAPTER a hash of that folder's own
sources, so that a changed adapter is built afresh. A build is finished when its ``build.json``
is written (last); anything without one is half a build and is rebuilt. Deleting the cache is
always safe (between runs): everything in it is rebuilt on demand.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import stat
from pathlib import Path

ENV = "FIXTUREGEN_CACHE"
#: Folders a source tree's content hash leaves out wherever they are: version control, package
#: installs and caches (never source), and what the CI job of docs/guides/ci.md keeps in a
#: checkout (its reports, its known list): a second run of an unchanged tree is not a rebuild.
UNHASHED = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".mypy_cache",
                      ".pytest_cache", ".ruff_cache", ".tox", ".nox", "fixturegen-report",
                      ".fixturegen"})
#: Folders left out only when they are what their name says: a folder named so that lacks the
#: marker is source like any other (a ``src/target/`` module is hashed).
BUILD_OUTPUTS = {"target": "CACHEDIR.TAG", ".venv": "pyvenv.cfg"}
MAX_TREE_FILES = 200_000
MAX_TREE_BYTES = 4 * 1024 * 1024 * 1024


class CacheError(Exception):
    """The cache folder cannot be used (one line)."""


def default_cache() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fixturegen"


def cache_root(given: Path | None) -> Path:
    """The cache folder (made if missing); refuses a path that is not a folder."""
    root = (given if given is not None else default_cache()).expanduser()
    if str(root) in ("", "/"):
        raise CacheError(f"--cache {str(root)!r}: give a folder of its own")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheError(f"cannot make the build cache {root}: {exc.strerror or exc}") from None
    if not root.is_dir():
        raise CacheError(f"the build cache {root} is not a folder")
    return root.resolve()


def slug(text: str) -> str:
    """``text`` as a file name: letters, digits, '.', '_', '-' only."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", text)[:80].lstrip(".")
    return cleaned or "_"


def tree_hash(root: Path, skip: frozenset[str] = UNHASHED,
              skip_top: frozenset[str] = frozenset()) -> str:
    """SHA-256 over a tree's regular files and links (relative path, executable bit, content),
    in a fixed order; folders named in ``skip`` are left out, and the top-level files and
    folders named in ``skip_top``. Bounded in files and bytes; it never crosses into another
    filesystem (a mount point inside the tree: /proc under a link to /, whose files can block a
    reader) and never follows a link (a link is hashed as its target's text)."""
    digest = hashlib.sha256()
    files = 0
    total = 0
    device = root.stat().st_dev
    for folder, dirs, names in os.walk(root):
        top = Path(folder) == root
        dirs[:] = sorted(d for d in dirs if d not in skip and not (top and d in skip_top)
                         and not _build_output(Path(folder) / d)
                         and _same_device(Path(folder) / d, device))
        # A link to a folder is listed with the folders (and never followed): hashed as a link.
        links = [d for d in dirs if (Path(folder) / d).is_symlink()]
        dirs[:] = [d for d in dirs if d not in links]
        for name in sorted([*names, *links]):
            if top and name in skip_top:
                continue
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
            try:
                info = path.lstat()
            except OSError:
                continue
            files += 1
            if files > MAX_TREE_FILES:
                raise CacheError(f"{root} holds more than {MAX_TREE_FILES} files: is it a "
                                 "source tree?")
            if stat.S_ISLNK(info.st_mode):
                digest.update(b"L" + rel + b"\0" + os.readlink(path).encode(
                    "utf-8", "surrogateescape") + b"\0")
                total += _linked(root, path, digest)
                if total > MAX_TREE_BYTES:
                    raise CacheError(f"{root} holds more than {MAX_TREE_BYTES >> 30} GiB of "
                                     "files: is it a source tree?")
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > MAX_TREE_BYTES:
                    raise CacheError(f"{root} holds more than {MAX_TREE_BYTES >> 30} GiB of "
                                     "files: is it a source tree?")
                mark = b"X" if info.st_mode & 0o111 else b"F"
                digest.update(mark + rel + b"\0" + str(info.st_size).encode() + b"\0")
                with contextlib.suppress(OSError), open(path, "rb") as handle:
                    while block := handle.read(1 << 20):
                        digest.update(block)
    return digest.hexdigest()


def _build_output(folder: Path) -> bool:
    marker = BUILD_OUTPUTS.get(folder.name)
    return marker is not None and (folder / marker).is_file()


def _linked(root: Path, link: Path, digest: hashlib._Hash) -> int:
    """Hash what a link in the tree points to when that is a regular file (its content is
    what a build reads); returns its size. A link to a folder outside the tree is refused: a
    build would read a tree the hash never saw."""
    try:
        target = link.resolve(strict=True)
        info = target.stat()
    except (OSError, RuntimeError):
        return 0  # dangling or a loop: its text is all there is
    if stat.S_ISDIR(info.st_mode):
        if not target.is_relative_to(root.resolve()):
            raise CacheError(f"{link} links to {target}, a folder outside the source tree")
        return 0
    if not stat.S_ISREG(info.st_mode):
        return 0
    with contextlib.suppress(OSError), open(target, "rb") as handle:
        digest.update(b"T")
        while block := handle.read(1 << 20):
            digest.update(block)
    return info.st_size


def _same_device(path: Path, device: int) -> bool:
    try:
        return path.lstat().st_dev == device
    except OSError:
        return False


class Hold:
    """A lock on a build's lock file: exclusive while building it, shared while a run uses it
    (a rebuild waits until every run lets go). Closing the file releases it."""

    def __init__(self, path: Path | None, *, exclusive: bool = False) -> None:
        self._fd: int | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            except BaseException:
                self.release()
                raise

    def share(self) -> Hold:
        """From exclusive (building) to shared (using), on the same file: never unlocked."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_SH)
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
