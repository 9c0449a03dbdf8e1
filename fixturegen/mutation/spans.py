"""Applying a mutant: its span of one file replaced by its text, in a scratch copy of the
source tree (never in the tree the user or a registry cache owns). Lines and columns are
1-based, columns count characters (a ``\\r`` does not count), the end is exclusive: the
convention of cargo-mutants, which the other adapters' listing scripts follow."""

from __future__ import annotations

from pathlib import Path

from fixturegen.mutation.bugs import applied
from fixturegen.mutation.model import Mutant
from fixturegen.owned import write_file


class SpanError(Exception):
    """A span that does not fit the file (the listing and the tree disagree)."""


def offsets(text: str, start: tuple[int, int], end: tuple[int, int]) -> tuple[int, int]:
    """The character offsets of ``start`` and ``end`` in ``text``."""
    line, column = 1, 1
    found: dict[tuple[int, int], int] = {}
    for index, char in enumerate(text):
        if (line, column) in (start, end):
            found[(line, column)] = index
        if char == "\n":
            line, column = line + 1, 1
        elif char != "\r":
            column += 1
    if (line, column) in (start, end):
        found[(line, column)] = len(text)
    if start not in found or end not in found or found[start] > found[end]:
        raise SpanError(f"span {start}..{end} is not in the file")
    return found[start], found[end]


def spliced(text: str, mutant: Mutant) -> str:
    a, b = offsets(text, mutant.start, mutant.end)
    return text[:a] + mutant.replacement + text[b:]


def original_text(text: str, mutant: Mutant) -> str:
    a, b = offsets(text, mutant.start, mutant.end)
    return text[a:b]


def apply(tree: Path, pristine: Path, mutant: Mutant) -> None:
    """Write ``mutant`` into ``tree``'s copy of its file (each of its files, for a bug model),
    from ``pristine``'s, never through a link. Every edit is made in memory first: nothing is
    written when one does not apply."""
    if not mutant.edits:
        source = (pristine / mutant.file).read_text(encoding="utf-8")
        _write(tree, mutant.file, spliced(source, mutant).encode("utf-8"), pristine)
        return
    texts: dict[str, str] = {}
    for edit in mutant.edits:
        if edit.file not in texts:
            texts[edit.file] = (pristine / edit.file).read_text(encoding="utf-8")
        try:
            texts[edit.file] = applied(texts[edit.file], edit)
        except ValueError as exc:
            raise SpanError(str(exc)) from None
    for rel, text in texts.items():
        _write(tree, rel, text.encode("utf-8"), pristine)


def restore(tree: Path, pristine: Path, files: set[str]) -> None:
    """Put ``files`` back as ``pristine`` has them (after a mutant, or an interrupt)."""
    for rel in files:
        target = tree / rel
        data = (pristine / rel).read_bytes()
        if target.is_symlink() or not target.exists() or target.read_bytes() != data:
            _write(tree, rel, data, pristine)


def _write(tree: Path, rel: str, data: bytes, pristine: Path) -> None:
    """``tree/rel`` written whole as a regular file with the pristine file's mode, never
    through a link (a link there, or on the way, is refused: fixturegen.owned.write_file)."""
    write_file(tree, rel, data, (pristine / rel).stat().st_mode & 0o777)
