"""Divergence classes: every case of one implementation (all its entries: the API check and
each handshake transport and direction) that shares a rule and an outcome. ``harness findings``
writes one report per class; the version matrix follows each class across versions."""

from __future__ import annotations

from dataclasses import dataclass, field

from fixturegen.harness.compare import DIVERGENCES
from fixturegen.harness.report import FINDING_ORDER, IMPORTANCE_RANK
from fixturegen.harness.results import CaseResult, CatalogueEntry, ResultsFile


class FindingsError(Exception):
    """A usage error (exit code 2): unknown implementation, unreadable corpus, bad folder."""


@dataclass(frozen=True)
class Observation:
    """One case as one entry of the implementation saw it."""

    label: str  # NAME, or NAME@TRANSPORT-DIRECTION
    mode: str
    result: CaseResult


@dataclass
class DivergenceClass:
    implementation: str
    version: str
    rule: str
    outcome: str
    entries: list[CatalogueEntry] = field(default_factory=list)
    seen: dict[str, list[Observation]] = field(default_factory=dict)

    @property
    def importance(self) -> str | None:
        ranked = sorted((e.importance for e in self.entries),
                        key=lambda i: IMPORTANCE_RANK[i])
        return ranked[0] if ranked else None

    @property
    def kinds(self) -> list[str]:
        return list(dict.fromkeys(e.kind for e in self.entries))

    def title(self) -> str:
        n = len(self.entries)
        return f"{self.implementation} {self.version} {self._verb(n)}: {self.rule}"

    def _verb(self, n: int) -> str:
        s = "" if n == 1 else "s"
        kind = self.kinds[0] if len(self.kinds) == 1 else "mixed"
        what = {"certificate": f"certificate{s}",
                # a vector is the certificate and its CertificateVerify: either may be the
                # invalid part (a valid signature by the key of a broken certificate, say)
                "certificate_verify": f"CertificateVerify vector{s}",
                "proof_set": f"handshake{s} with one proof corrupted",
                "rule": f"handshake{s} breaking a rule of the protocol",
                "mixed": f"case{s}"}[kind]
        if self.outcome == "false_accept":
            if all(e.expected != "invalid" for e in self.entries):
                return f"accepts {n} {what} as the wrong PeerId"
            if kind in ("proof_set", "rule"):
                return f"completes {n} {what}"
            return f"accepts {n} invalid {what}"
        if self.outcome == "false_reject":
            return f"rejects {n} valid {what}"
        if self.outcome == "wrong_reason":
            return f"rejects {n} invalid {what} for another reason than this rule"
        return {"hang": f"hangs on {n} case{s}", "crash": f"crashes on {n} case{s}",
                "error": f"answers garbage for {n} case{s}"}[self.outcome]


def classes(results: ResultsFile, name: str) -> list[DivergenceClass]:
    """The divergence classes of implementation ``name`` (a name, or one entry's label)."""
    entries = [i for i in results.implementations if name in (i.name, i.label)]
    if not entries:
        known = sorted({i.name for i in results.implementations})
        raise FindingsError(f"--impl {name!r} is not in this results file (it has: "
                            f"{', '.join(known) or 'no implementation'})")
    catalogue = {c.id: c for c in results.catalogue}
    found: dict[tuple[str, str], DivergenceClass] = {}
    for impl in entries:
        for case in impl.cases:
            if case.outcome not in DIVERGENCES or case.id not in catalogue:
                continue
            entry = catalogue[case.id]
            cls = found.setdefault((entry.rule, case.outcome), DivergenceClass(
                impl.name, impl.version, entry.rule, case.outcome))
            if case.id not in cls.seen:
                cls.entries.append(entry)
                cls.seen[case.id] = []
            cls.seen[case.id].append(Observation(impl.label, impl.mode, case))
    return sorted(found.values(), key=lambda c: (FINDING_ORDER[c.outcome],
                                                 IMPORTANCE_RANK[c.importance],
                                                 -len(c.entries), c.rule))
