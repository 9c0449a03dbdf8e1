"""Output folders a command owns: it writes into a folder only if the folder is new, empty, or
was written by an earlier run of the same command, and replaces only what that run wrote.

The proof is a marker file in the folder (:data:`MARKER`), written by the command: the command's
name and the files it wrote. A folder that merely holds a file of the same name as one the
command writes (a ``findings.md`` of the user's) has no marker and is refused, whole. Every file
is written whole (a temporary file beside it, then a rename) and only as a regular file: a link,
FIFO, device or folder where a file should go is refused, never written through or replaced.
An output folder that is a mount point is written inside; the folder itself is never renamed.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from fixturegen.verify.inputs import printable

MARKER = ".fixturegen-owner.json"
MAX_MARKER = 1024 * 1024


class NotOwned(Exception):
    """The folder (or a path in it) is not this command's to write: one line, a usage error."""


def _shown(path: Path) -> str:
    return printable(str(path))


def _marker(folder: Path) -> dict[str, object] | None:
    path = folder / MARKER
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MARKER:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def owned_files(folder: Path, command: str) -> list[str]:
    """The files an earlier run of ``command`` wrote into ``folder`` (by its marker)."""
    data = _marker(folder)
    if data is None or data.get("command") != command:
        return []
    files = data.get("files")
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def claim(folder: Path, command: str) -> Path:
    """Make sure ``command`` may write into ``folder`` (made if missing); the folder, absolute.
    Raises NotOwned naming what is in the way."""
    text = str(folder)
    if text.strip() == "":
        raise NotOwned("an empty output path: name a folder")
    path = folder.absolute()
    if path == Path(path.anchor):
        raise NotOwned(f"{_shown(folder)} is the filesystem root: name a folder of its own")
    if path.is_symlink():
        raise NotOwned(f"{_shown(folder)} is a symbolic link: output is never written through "
                       "one")
    if path.exists() and not path.is_dir():
        raise NotOwned(f"{_shown(folder)} exists and is not a folder")
    if not path.exists():
        try:
            path.mkdir(parents=True)
        except OSError as exc:
            raise NotOwned(f"cannot make {_shown(folder)}: {exc.strerror or exc}") from None
    data = _marker(path)
    if data is not None and data.get("command") == command:
        return path
    try:
        entries = [e for e in os.listdir(path) if e != MARKER]
    except OSError as exc:
        raise NotOwned(f"cannot read {_shown(folder)}: {exc.strerror or exc}") from None
    if entries or (path / MARKER).exists():
        what = ("another command's output" if data is not None
                else f"files fixturegen {command} did not write ({', '.join(sorted(entries)[:3])}"
                + (", ..." if len(entries) > 3 else "") + ")")
        raise NotOwned(f"{_shown(folder)} holds {what}: give a new or empty folder, or one an "
                       f"earlier 'fixturegen {command}' wrote")
    mark(path, command, [])
    return path


def mark(folder: Path, command: str, files: Iterable[str]) -> None:
    """Record that ``command`` wrote ``files`` (relative paths) into ``folder``."""
    body = json.dumps({"command": command, "files": sorted(set(files)),
                       "note": "written by fixturegen: it may replace these files"}, indent=1)
    write_file(folder, MARKER, body.encode() + b"\n")


def write_file(folder: Path, rel: str, data: bytes, mode: int = 0o644) -> Path:
    """Write ``folder/rel`` whole, as a regular file; refuses a link, FIFO, device or folder at
    that path (or on the way to it), and a path that leaves the folder."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise NotOwned(f"{rel!r} is not a path inside {_shown(folder)}")
    parent = folder
    for part in parts[:-1]:
        parent = parent / part
        if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
            raise NotOwned(f"{_shown(parent)} is in the way (not a folder)")
        parent.mkdir(exist_ok=True)
    target = parent / parts[-1]
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(target.lstat().st_mode):
            raise NotOwned(f"{_shown(target)} is not a regular file (a link, FIFO, device or "
                           "folder): it is never written through or replaced")
    staged = parent / f".{parts[-1]}.tmp-{os.getpid()}"
    try:
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(staged, mode)
        os.replace(staged, target)
    except BaseException:
        with contextlib.suppress(OSError):
            staged.unlink()
        raise
    return target
