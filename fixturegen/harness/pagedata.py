"""What a conformance page shows, computed once from a results file: the summary, the case x
entry matrix (one letter per cell), the findings of each implementation by divergence class,
the handshake tables and the interop matrix.

Both pages are drawn from it: ``index.html`` beside the results (``harness run`` and ``harness
report``) and the documentation site's Results pages, which keep this data (``page.json``, a
few hundred KB where results.json is several MB) instead of the run's files. The matrix and
the findings are rendered by the same templates (``templates/conformance-*.html.j2``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from pydantic import BaseModel, ConfigDict, Field

from fixturegen.harness.classes import classes
from fixturegen.harness.compare import DIVERGENCES, OUTCOMES
from fixturegen.harness.reach import EXPLANATION, ReachRow, reach_rows
from fixturegen.harness.report import (
    REPORT_FILES,
    handshake_profile,
    interop_findings,
    interop_matrix,
    junit,
    markdown,
    mode_differences,
    proof_set_table,
    sender_rows,
    summary_rows,
    write_all,
)
from fixturegen.harness.results import CatalogueEntry, ResultsFile, dump_results, known_text
from fixturegen.output.render import TEMPLATES
from fixturegen.verify.inputs import shown

SCHEMA_VERSION = 1

#: One letter per outcome in :attr:`Entry.outcomes`; ``-`` is a case the entry was not sent.
LETTERS: dict[str, str] = {"agree": "a", "acceptable": "o", "false_accept": "A",
                           "false_reject": "R", "wrong_reason": "w", "skip": "s", "hang": "h",
                           "crash": "c", "error": "e"}
OUTCOME_OF = {letter: outcome for outcome, letter in LETTERS.items()}
#: One letter per answer in :attr:`Entry.verdicts`; ``-``: not sent, or no answer (a hang, a
#: crash).
VERDICT_LETTERS: dict[str, str] = {"accept": "A", "reject": "R", "skip": "s"}
assert set(LETTERS) == set(OUTCOMES)
#: The letters of the divergences: a matrix cell with one links to its finding.
DIVERGING = "".join(LETTERS[o] for o in OUTCOMES if o in DIVERGENCES)

#: The sections of the matrix, in order: the catalogue's modules, then the transcripts.
SECTIONS: dict[str, str] = {
    "valid": "Valid certificates (the matrix of schemes and host keys, and cases easy to get "
             "wrong)",
    "invalid": "Invalid certificates (each breaks one rule)",
    "acceptable": "Acceptable certificates (either verdict is conformant)",
    "times": "Validity times",
    "faults": "Generated faults (each fault of the extension under every host key type, "
              "pairwise over certificate scheme and extension placement)",
    "boundaries": "Boundary values (each property of the model at and around its limits)",
    "peerids": "The expected PeerId (every host key type: the right PeerId in base58btc and "
               "CIDv1, another key, another type, another multihash)",
    "cost": "What a check costs (the largest host key a receiver could be sent)",
    "state": "Checked after another (a valid certificate first, then one made from it: a "
             "verifier that remembers what it verified)",
    "clock": "Validity near the verifier's clock (certificates the run made when each entry "
             "started, and two it made once the adapter had first answered)",
    "cv": "CertificateVerify vectors, valid",
    "cv-invalid": "CertificateVerify vectors, invalid",
    "ps": "Handshake proof sets (one proof corrupted alone)",
    "rule": "The handshake's own rules (a valid certificate, one rule of the handshake broken "
            "by the fixture peer)",
    "other": "Other cases",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Case(_Model):
    id: str
    kind: Literal["certificate", "certificate_verify", "proof_set", "rule"]
    section: str
    family: str
    expected: Literal["valid", "invalid", "acceptable"]
    expected_error: str | None = None
    importance: Literal["critical", "high", "medium", "low"] | None = None
    #: Only for a case some entry diverges on (the page shows it there).
    rule: str | None = None
    description: str | None = None
    path: str | None = None


class Entry(_Model):
    label: str
    name: str
    version: str
    package: str
    verifier: str
    mode: str
    seconds: float
    cases: int
    counts: dict[str, int]
    new: int
    #: One letter of :data:`LETTERS` per case, in the order of :attr:`PageData.cases`.
    outcomes: str
    #: What it answered, one letter of :data:`VERDICT_LETTERS` per case (same order; empty in
    #: data written before the case pages).
    verdicts: str = ""
    #: What it said when it refused, per case (same order): an index into
    #: :attr:`PageData.texts`, or -1 for nothing said or not sent.
    said: list[int] = []


class Said(_Model):
    labels: list[str]
    text: int = Field(description="What they said: an index into PageData.texts")
    known: bool


class FindingCase(_Model):
    id: str
    said: list[Said]


class FindingClass(_Model):
    outcome: str
    rule: str
    importance: str | None = None
    title: str
    cases: list[FindingCase]


class Findings(_Model):
    name: str
    version: str
    classes: list[FindingClass]


class InteropRow(_Model):
    maker: str
    types: list[str]
    cells: list[tuple[int, int]]


class PageData(_Model):
    schema_version: int
    generator: str
    corpus: str
    seed: str | None
    catalogue_version: str | None = None
    #: When the results were written (UTC), and the command that wrote them, when known.
    produced: str | None = None
    command: str | None = None
    cases: list[Case]
    entries: list[Entry]
    findings: list[Findings]
    proof_set_columns: list[str]
    proof_set_rows: list[tuple[str, list[str]]]
    #: (entry, case, API outcome, handshake outcome, index into texts of what it said)
    mode_differences: list[tuple[str, str, str, str, int]]
    profile: list[tuple[str, str, int, float, float]]
    interop_columns: list[str]
    interop_rows: list[InteropRow]
    interop_findings: list[tuple[str, str, str, str, str]]
    not_made: list[tuple[str, str, str, str]]
    interop: bool
    #: The sender's judgement per maker: (maker, sender flag or "" for none, certificates with
    #: it, certificates made, details) (``fixturegen.harness.report.sender_rows``).
    sender_rows: list[tuple[str, str, int, int, str]] = []
    #: Every text an implementation said, once (many cases share one error).
    texts: list[str] = []
    #: Per entry, whether each generated fault was reached (``harness/reach.py``).
    reach: list[ReachRow] = []

    def case_index(self) -> dict[str, int]:
        return {c.id: i for i, c in enumerate(self.cases)}


def section_and_family(entry: CatalogueEntry) -> tuple[str, str]:
    """Where a case goes in the matrix: the catalogue module that declares it and its family
    (the id template), or for a vector or proof set its id's pattern."""
    from fixturegen.cases import CATALOGUE

    known = {c.id: c for c in CATALOGUE}
    if entry.id in known:
        c = known[entry.id]
        return c.section, c.family
    parts = entry.id.split(".")
    if entry.kind == "rule":
        return "rule", f"rule.{parts[1]}.{{side}}" if len(parts) > 1 else entry.id
    if entry.kind == "proof_set":
        return "ps", f"ps.{parts[1]}.{{context}}.{{proof}}" if len(parts) > 1 else entry.id
    if parts[0] == "cv-invalid":
        return "cv-invalid", f"cv-invalid.{parts[1]}.{{context}}.{{fault}}"
    if parts[0] == "ps":
        return "cv-invalid", f"ps.{parts[1]}.{{context}}.{{proof}}-cv"
    if parts[0] == "cv":
        return "cv", "cv.{fixture}.{context}"
    if parts[0] == "clock":
        return "clock", entry.id
    return "other", entry.id


