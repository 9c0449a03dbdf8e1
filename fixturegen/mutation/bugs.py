"""Bug models: an implementation's reviewed file of hand-written realistic bugs
(``adapters/FOLDER/mutation/NAME.bugs.json``, schema ``bugs.schema.json``), run by
``fixturegen mutate --bugs`` beside the tool's mechanical mutants and scored on their own.

Each bug is one to five edits (``find`` exactly once in its file, after the bug's earlier
edits, becomes ``replace``), applied whole to the campaign's scratch tree and put back whole.
Loading checks everything before anything runs, each problem one line (:class:`BugsError`): the
JSON and its fields, the sizes, duplicate ids, the version (the one being mutated), a file
outside the scope's ``files``, ``handshake_files`` and ``bug_files``, and every ``find``
against the pristine source tree (absent, or not unique).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from fixturegen.model.manifest import FrozenModel, json_schema
from fixturegen.mutation.model import Edit, Mutant

MAX_FILE = 2 * 1024 * 1024
MAX_BUGS = 500
MAX_EDITS = 5
MAX_TEXT = 20_000  # characters of one find or replace
MAX_LINE = 300  # characters of a description, a kind, an author
ID_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"


class BugsError(Exception):
    """A bug model file that cannot be run (one line)."""


class Bug(FrozenModel):
    id: str = Field(pattern=ID_PATTERN, max_length=80, description="kebab-case, unique in the "
                    "file: the bug's id in the report")
    description: str = Field(min_length=1, max_length=MAX_LINE,
                             description="One line: the bug, as a changelog would say it")
    kind: str = Field(min_length=1, max_length=60, description="A short class word")
    edits: list[Edit] = Field(min_length=1, max_length=MAX_EDITS,
                              description="Applied in order, whole")


class BugFile(FrozenModel):
    implementation: str = Field(min_length=1, max_length=80)
    version: str = Field(min_length=1, max_length=80, description="The pinned version the "
                         "texts were written against")
    author: str = Field(min_length=1, max_length=MAX_LINE)
    bugs: list[Bug] = Field(min_length=1, max_length=MAX_BUGS)


def bugs_schema() -> dict[str, object]:
    return json_schema(BugFile, "bugs")


def bugs_path(adapters: Path, folder: str, name: str) -> Path:
    return adapters / folder / "mutation" / f"{name}.bugs.json"


def read(path: Path) -> BugFile:
    """The file, its fields checked (not yet against a tree)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise BugsError(f"{path}: {exc.strerror or exc}") from None
    if size > MAX_FILE:
        raise BugsError(f"{path}: {size} bytes, more than the {MAX_FILE} a bug file may have")
    try:
        return BugFile.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        text = " ".join(f"{path}: {where}: {first['msg']}".split())
        raise BugsError(text[:400]) from None


def check(bugs: BugFile, path: Path, *, name: str, version: str | None,
          files: tuple[str, ...], tree: Path | None) -> None:
    """Everything a run needs: the implementation and version mutated, unique ids, only the
    scope's files, and every edit applying to ``tree`` (the pristine source; None: before
    the source is there, every check but that one)."""
    if bugs.implementation != name:
        raise BugsError(f"{path}: written for {bugs.implementation!r}, not {name!r}")
    if version is not None and bugs.version != version:
        raise BugsError(f"{path}: written against version {bugs.version}, but {version} is "
                        "being mutated (check the texts against it and change the version)")
    seen: set[str] = set()
    for bug in bugs.bugs:
        if bug.id in seen:
            raise BugsError(f"{path}: bug id {bug.id!r} appears twice")
        seen.add(bug.id)
        texts: dict[str, str] = {}
        for number, edit in enumerate(bug.edits, 1):
            where = f"{path}: bug {bug.id!r} edit {number}"
            if edit.file not in files:
                raise BugsError(f"{where}: {edit.file!r} is not in the mutation scope "
                                f"({', '.join(files)})")
            if len(edit.find) > MAX_TEXT or len(edit.replace) > MAX_TEXT:
                raise BugsError(f"{where}: find or replace longer than {MAX_TEXT} characters")
            if not edit.find:
                raise BugsError(f"{where}: find is empty")
            if tree is None:
                continue
            if edit.file not in texts:
                try:
                    texts[edit.file] = (tree / edit.file).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise BugsError(f"{where}: cannot read {edit.file} in the source tree "
                                    f"({exc})") from None
            try:
                texts[edit.file] = applied(texts[edit.file], edit)
            except ValueError as exc:
                raise BugsError(f"{where}: {exc}") from None


def applied(text: str, edit: Edit) -> str:
    """``text`` with ``edit`` made (ValueError: its find is absent or not unique)."""
    found = text.count(edit.find)
    if found != 1:
        what = "is not in" if found == 0 else f"occurs {found} times in"
        raise ValueError(f"find {_excerpt(edit.find)} {what} {edit.file} (it must occur "
                         "exactly once)")
    return text.replace(edit.find, edit.replace, 1)


def mutants(bugs: BugFile, tree: Path) -> list[Mutant]:
    """Each bug as the campaign runs it: a mutant whose edits are the bug's (its span fields
    name the first edit: where in the pristine tree, what it held, what it holds now)."""
    out = []
    for bug in bugs.bugs:
        first = bug.edits[0]
        text = (tree / first.file).read_text(encoding="utf-8")
        before = text[:text.index(first.find)]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        end_text = before + first.find
        end = (end_text.count("\n") + 1, len(end_text) - (end_text.rfind("\n") + 1) + 1)
        out.append(Mutant(id=bug.id, file=first.file, line=line, function=None,
                          operator=bug.kind, start=(line, column), end=end,
                          replacement=first.replace, original=first.find,
                          description=bug.description, edits=list(bug.edits)))
    return out


def load(path: Path, *, name: str, version: str | None, files: tuple[str, ...],
         tree: Path) -> tuple[BugFile, list[Mutant]]:
    """Read and check the file against the pristine ``tree``; its bugs as mutants."""
    bugs = read(path)
    check(bugs, path, name=name, version=version, files=files, tree=tree)
    return bugs, mutants(bugs, tree)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 60 else flat[:57] + "...")
