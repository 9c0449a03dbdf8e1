"""matrix.json: one implementation's divergence classes over its versions (the version matrix).

``fixturegen harness matrix`` runs the corpus over many builds of one implementation; each
build's results are an ordinary results file. This module is the contract of the file that
joins them (:class:`MatrixFile`, schema ``matrix.schema.json``) and the join itself
(:func:`aggregate`): per divergence class (the cases of the implementation that share a rule
and an outcome, as ``harness findings`` groups them), the versions where it occurs, the first
version that shows it (``introduced``) and the first built version after the last that shows
it (``fixed_in``; null while the newest built version still shows it). Versions that could not
be built are listed with the reason and count for neither.

The certificates each version *makes* are followed the same way (:func:`aggregate_made`, from
each version's interop stage): a sender flag its certificates carry, a checker that refuses them
(with whose fault it is), a host key type it fails to make, each a :class:`MadeClass` with the
versions that show it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fixturegen.harness.classes import classes
from fixturegen.harness.compare import OUTCOMES, Outcome
from fixturegen.harness.report import blame, tolerated
from fixturegen.harness.results import ResultsFile
from fixturegen.model.manifest import json_schema
from fixturegen.verify.codes import SenderFlag
from fixturegen.verify.inputs import InputError, printable
from fixturegen.verify.jsonfile import load_json

SCHEMA_VERSION = 2  # 2: the interop stage per version (checkers, made)


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
    checkers: list[str] = Field(
        default_factory=list, description="Who checked the certificates this version made in "
        "its interop stage: the version itself, then the other shipped implementations' pinned "
        "builds (the reference verifier always does); empty: no interop stage")


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


MadeKind = Literal["invalid", "refused", "sender_flag", "not_made"]
Party = Literal["maker", "verifier"]


class MadeClass(_Model):
    """Something about the certificates an implementation makes, across versions: a sender
    flag they carry, a checker that refuses them, or a host key type it fails to make."""

    id: str = Field(description="invalid:ERROR, refused:CHECKER:PARTY, sender:FLAG or "
                    "not-made:KEY:OUTCOME")
    kind: MadeKind = Field(
        description="invalid: the reference verifier refuses them (the maker's fault; the "
        "checkers' refusals of those certificates are then right and not listed); refused: a "
        "checker refuses certificates the reference accepts; sender_flag: they carry one; "
        "not_made: a host key type the version failed to make")
    what: str = Field(description="What it is, one line")
    blame: Party | None = Field(
        description="A refusal's fault: the maker's when a sender flag of the certificate can "
        "explain it, else the verifier's (null for the other kinds)")
    versions: dict[str, list[str]] = Field(
        description="Each version that shows it -> the certificates (or host key types) there")
    affected: list[str] = Field(description="The versions that show it, oldest first")
    introduced: str | None = Field(description="The oldest version run that shows it")
    fixed_in: str | None = Field(
        description="The first version run after the newest one that shows it (null: the "
        "newest version run shows it)")
    ranges: list[Annotated[list[str], Field(min_length=2, max_length=2)]] = Field(
        description="Runs of consecutive versions run that show it: [first, last]")


class MatrixFile(_Model):
    schema_version: int = Field(ge=1, le=SCHEMA_VERSION, description="The format's version: "
                                "a newer one is refused, not misread")
    generator: str
    implementation: str
    package: str
    corpus: str
    seed: str | None
    catalogue_version: str | None = Field(
        default=None, description="The version of the case catalogue the corpus was drawn "
        "from (COUNT-DIGEST; null for a corpus of imported certificates)")
    mode: Literal["api", "handshake", "all"]
    spec: str = Field(description="The --versions SPEC")
    versions: list[VersionRun] = Field(description="Oldest first")
    classes: list[VersionedClass]
    made: list[MadeClass] = Field(
        default_factory=list, description="The certificates each version made (its interop "
        "stage), across versions; the versions run without one count for nothing here")
    tolerance: dict[str, list[str]] = Field(
        default_factory=dict, description="Each other checker -> the sender flags it is shown "
        "to tolerate (it accepted every corpus case carrying the property), which decides "
        "whose fault its refusals are")

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
        span = _span(order, versions)
        out.append(VersionedClass(
            id=class_id(outcome, rule), rule=rule, outcome=outcome,  # type: ignore[arg-type]
            importance=entry["importance"],  # type: ignore[arg-type]
            cases=list(entry["cases"]),  # type: ignore[call-overload]
            versions={v: versions[v] for v in span.affected}, affected=span.affected,
            introduced=span.introduced, fixed_in=span.fixed_in, ranges=span.ranges))
    rank = {o: i for i, o in enumerate(("false_accept", "false_reject", "crash", "hang",
                                         "error"))}
    importance = {"critical": 0, "high": 1, "medium": 2, "low": 3, None: 4}
    return sorted(out, key=lambda c: (rank.get(c.outcome, 9), importance[c.importance],
                                      order.index(c.introduced) if c.introduced else 0, c.rule))


@dataclass(frozen=True)
class _Span:
    affected: list[str]
    introduced: str
    fixed_in: str | None
    ranges: list[list[str]]


def _span(order: Sequence[str], versions: dict[str, list[str]]) -> _Span:
    """Where in ``order`` (the versions run, oldest first) a class shows: the versions, the
    first, the first after the last, and the runs of consecutive versions."""
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
    return _Span(affected, affected[0], fixed, ranges)


NOT_MADE = ("reject", "hang", "crash", "error")


@dataclass
class _Made:
    """A :class:`MadeClass` while it is gathered: the versions that show it, with their
    certificates (or host key types)."""

    kind: MadeKind
    what: str
    blame: Party | None
    versions: dict[str, list[str]] = field(default_factory=dict)


def aggregate_made(name: str, runs: Sequence[tuple[VersionRun, ResultsFile | None]],
                   tolerance: dict[str, list[str]] | None = None) -> list[MadeClass]:
    """What the certificates implementation ``name`` made show across ``runs`` (oldest first):
    only the versions whose results have an interop stage count (a version run without one
    neither shows a class nor fixes it). A certificate the reference verifier refuses is
    invalid, the maker's fault, and the checkers that refuse it are right; another checker's
    refusal is the maker's fault when a sender flag the checker is not shown to tolerate
    (``tolerance``; the version itself: its own API entry) can explain it."""
    order: list[str] = []
    found: dict[str, _Made] = {}

    def seen(ident: str, kind: MadeKind, what: str, party: Party | None, version: str,
             item: str) -> None:
        items = found.setdefault(ident, _Made(kind, what, party)).versions.setdefault(
            version, [])
        if item not in items:
            items.append(item)

    for run, results in runs:
        if not run.built or results is None or results.peer_made is None or not run.checkers:
            continue
        made = results.peer_made
        order.append(run.version)
        for attempt in made.attempts:
            if attempt.maker == name and attempt.outcome in NOT_MADE:
                seen(f"not-made:{attempt.host_key_type}:{attempt.outcome}", "not_made",
                     f"no {attempt.host_key_type} certificate made ({attempt.outcome})",
                     None, run.version, attempt.host_key_type)
        shown = {checker: frozenset(SenderFlag(f) for f in (tolerance or {}).get(checker, ()))
                 for checker in run.checkers}
        shown[name] = tolerated(results, name)
        for cert in made.certificates:
            if cert.maker != name:
                continue
            for note in cert.sender_flags:
                seen(f"sender:{note.flag.value}", "sender_flag",
                     f"its certificates carry sender flag {note.flag.value}: "
                     f"{note.flag.summary}", None, run.version, cert.id)
            if cert.reference.verdict == "reject":
                error = cert.reference.error or "refused"
                seen(f"invalid:{error}", "invalid", f"the reference verifier refuses its "
                     f"certificates ({error}): they break the spec", "maker", run.version,
                     cert.id)
                continue
            for checker, cell in cert.verifiers.items():
                fault = blame(cert, cell, shown.get(checker, frozenset()))
                if fault is None:
                    continue
                text = (f"{checker} refuses its certificates, the maker's fault "
                        f"({', '.join(fault.flags)})" if fault.party == "maker" else
                        f"{checker} refuses its certificates, the verifier's fault")
                seen(f"refused:{checker}:{fault.party}", "refused", text, fault.party,
                     run.version, cert.id)
    out: list[MadeClass] = []
    for ident, entry in found.items():
        span = _span(order, entry.versions)
        out.append(MadeClass(id=ident, kind=entry.kind, what=entry.what, blame=entry.blame,
                             versions=entry.versions, affected=span.affected,
                             introduced=span.introduced, fixed_in=span.fixed_in,
                             ranges=span.ranges))
    rank = {"invalid": 0, "refused": 1, "sender_flag": 2, "not_made": 3}
    return sorted(out, key=lambda c: (rank[c.kind], order.index(c.introduced or order[0]),
                                      c.id))


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