#: What an implementation said is shown up to this many characters (results.json has it all).
TEXT_LIMIT = 300


def shorten(text: str) -> str:
    """``text`` on one line, cut at :data:`TEXT_LIMIT` characters, saying how much was cut."""
    text = " ".join(text.split())
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}… ({len(text) - TEXT_LIMIT} more characters in results.json)"


def _said(labels: Iterable[tuple[str, str, bool]], texts: dict[str, int]) -> list[Said]:
    grouped: dict[int, list[tuple[str, bool]]] = {}
    for label, text, known in labels:
        index = texts.setdefault(shorten(text), len(texts))
        grouped.setdefault(index, []).append((label, known))
    return [Said(labels=[label for label, _ in who], text=index,
                 known=all(known for _, known in who)) for index, who in grouped.items()]


def _text(result_verdict: str | None, peer_id: str | None, error: str | None,
          outcome: str, reason: list[str] | None = None) -> str:
    if result_verdict == "accept":
        return f"accepted (PeerId {peer_id})" if peer_id else "accepted"
    if error and outcome == "wrong_reason" and reason:
        return f"(read as {', '.join(reason)}) {error}"  # first: a long text is cut
    if error:
        return error
    return {"hang": "no answer in time", "crash": "the adapter died"}.get(outcome,
                                                                            "no error text")


