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
from collections.abc import Callable, Iterable, Mapping
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


Adopt = Callable[[Path], list[str] | None]


def _root(path: Path) -> bool:
    return Path(os.path.normpath(path)) == Path(path.anchor)


def check(folder: Path, command: str, *, shared: bool = False, adopt: Adopt | None = None
          ) -> Path:
    """Whether ``command`` may write into ``folder``, changing nothing; the folder, absolute.

    A missing or empty folder, or one whose marker names ``command``, is the command's. With
    ``shared`` (a repository's test-asset folder, a keys folder) the folder may also hold other
    files: the command then adds new files and replaces only those its marker lists (checked per
    file when it writes). ``adopt`` names the files a folder without a marker holds that an
    earlier version of the command wrote (None: not such a folder). Raises NotOwned."""
    text = str(folder)
    if text.strip() == "":
        raise NotOwned("an empty output path: name a folder")
    path = folder.absolute()
    if _root(path):
        raise NotOwned(f"{_shown(folder)} is the filesystem root: name a folder of its own")
    if path.is_symlink():
        raise NotOwned(f"{_shown(folder)} is a symbolic link: output is never written through "
                       "one")
    if path.exists() and not path.is_dir():
        raise NotOwned(f"{_shown(folder)} exists and is not a folder (a file, FIFO or device)")
    if not path.exists():
        return path
    data = _marker(path)
    if data is not None and data.get("command") == command:
        return path
    try:
        entries = [e for e in os.listdir(path) if e != MARKER]
    except OSError as exc:
        raise NotOwned(f"cannot read {_shown(folder)}: {exc.strerror or exc}") from None
    if data is None and not (path / MARKER).exists() and (
            not entries or shared or (adopt is not None and adopt(path) is not None)):
        return path
    what = (f"another command's output (fixturegen {printable(str(data.get('command')))})"
            if data is not None
            else f"files fixturegen {command} did not write ({', '.join(sorted(entries)[:3])}"
            + (", ..." if len(entries) > 3 else "") + ")")
    raise NotOwned(f"{_shown(folder)} holds {what}: nothing was written; give a new or empty "
                   f"folder, or one an earlier 'fixturegen {command}' wrote")


def claim(folder: Path, command: str, *, shared: bool = False, adopt: Adopt | None = None
          ) -> Path:
    """Make sure ``command`` may write into ``folder`` (made if missing, marked as the
    command's); the folder, absolute. Raises NotOwned naming what is in the way."""
    path = check(folder, command, shared=shared, adopt=adopt)
    if not path.exists():
        try:
            path.mkdir(parents=True)
        except OSError as exc:
            raise NotOwned(f"cannot make {_shown(folder)}: {exc.strerror or exc}") from None
    if _marker(path) is None:
        adopted = adopt(path) if adopt is not None else None
        mark(path, command, adopted or [])
    return path


def _refused(folder: Path, rel: str, mine: set[str]) -> str | None:
    """Why ``folder/rel`` may not be written: a non-regular file (or one on the way), or a
    file the command's marker does not list."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        return f"{rel!r} is not a path inside {_shown(folder)}"
    here = folder
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            return f"{_shown(here)} is in the way (not a folder)"
    target = folder / rel
    try:
        info = target.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot look at {_shown(target)}: {exc.strerror or exc}"
    if not stat.S_ISREG(info.st_mode):
        return (f"{_shown(target)} is not a regular file (a link, FIFO, device or folder): it "
                "is never written through or replaced")
    if rel not in mine:
        return f"{_shown(target)} is not a file an earlier run wrote: it is never replaced"
    return None


def publish(folder: Path, command: str, files: Iterable[tuple[str, bytes]], *,
            shared: bool = False, adopt: Adopt | None = None, keep: Iterable[str] = (),
            modes: Mapping[str, int] | None = None) -> Path:
    """Write ``files`` (relative path, bytes) into ``folder`` as ``command``'s output, the one
    way every writer replaces its output: every target is checked before the first is written
    (nothing is written when one is refused), each file is written whole, then the files an
    earlier run wrote and this one did not are deleted (except ``keep``, which stay the
    command's), and the marker lists what the folder now holds of the command's. The folder
    itself is never renamed or removed (a mount point is written inside). Raises NotOwned
    (and OSError from the disk)."""
    wanted = dict(files)
    path = check(folder, command, shared=shared, adopt=adopt)
    existing = path.exists()
    mine = set(owned_files(path, command)) if existing else set()
    if existing and _marker(path) is None and adopt is not None:
        mine = set(adopt(path) or [])
    for rel in sorted(wanted):
        why = _refused(path, rel, mine)
        if why is not None:
            raise NotOwned(why + "; nothing was written")
    path = claim(path, command, shared=shared, adopt=adopt)
    kept = set(keep)
    mark(path, command, mine | set(wanted))  # an interrupted run still knows what it wrote
    for rel, data in sorted(wanted.items()):
        write_file(path, rel, data, (modes or {}).get(rel, 0o644))
    for rel in sorted(mine - set(wanted) - kept):
        _remove(path, rel)
    mark(path, command, set(wanted) | (mine & kept))
    return path


def _remove(folder: Path, rel: str) -> None:
    """Delete ``folder/rel`` if it is a regular file inside the folder, then the folders on
    its way that it leaves empty; anything else is left alone."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        return
    target = folder / rel
    with contextlib.suppress(OSError):
        if stat.S_ISREG(target.lstat().st_mode):
            target.unlink()
    for depth in range(len(parts) - 1, 0, -1):
        here = folder.joinpath(*parts[:depth])
        with contextlib.suppress(OSError):
            if not here.is_symlink():
                here.rmdir()  # only when empty


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
