"""Output folders a command owns: it writes into a folder only if the folder is new, empty, or
was written by an earlier run of the same command, and replaces only what that run wrote.

The proof is a marker file in the folder (:data:`MARKER`), written by the command: the command's
name and the files it wrote. A folder that merely holds a file of the same name as one the
command writes (a ``findings.md`` of the user's) has no marker and is refused, whole. Every file
is written whole (a temporary file beside it, then a rename) and only as a regular file: a link,
FIFO, device or folder where a file should go is refused, never written through or replaced.
An output folder that is a mount point is written inside; the folder itself is never renamed.

A corpus (``generate``, ``import``) is replaced whole (:func:`replace`, :func:`install`): the new
folder is built beside the old one (``.OUT.tmp-PID-*``), then, with SIGINT, SIGTERM and SIGHUP
held, the old folder is renamed away (``.OUT.old-PID``), the new one renamed in and the old one
removed. A reader sees the old corpus, no folder for an instant, or the new corpus, never
certificates of one run under the manifest of another; a signal that arrives during the swap
takes effect once it is done. A run killed outright (SIGKILL) leaves the old folder beside;
the next run puts it back (:func:`recover`). Files of the user's inside the old folder (ones its
marker does not list) are linked into the new one before the swap. Only a mount point, which
cannot be renamed, is written inside file by file (with the signals held too).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
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


def _in_the_way(folder: Path, parts: tuple[str, ...]) -> Path | None:
    """The first folder on the way to ``folder/parts`` that is a link or not a folder (a
    path through it could lead out of ``folder``), or None."""
    here = folder
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            return here
    return None


def _refused(folder: Path, rel: str, mine: set[str]) -> str | None:
    """Why ``folder/rel`` may not be written: a non-regular file (or one on the way), or a
    file the command's marker does not list."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        return f"{rel!r} is not a path inside {_shown(folder)}"
    if (here := _in_the_way(folder, parts)) is not None:
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
    if _in_the_way(folder, parts) is not None:  # a link on the way would lead out
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


# -- replacing a folder whole ------------------------------------------------------------------

#: Called with "staged" (the new folder complete, nothing swapped yet) and "swapping" (the old
#: folder renamed away, the new one not yet in, signals held): tests pause a run there to
#: deliver a signal at a known point. None in a real run.
pause: Callable[[str], None] | None = None

_STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                  if hasattr(signal, name))


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held (pending) inside: they take effect after it."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(folder: Path, where: Path | None = None) -> list[Path]:
    """Undo what a killed run left beside ``folder`` (or in ``where``, inside a mount point);
    the paths it removed. A run stages into ``.NAME.tmp-PID-*`` and keeps the old folder as
    ``.NAME.old-PID`` during the swap: only those of processes that no longer run are touched;
    when ``folder`` itself is missing and an old one survived, it is put back."""
    removed: list[Path] = []
    pattern = re.compile(rf"\.{re.escape(folder.name)}\.(tmp|old)-(\d+)(-.*)?")
    try:
        siblings = sorted((where or folder.parent).iterdir())
    except OSError:
        return removed
    for path in siblings:
        m = pattern.fullmatch(path.name)
        if not m or _alive(int(m.group(2))) or not path.is_dir() or path.is_symlink():
            continue
        if m.group(1) == "old" and not os.path.lexists(folder):
            os.replace(path, folder)
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _foreign(folder: Path, mine: set[str]) -> list[str]:
    """What ``folder`` holds that is not the command's: files, links and empty folders its
    marker does not list (relative paths, in order)."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        here = Path(root)
        links = [d for d in dirs if (here / d).is_symlink()]
        dirs[:] = sorted(d for d in dirs if d not in links)
        for name in sorted(files + links):
            rel = str((here / name).relative_to(folder))
            if rel not in mine and rel != MARKER:
                found.append(rel)
        if not dirs and not files and here != folder:
            found.append(str(here.relative_to(folder)) + "/")
    return found


def _carry(old: Path, new: Path, rel: str) -> None:
    """Put ``old/rel`` (a user's file, link or empty folder) at ``new/rel``: a file is hard
    linked (copied where it cannot be), so the old folder keeps it until the swap."""
    source, target = old / rel.rstrip("/"), new / rel.rstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    info = source.lstat()
    if rel.endswith("/"):
        target.mkdir(exist_ok=True)
    elif stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
    elif stat.S_ISREG(info.st_mode):
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)
    else:
        raise NotOwned(f"{_shown(source)} is not a regular file, link or folder (a FIFO, "
                       "socket or device) of the user's: it cannot be kept across a "
                       "replacement; nothing was written")


def install(folder: Path, command: str, staged: Path, *, adopt: Adopt | None = None) -> Path:
    """Make ``staged`` (a complete new output, made beside ``folder`` on the same file system)
    ``command``'s output at ``folder``, whole: checked as :func:`publish` checks, the user's
    files carried over, then swapped in with the stopping signals held. A mount point is
    written inside instead (it cannot be renamed). ``staged`` is gone or left for the caller to
    remove. Raises NotOwned (and OSError from the disk)."""
    path = check(folder, command, adopt=adopt)
    wanted = sorted(str(p.relative_to(staged)) for p in staged.rglob("*")
                    if p.is_file() and not p.is_symlink())
    if os.path.ismount(path):
        files = [(rel, (staged / rel).read_bytes()) for rel in wanted]
        with signals_held():
            return publish(path, command, files, adopt=adopt)
    existing = path.exists()
    mine = set(owned_files(path, command)) if existing else set()
    if existing and _marker(path) is None and adopt is not None:
        mine = set(adopt(path) or [])
    for rel in wanted:
        why = _refused(path, rel, mine)
        if why is not None:
            raise NotOwned(why + "; nothing was written")
    for rel in _foreign(path, mine) if existing else []:
        _carry(path, staged, rel)
    mark(staged, command, wanted)
    os.chmod(staged, stat.S_IMODE(path.stat().st_mode) if existing else 0o755)
    if pause is not None:
        pause("staged")
    old = path.parent / f".{path.name}.old-{os.getpid()}"
    with signals_held():
        if not existing:
            os.replace(staged, path)
            return path
        os.replace(path, old)
        try:
            if pause is not None:
                pause("swapping")
            os.replace(staged, path)
        except BaseException:
            os.replace(old, path)
            raise
        shutil.rmtree(old, ignore_errors=True)
    return path


def replace(folder: Path, command: str, files: Iterable[tuple[str, bytes]], *,
            adopt: Adopt | None = None) -> Path:
    """Write ``files`` as ``command``'s whole output at ``folder``: staged beside it, then
    installed (:func:`install`). Raises NotOwned (and OSError from the disk)."""
    path = check(folder, command, adopt=adopt)
    parent = path if os.path.ismount(path) else path.parent
    parent.mkdir(parents=True, exist_ok=True)
    recover(path, parent)
    staged = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-{os.getpid()}-", dir=parent))
    try:
        for rel, data in sorted(dict(files).items()):
            write_file(staged, rel, data)
        return install(path, command, staged, adopt=adopt)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