def page_data(results: ResultsFile, produced: str | None = None) -> PageData:
    """Everything the conformance page shows, from a results file."""
    diverging = {c.id for impl in results.implementations for c in impl.cases
                 if c.outcome in DIVERGENCES}
    cases: list[Case] = []
    for e in results.catalogue:
        section, family = section_and_family(e)
        shown = e.id in diverging
        cases.append(Case(id=e.id, kind=e.kind, section=section, family=family,
                          expected=e.expected, expected_error=e.expected_error,
                          importance=e.importance, rule=e.rule if shown else None,
                          description=e.description if shown else None,
                          path=e.path if shown else None))
    order = {c.id: i for i, c in enumerate(cases)}
    entries: list[Entry] = []
    texts: dict[str, int] = {}
    for impl, row in zip(results.implementations, summary_rows(results), strict=True):
        letters = ["-"] * len(cases)
        verdicts = ["-"] * len(cases)
        said = [-1] * len(cases)
        for c in impl.cases:
            if c.id in order:
                at = order[c.id]
                letters[at] = LETTERS[c.outcome]
                verdicts[at] = VERDICT_LETTERS.get(c.verdict or "", "-")
                if c.verdict != "accept" and c.error:
                    said[at] = texts.setdefault(shorten(c.error), len(texts))
        entries.append(Entry(label=impl.label, name=impl.name, version=impl.version,
                             package=impl.package, verifier=impl.verifier, mode=impl.mode,
                             seconds=impl.seconds, cases=len(impl.cases),
                             counts=dict(impl.counts),
                             new=int(str(row["new"])), outcomes="".join(letters),
                             verdicts="".join(verdicts), said=said))
    findings: list[Findings] = []
    for name in dict.fromkeys(impl.name for impl in results.implementations):
        found = classes(results, name)
        version = next(i.version for i in results.implementations if i.name == name)
        findings.append(Findings(name=name, version=version, classes=[
            FindingClass(outcome=cls.outcome, rule=cls.rule, importance=cls.importance,
                         title=cls.title(), cases=[
                             FindingCase(id=e.id, said=_said(
                                 ((o.label, _text(o.result.verdict, o.result.peer_id,
                                                  o.result.error, o.result.outcome,
                                                  o.result.reason),
                                   o.result.known) for o in cls.seen[e.id]), texts))
                             for e in cls.entries])
            for cls in found]))
    columns, rows = proof_set_table(results)
    icolumns, irows = interop_matrix(results)
    made = results.peer_made
    not_made = list(dict.fromkeys((a.maker, a.host_key_type, a.outcome, a.error or "")
                                  for a in made.attempts if a.outcome != "made")
                    ) if made else []
    return PageData(
        schema_version=SCHEMA_VERSION, generator=results.generator, corpus=results.corpus,
        seed=results.seed, catalogue_version=results.catalogue_version, produced=produced,
        cases=cases, entries=entries, findings=findings,
        proof_set_columns=columns, proof_set_rows=rows,
        mode_differences=[(label, case, api, hs, texts.setdefault(shorten(said), len(texts)))
                          for label, case, api, hs, said in mode_differences(results)],
        profile=handshake_profile(results),
        interop_columns=icolumns,
        interop_rows=[InteropRow(maker=r.maker, types=r.types, cells=r.cells) for r in irows],
        interop_findings=[(m, t, v, o, shorten(e)) for m, t, v, o, e in interop_findings(results)],
        not_made=[(m, t, o, shorten(e)) for m, t, o, e in not_made],
        interop=made is not None, texts=list(texts), reach=reach_rows(results),
        sender_rows=[(m, f, n, total, shorten(d)) for m, f, n, total, d in sender_rows(results)])


def load_page_data(path: Path) -> PageData:
    return PageData.model_validate_json(path.read_text(encoding="utf-8"))


