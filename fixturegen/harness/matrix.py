"""matrix.json: one implementation's divergence classes over its versions (the version matrix).

``fixturegen harness matrix`` runs the corpus over many builds of one implementation; each
build's results are an ordinary results file. This module is the contract of the file that
joins them (:class:`MatrixFile`, schema ``matrix.schema.json``) and the join itself
(:func:`aggregate`): per divergence class (the cases of the implementation that share a rule
and an outcome, as ``harness findings`` groups them), the versions where it occurs, the first
version that shows it (``introduced``) and the first built version after the last that shows
it (``fixed_in``; null while the newest built version still shows it). Versions that could not
be built are listed with the reason and count for neither.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fixturegen.harness.classes import classes
from fixturegen.harness.compare import OUTCOMES, Outcome
from fixturegen.harness.results import ResultsFile
from fixturegen.model.manifest import json_schema
from fixturegen.verify.inputs import InputError, printable
from fixturegen.verify.jsonfile import load_json

SCHEMA_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class VersionRun(_Model):
    """One version of the matrix: built or not, and what its run found."""

    version: str
    released: str | None = Field(description="When the registry published it (ISO 8601)")
    built: bool
    reason: str | None = Field(description="Why it was not built (or not run), one line")
    build_seconds: float | None = Field(description="What building took (0: from the cache)")
    run_seconds: float | None = Field(description="Wall time of its corpus run")
    transports: list[Literal["tcp", "quic"]] = Field(
        description="The handshake transports this build has")
    notes: list[str] = Field(description="What this build leaves out, and why")
    entries: list[str] = Field(description="The entries run (NAME, NAME@TRANSPORT-DIRECTION)")
    counts: dict[str, int] = Field(description="Outcomes over all its entries")
    results: str | None = Field(description="Its results.json, relative to the matrix folder")


class VersionedClass(_Model):
    """A divergence class, across versions."""

    id: str = Field(description="OUTCOME:RULE, shortened")
    rule: str
    outcome: Outcome
    importance: Literal["critical", "high", "medium", "low"] | None
    cases: list[str] = Field(description="Every case of the class in any version")
    versions: dict[str, list[str]] = Field(
        description="Each version that shows the class -> its cases there")
    affected: list[str] = Field(description="The versions that show it, oldest first")
    introduced: str | None = Field(description="The oldest built version that shows it")
    fixed_in: str | None = Field(
        description="The first built version after the newest one that shows it (null: the "
        "newest built version shows it)")
    ranges: list[Annotated[list[str], Field(min_length=2, max_length=2)]] = Field(
        description="Runs of consecutive built versions that show it: [first, last]")


class MatrixFile(_Model):
    schema_version: int = Field(ge=1, le=SCHEMA_VERSION, description="The format's version: "
                                "a newer one is refused, not misread")
    generator: str
    implementation: str
    package: str
    corpus: str
    seed: str | None
    mode: Literal["api", "handshake", "all"]
    spec: str = Field(description="The --versions SPEC")
    versions: list[VersionRun] = Field(description="Oldest first")
    classes: list[VersionedClass]

    def built(self) -> list[VersionRun]:
        return [v for v in self.versions if v.built]


class MatrixError(Exception):
    """A matrix file that cannot be read."""


def matrix_schema() -> dict[str, object]:
    return json_schema(MatrixFile, "matrix")


def load_matrix(path: Path) -> MatrixFile:
    try:
        return MatrixFile.model_validate(load_json(path, "matrix", "matrix file"))
    except InputError as exc:
        raise MatrixError(str(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MatrixError(printable(f"{path} is not a matrix file: {where}: {first['msg']}")
                          ) from None


def class_id(outcome: str, rule: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", rule.lower()).strip("-")[:60].rstrip("-")
    return f"{outcome}:{slug}"


def aggregate(name: str, runs: Sequence[tuple[VersionRun, ResultsFile | None]]
              ) -> list[VersionedClass]:
    """The classes of implementation ``name`` over ``runs`` (oldest first); a run without
    results (not built) shows nothing."""
    order = [run.version for run, results in runs if run.built and results is not None]
    found: dict[tuple[str, str], dict[str, object]] = {}
    for run, results in runs:
        if not run.built or results is None or not any(
                i.name == name for i in results.implementations):
            continue
        for cls in classes(results, name):
            entry = found.setdefault((cls.rule, cls.outcome), {
                "importance": cls.importance, "versions": {}, "cases": {}})
            ids = [e.id for e in cls.entries]
            entry["versions"][run.version] = ids  # type: ignore[index]
            entry["cases"].update(dict.fromkeys(ids))  # type: ignore[attr-defined]
    out: list[VersionedClass] = []
    for (rule, outcome), entry in found.items():
        versions: dict[str, list[str]] = entry["versions"]  # type: ignore[assignment]
        affected = [v for v in order if v in versions]
        ranges: list[list[str]] = []
        for i, version in enumerate(order):
            if version not in versions:
                continue
            if ranges and order[i - 1] == ranges[-1][1]:
                ranges[-1][1] = version
            else:
                ranges.append([version, version])
        last = order.index(affected[-1])
        fixed = order[last + 1] if last + 1 < len(order) else None
        out.append(VersionedClass(
            id=class_id(outcome, rule), rule=rule, outcome=outcome,  # type: ignore[arg-type]
            importance=entry["importance"],  # type: ignore[arg-type]
            cases=list(entry["cases"]),  # type: ignore[call-overload]
            versions={v: versions[v] for v in affected}, affected=affected,
            introduced=affected[0], fixed_in=fixed, ranges=ranges))
    rank = {o: i for i, o in enumerate(("false_accept", "false_reject", "crash", "hang",
                                         "error"))}
    importance = {"critical": 0, "high": 1, "medium": 2, "low": 3, None: 4}
    return sorted(out, key=lambda c: (rank.get(c.outcome, 9), importance[c.importance],
                                      order.index(c.introduced) if c.introduced else 0, c.rule))


def counts(results: ResultsFile, name: str) -> dict[str, int]:
    total: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for impl in results.implementations:
        if impl.name == name:
            for outcome, n in impl.counts.items():
                total[outcome] = total.get(outcome, 0) + n
    return total


def affected_text(matrix: MatrixFile, rule: str, outcome: str) -> str | None:
    """What a findings report says of the versions a class affects (None: the matrix has no
    such class)."""
    built = [v.version for v in matrix.built()]
    if not built:
        return None
    for cls in matrix.classes:
        if cls.rule == rule and cls.outcome == outcome:
            spans = ", ".join(a if a == b else f"{a} to {b}" for a, b in cls.ranges)
            oldest = " (the oldest version tried)" if cls.introduced == built[0] else ""
            fixed = (f"fixed in {cls.fixed_in}" if cls.fixed_in is not None
                     else f"not fixed (the newest version tried, {built[-1]}, shows it)")
            return (f"{spans}: {len(cls.affected)} of the {len(built)} versions built; first "
                    f"seen in {cls.introduced}{oldest}; {fixed}")
    return f"none of the {len(built)} versions built ({built[0]} to {built[-1]})"
