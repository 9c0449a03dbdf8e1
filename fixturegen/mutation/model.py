"""mutation.json: one campaign's mutants and what killed each (schema ``mutation.schema.json``).

A mutant is killed by the corpus when any case's verdict differs from the unmutated build's
(today's divergences are the baseline, not failures), or an accept reports another PeerId than
the unmutated build's accept of the same case, or the adapter crashes or hangs where
the baseline answered (``verdict``); or, every verdict the same, when the reason the
implementation gave (its error, mapped to the reference's error codes by the adapter's reviewed
table) changed for a case (``reason``), or when a certificate the implementation makes for a
``generate`` request is no longer one the reference verifier accepts where the baseline's was
(``verdict``, named ``NAME:generate:TYPE#N``). It is killed by the upstream tests when the
implementation's own unit tests of that code fail on it. A mutant that does not build is
``unviable``; one the reviewed survivors file calls equivalent (it cannot change behaviour) is
``equivalent`` with its reason. The scores count only the rest (the non-equivalent, viable
mutants).

A campaign runs either the tool's mechanical mutants (``kind`` ``mutants``) or the
implementation's reviewed bug models (``kind`` ``bugs``, :mod:`fixturegen.mutation.bugs`):
hand-written realistic bugs, each one or more edits, reported as a score of their own. For
either, the cases that kill a mutant are counted (``killing_cases``): a mutant killed by one
case only is lost to the corpus when that case is deleted.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from fixturegen.model.manifest import FrozenModel, _absent_when_null, json_schema

SCHEMA_VERSION = 1

Status = Literal["killed", "survived", "unviable", "equivalent"]
Category = Literal["both", "corpus_only", "upstream_only", "survived", "unviable", "equivalent"]
Kind = Literal["mutants", "bugs"]


class Edit(FrozenModel):
    """One edit of a bug model: ``find`` (exactly once in the file, after the bug's earlier
    edits) becomes ``replace``."""

    file: str = Field(description="Relative to the pristine source tree's root")
    find: str
    replace: str


class Mutant(FrozenModel):
    """One mutant as the adapter's tool listed it: a span of one file and its replacement.
    Lines and columns are 1-based, columns count characters, ``end`` is exclusive."""

    id: str = Field(description="Stable: FILE:LINE:COLUMN:OPERATOR (and a number if needed)")
    file: str = Field(description="Relative to the source tree's root")
    line: int
    function: str | None = Field(description="The enclosing function, as the tool names it")
    operator: str = Field(description="The tool's name of the mutation")
    start: tuple[int, int]
    end: tuple[int, int]
    replacement: str
    original: str = Field(default="", description="The text the span held (for the report)")
    description: str | None = Field(default=None, description="A bug model's one line "
                                    "(absent for a tool's mutant)")
    edits: list[Edit] | None = Field(default=None, description="A bug model's edits, applied "
                                     "whole (absent for a tool's mutant, whose span is above)")

    @model_serializer(mode="wrap")
    def _bug_fields_only_for_bugs(self, handler: SerializerFunctionWrapHandler
                                  ) -> dict[str, object]:
        return _absent_when_null(handler, self, "description", "edits")

    @property
    def files(self) -> list[str]:
        """Every file the mutant changes (a bug model may change several)."""
        if self.edits:
            return sorted({e.file for e in self.edits})
        return [self.file]


class CorpusKill(FrozenModel):
    verdict: list[str] = Field(description="Cases whose verdict changed (or that crashed or "
                               "hung where the baseline answered), and generate requests "
                               "(NAME:generate:TYPE#N) whose certificate the reference verifier "
                               "rejects where it accepted the baseline's")
    reason: list[str] = Field(description="Cases whose verdict stayed but whose mapped reason "
                              "changed")
    entries: list[str] = Field(description="The entries run (NAME, NAME@TRANSPORT-DIRECTION)")
    stopped: str | None = Field(default=None, description="The run stopped at this case (a "
                                "hang: every later case would cost the limit too); the killing "
                                "cases are then those seen before it, a lower bound")

    @model_serializer(mode="wrap")
    def _stopped_only_when_stopped(self, handler: SerializerFunctionWrapHandler
                                   ) -> dict[str, object]:
        return _absent_when_null(handler, self, "stopped")

    @property
    def cases(self) -> list[str]:
        """The corpus cases that kill (ENTRY:CASE names reduced to the case id, each once, in
        order): deleting one of them from the corpus leaves the mutant killed by the others."""
        seen: dict[str, None] = {}
        for name in (*self.verdict, *self.reason):
            case = name.split(":", 1)[-1].split(" ", 1)[0]
            seen.setdefault(case, None)
        return list(seen)


class MutantResult(FrozenModel):
    mutant: Mutant
    status: Status
    category: Category
    corpus: CorpusKill | None = Field(description="null: not run (unviable, equivalent)")
    upstream: Literal["killed", "survived", "unviable", "not_run"]
    note: str = Field(description="Why it is equivalent, what input would kill a gap, why it "
                      "is unviable (one line)")
    survivor: Literal["equivalent", "gap", "unkillable", "unreviewed", ""] = Field(
        description="For a survivor of the corpus: the reviewed verdict on it")
    seconds: float = Field(description="Build, corpus run and upstream tests of this mutant")
    killing_cases: int = Field(default=0, description="How many corpus cases kill it (0: the "
                               "corpus does not); 1: a single deleted case would let it live")


class Counts(FrozenModel):
    generated: int
    unviable: int
    equivalent: int
    killed_by_corpus: int
    killed_by_verdict: int
    killed_by_reason_only: int
    killed_by_upstream: int
    both: int
    corpus_only: int
    upstream_only: int
    survived: int = Field(description="Neither the corpus nor the upstream tests (of the viable, "
                          "non-equivalent mutants)")
    corpus_score: float = Field(description="killed_by_corpus / (generated - unviable - "
                                "equivalent)")
    upstream_score: float | None = Field(description="killed_by_upstream / the same, or null "
                                         "when the upstream tests did not run")
    gap: int = Field(default=0, description="Survivors of the corpus reviewed as a gap (a "
                     "missing case)")
    unkillable: int = Field(default=0, description="Survivors of the corpus reviewed as "
                            "unkillable (no certificate can kill them, the reason in the note)")
    corpus_score_killable: float = Field(
        default=0.0, description="killed_by_corpus / (generated - unviable - equivalent - "
        "unkillable): the score over the mutants a certificate can kill")
    killed_by_one_case: int = Field(default=0, description="Mutants the corpus kills with "
                                    "exactly one case (a run stopped at a hang not counted)")
    killed_by_several_cases: int = Field(default=0, description="Mutants the corpus kills "
                                         "with two cases or more")


class MutationFile(FrozenModel):
    schema_version: int = Field(ge=1, le=SCHEMA_VERSION, description="The format's version: "
                                "a newer one is refused, not misread")
    generator: str
    implementation: str
    version: str = Field(description="The version mutated, or VERSION+src.HASH for a source tree")
    tool: str = Field(description="The mutation tool and its version, or the bug models' "
                      "file and author")
    kind: Kind = Field(default="mutants", description="mutants: the tool's mechanical mutants; "
                       "bugs: the implementation's reviewed bug models (a separate score)")
    scope: list[str] = Field(description="The files (and functions) mutated")
    shard: str | None = Field(description="K/N when this file holds one shard; null merged")
    corpus: str
    seed: str | None
    catalogue_version: str | None = Field(
        default=None, description="The version of the case catalogue the corpus was drawn "
        "from (COUNT-DIGEST; null for a corpus of imported certificates)")
    mode: Literal["api", "handshake", "all"]
    upstream: str = Field(description="The implementation's own tests that ran, or why none")
    counts: Counts
    seconds_per_mutant: dict[str, float] = Field(
        description="Median seconds per mutant: build, corpus, upstream")
    mutants: list[MutantResult]


def mutation_schema() -> dict[str, object]:
    return json_schema(MutationFile, "mutation")


def count(results: list[MutantResult], upstream_ran: bool) -> Counts:
    generated = len(results)
    unviable = sum(r.status == "unviable" for r in results)
    equivalent = sum(r.status == "equivalent" for r in results)
    live = [r for r in results if r.status not in ("unviable", "equivalent")]
    corpus = [r for r in live if r.corpus is not None and (r.corpus.verdict or r.corpus.reason)]
    by_verdict = sum(1 for r in corpus if r.corpus is not None and r.corpus.verdict)
    upstream = sum(r.upstream == "killed" for r in live)
    denominator = len(live)
    survivors = [r for r in live if r not in corpus]
    unkillable = sum(r.survivor == "unkillable" for r in survivors)
    killable = denominator - unkillable
    return Counts(
        generated=generated, unviable=unviable, equivalent=equivalent,
        killed_by_corpus=len(corpus), killed_by_verdict=by_verdict,
        killed_by_reason_only=len(corpus) - by_verdict, killed_by_upstream=upstream,
        both=sum(r.category == "both" for r in live),
        corpus_only=sum(r.category == "corpus_only" for r in live),
        upstream_only=sum(r.category == "upstream_only" for r in live),
        survived=sum(r.category == "survived" for r in live),
        corpus_score=round(len(corpus) / denominator, 4) if denominator else 0.0,
        upstream_score=(round(upstream / denominator, 4) if denominator else 0.0)
        if upstream_ran else None,
        gap=sum(r.survivor == "gap" for r in survivors), unkillable=unkillable,
        corpus_score_killable=round(len(corpus) / killable, 4) if killable else 0.0,
        killed_by_one_case=sum(1 for r in corpus if single(r)),
        killed_by_several_cases=sum(1 for r in corpus
                                    if r.corpus is not None and len(r.corpus.cases) > 1))


def single(r: MutantResult) -> bool:
    """Killed by the corpus with exactly one case (and every case was run)."""
    return r.corpus is not None and r.corpus.stopped is None and len(r.corpus.cases) == 1


def with_cases(r: MutantResult) -> MutantResult:
    """``r`` with its ``killing_cases`` counted from its corpus result."""
    n = len(r.corpus.cases) if r.corpus is not None and r.status != "equivalent" else 0
    return r if r.killing_cases == n else r.model_copy(update={"killing_cases": n})


def category(corpus_killed: bool, upstream: str) -> Category:
    upstream_killed = upstream == "killed"
    if corpus_killed and upstream_killed:
        return "both"
    if corpus_killed:
        return "corpus_only"
    if upstream_killed:
        return "upstream_only"
    return "survived"