def dump_page_data(d: PageData) -> str:
    """Compact, one value per line (so a new run's diff reads), nulls left out."""
    return json.dumps(d.model_dump(mode="json", exclude_none=True), indent=0, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class Row:
    case: Case
    family: str | None  # shown above the first case of a family of several
    cells: list[tuple[str, str]]  # (letter, implementation name), per entry


@dataclass(frozen=True)
class Group:
    title: str
    open: bool
    divergent: int
    rows: list[Row]


def groups(d: PageData) -> list[Group]:
    """The matrix's sections, in catalogue order, each case beside the rest of its family; a
    section is open when it has a divergence."""
    families: dict[str, dict[str, list[Row]]] = {}
    for i, c in enumerate(d.cases):
        cells = [(e.outcomes[i] if i < len(e.outcomes) else "-", e.name) for e in d.entries]
        family = families.setdefault(c.section, {}).setdefault(c.family, [])
        family.append(Row(c, None, cells))
    out: list[Group] = []
    for key in [*SECTIONS, *families]:
        by_family = families.pop(key, None)
        if by_family is None:
            continue
        rows: list[Row] = []
        for name, members in by_family.items():
            if len(members) > 1:
                members[0] = Row(members[0].case, name, members[0].cells)
            rows += members
        divergent = sum(1 for r in rows if any(letter in DIVERGING for letter, _ in r.cells))
        out.append(Group(SECTIONS.get(key, key), divergent > 0, divergent, rows))
    return out


@dataclass(frozen=True)
class Span:
    name: str
    entries: int


def spans(d: PageData) -> list[Span]:
    """The matrix's columns, per implementation (its API entry and its handshake entries)."""
    out: list[Span] = []
    for e in d.entries:
        if out and out[-1].name == e.name:
            out[-1] = Span(e.name, out[-1].entries + 1)
        else:
            out.append(Span(e.name, 1))
    return out


def anchors(d: PageData) -> Callable[[str, str], str]:
    """The id of one finding (an implementation, a case) on the page: short, since every
    divergent cell of the matrix carries one (``f`` + the implementation's and the case's
    positions)."""
    names = {f.name: n for n, f in enumerate(d.findings)}
    cases = d.case_index()

    def anchor(name: str, case_id: str) -> str:
        return f"f{names[name]}.{cases[case_id]}"

    return anchor


def differences(d: PageData) -> list[tuple[str, str, str, list[tuple[str, list[str]]]]]:
    """The handshake verdicts that differ from the API's, grouped by the two outcomes and what
    the handshake said: (API outcome, handshake outcome, said, [(entry, cases)])."""
    out: dict[tuple[str, str, str], dict[str, list[str]]] = {}
    for label, case, api, hs, said in d.mode_differences:
        out.setdefault((api, hs, d.texts[said]), {}).setdefault(label, []).append(case)
    return [(api, hs, said, list(by_label.items()))
            for (api, hs, said), by_label in out.items()]


@dataclass(frozen=True)
class Statement:
    """One thing some entries of an implementation said, and the cases they said it on."""

    text: str
    labels: tuple[str, ...]
    known: bool
    cases: list[str]


def statements(d: PageData, cls: FindingClass) -> list[Statement]:
    """A class's cases grouped by what was said and by whom (many cases share one error)."""
    out: dict[tuple[int, tuple[str, ...], bool], list[str]] = {}
    for case in cls.cases:
        for s in case.said:
            out.setdefault((s.text, tuple(s.labels), s.known), []).append(case.id)
    return [Statement(d.texts[text], labels, known, ids)
            for (text, labels, known), ids in out.items()]


def verifiers(d: PageData, name: str) -> list[tuple[str, str]]:
    """What each entry of an implementation calls: (entries, entry point), each once."""
    out: dict[str, list[str]] = {}
    for e in d.entries:
        if e.name == name:
            out.setdefault(e.verifier, []).append(entry_of(e.label))
    return [(", ".join(labels), verifier) for verifier, labels in out.items()]


def entry_of(label: str) -> str:
    """An entry's label within its implementation: ``api``, or ``TRANSPORT-DIRECTION``."""
    return label.split("@", 1)[1] if "@" in label else "api"


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined,
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True,
                      lstrip_blocks=True, finalize=shown)
    env.filters["entry_of"] = entry_of
    env.filters["key_of"] = lambda column: column.rsplit(" ", 1)[0]
    env.filters["proof_of"] = lambda column: column.rsplit(" ", 1)[1]
    return env


def _context(d: PageData, case_href: Callable[[str], str | None],
             finding_href: Callable[[str, str], str]) -> dict[str, object]:
    return {"d": d, "groups": groups(d), "spans": spans(d), "statements": statements,
            "letters": LETTERS, "diverging": DIVERGING,
            "outcomes": OUTCOMES, "case_href": case_href, "finding_href": finding_href,
            "anchor": anchors(d), "differences": differences(d),
            "verifiers": verifiers, "reach_explanation": EXPLANATION}


def html(d: PageData) -> str:
    """The whole page (``index.html`` beside the results)."""
    shown = {c.id for c in d.cases if c.description is not None}
    anchor = anchors(d)
    return _environment().get_template("conformance.html.j2").render(
        heading=3, **_context(d, lambda i: f"#c-{i}" if i in shown else None,
                              lambda name, i: f"#{anchor(name, i)}"))


def fragment(template: str, d: PageData, case_href: Callable[[str], str | None],
             finding_href: Callable[[str, str], str], heading: int = 2) -> str:
    """One part of the page (``matrix``, ``findings``, ``proofsets`` or ``style``) for another
    page: the documentation site renders its Results pages with these."""
    return _environment().get_template(f"conformance-{template}.html.j2").render(
        heading=heading, **_context(d, case_href, finding_href))


def write_reports(results: ResultsFile, folder: Path) -> None:
    """The five reports of a run into ``folder``, each file whole (see ``REPORT_FILES``)."""
    texts = (dump_results(results), junit(results), markdown(results),
             html(page_data(results)), known_text(results))
    write_all(folder, list(zip(REPORT_FILES, texts, strict=True)))
