"""The conformance reports, from a results file: results.json, JUnit XML, Markdown, the known
list, and the tables they share; the HTML page is drawn by ``fixturegen.harness.pagedata``,
which also writes the set (:func:`fixturegen.harness.pagedata.write_reports`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Literal
from xml.sax.saxutils import quoteattr as _quoteattr

from fixturegen.certs.schemes import SCHEMES
from fixturegen.harness.compare import DIVERGENCES, OUTCOMES
from fixturegen.harness.reach import reach_markdown
from fixturegen.harness.results import (
    CaseResult,
    CatalogueEntry,
    Implementation,
    PeerMadeCertificate,
    PeerVerdict,
    ResultsFile,
    SenderNote,
    dump_results,
)
from fixturegen.markdown import code, md
from fixturegen.owned import NotOwned, claim, mark, owned_files, write_file
from fixturegen.verify.codes import Flag, SenderFlag
from fixturegen.verify.inputs import printable
from fixturegen.verify.sender import REFUSED_AS

IMPORTANCE_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, None: 4}
FINDING_ORDER = {"false_accept": 0, "false_reject": 1, "crash": 2, "hang": 3, "error": 4,
                 "wrong_reason": 5}
FILES = ("results.json", "junit.xml", "summary.md", "index.html", "known-divergences.txt")


def reason_text(case: CaseResult, entry: CatalogueEntry) -> str:
    """What a ``wrong_reason`` stood for, beside the code the manifest expects (else "")."""
    if case.outcome != "wrong_reason" or not case.reason:
        return ""
    return f"read as {', '.join(case.reason)}, not {entry.expected_error}"


def findings(impl: Implementation, catalogue: dict[str, CatalogueEntry]) -> list[CaseResult]:
    """The divergences of one implementation: false accepts first, by importance, then the rest."""
    found = [c for c in impl.cases if c.outcome in DIVERGENCES]
    return sorted(found, key=lambda c: (FINDING_ORDER[c.outcome],
                                        IMPORTANCE_RANK[catalogue[c.id].importance], c.id))


def summary_rows(results: ResultsFile) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for impl in results.implementations:
        row: dict[str, object] = {"name": impl.label, "version": impl.version,
                                  "cases": len(impl.cases), "seconds": impl.seconds}
        row.update({o: impl.counts.get(o, 0) for o in OUTCOMES})
        row["new"] = sum(1 for c in impl.cases if c.outcome in DIVERGENCES and not c.known)
        rows.append(row)
    return rows


@dataclass(frozen=True)
class InteropRow:
    maker: str
    types: list[str]
    cells: list[tuple[int, int]]  # (accepted with the maker's PeerId, certificates), per column


def interop_matrix(results: ResultsFile) -> tuple[list[str], list[InteropRow]]:
    """Columns (``reference`` first, then every implementation) and one row per maker."""
    made = results.peer_made
    if made is None:
        return [], []
    columns = ["reference", *[impl.name for impl in results.implementations
                             if impl.mode == "api"]]
    makers = list(dict.fromkeys(a.maker for a in made.attempts))
    rows: list[InteropRow] = []
    for maker in makers:
        certs = [c for c in made.certificates if c.maker == maker]
        cells: list[tuple[int, int]] = []
        for column in columns:
            if column == "reference":
                good = sum(1 for c in certs if c.reference.verdict == "accept"
                           and c.reference.peer_id == c.peer_id)
            else:
                good = sum(1 for c in certs if column in c.verifiers
                           and c.verifiers[column].outcome == "agree")
            cells.append((good, len(certs)))
        rows.append(InteropRow(maker, list(dict.fromkeys(c.host_key_type for c in certs)),
                               cells))
    return columns, rows


@dataclass(frozen=True)
class Blame:
    """Whose fault a refusal of a peer-made certificate is: the maker's when a sender flag of
    the certificate can explain it, else the verifier's."""

    party: Literal["maker", "verifier"]
    flags: tuple[str, ...]  # the sender flags that can explain the refusal, in their order

    def text(self, outcome: str, verifier: str) -> str:
        """The outcome as the interop findings show it, with whose fault it is."""
        if self.party == "maker":
            return f"{outcome}, the maker's fault ({', '.join(self.flags)})"
        return "fixturegen bug" if verifier == "reference" else f"{outcome}, the verifier's fault"


#: For each sender flag a receiver may be shown to tolerate, the verifier flag of the corpus's
#: cases that carry it (a receiver whose API check accepted every one of those cases in the
#: run does not refuse a certificate for that property).
TOLERANCE_CASES: dict[SenderFlag, Flag] = {
    SenderFlag.EMPTY_ISSUER: Flag.EMPTY_NAME,
    SenderFlag.EMPTY_SUBJECT: Flag.EMPTY_NAME,
    SenderFlag.CRITICAL_EXTENSION: Flag.CRITICAL_KNOWN_EXTENSION,
    SenderFlag.GENERALIZED_TIME_BEFORE_2050: Flag.GENERALIZED_TIME_BEFORE_2050,
    SenderFlag.UNIQUE_ID_PRESENT: Flag.UNIQUE_ID_PRESENT,
}
#: The critical extensions those cases mark critical: basicConstraints, keyUsage and
#: subjectAltName (a receiver that accepts them may still refuse another).
TOLERANCE_CRITICAL = frozenset({"2.5.29.19", "2.5.29.15", "2.5.29.17"})


def tolerated(results: ResultsFile, name: str) -> frozenset[SenderFlag]:
    """The sender flags implementation ``name`` is shown to tolerate: its API entry accepted
    every corpus case of the run that carries the property (:data:`TOLERANCE_CASES`)."""
    return tolerated_by({c.id: c.verdict for impl in results.implementations
                         if impl.name == name and impl.mode == "api" for c in impl.cases})


def tolerance_cases() -> frozenset[str]:
    """The catalogue's cases that show whether a receiver tolerates a sender flag (those that
    carry a flag of :data:`TOLERANCE_CASES`)."""
    from fixturegen.cases import CATALOGUE

    wanted = set(TOLERANCE_CASES.values())
    return frozenset(c.id for c in CATALOGUE if wanted & set(c.flags))


def tolerated_by(verdicts: dict[str, str | None]) -> frozenset[SenderFlag]:
    """The sender flags a receiver with these API ``verdicts`` (case id -> verdict) is shown
    to tolerate: it accepted every case that carries the property, and was sent one."""
    from fixturegen.cases import CATALOGUE

    out: set[SenderFlag] = set()
    for sender, flag in TOLERANCE_CASES.items():
        shown = [c.id for c in CATALOGUE if flag in c.flags and c.id in verdicts]
        if shown and all(verdicts[i] == "accept" for i in shown):
            out.add(sender)
    return frozenset(out)


def _tolerates(note: SenderNote, shown: frozenset[SenderFlag]) -> bool:
    if note.flag not in shown:
        return False
    if note.flag is SenderFlag.CRITICAL_EXTENSION:  # detail: "OID (name); OID ..."
        return {part.split(" ")[0] for part in note.detail.split("; ")} <= TOLERANCE_CRITICAL
    return True


def blame(cert: PeerMadeCertificate, verdict: PeerVerdict,
          shown: frozenset[SenderFlag] | None = None) -> Blame | None:
    """Whose fault ``verdict``'s refusal of ``cert`` is (None: it is not a refusal).

    The reference verifier's (``shown`` None): the maker's when its error code is one a sender
    flag of the certificate explains (:data:`fixturegen.verify.sender.REFUSED_AS`). An
    implementation's: the maker's when the certificate has a sender flag the implementation is
    not ``shown`` to tolerate (:func:`tolerated`)."""
    if verdict.verdict != "reject":
        return None
    if shown is None:
        causes = [n.flag.value for n in cert.sender_flags
                  if verdict.error in {c.value for c in REFUSED_AS[n.flag]}]
    else:
        causes = [n.flag.value for n in cert.sender_flags if not _tolerates(n, shown)]
    return Blame("maker" if causes else "verifier", tuple(dict.fromkeys(causes)))


def sender_rows(results: ResultsFile) -> list[tuple[str, str, int, int, str]]:
    """(maker, sender flag, certificates with it, certificates made, the details once each),
    per maker in attempt order; a maker whose certificates carry none has one row with flag
    ``""``."""
    made = results.peer_made
    if made is None:
        return []
    rows: list[tuple[str, str, int, int, str]] = []
    for maker in dict.fromkeys(a.maker for a in made.attempts):
        certs = [c for c in made.certificates if c.maker == maker]
        if not certs:
            continue
        flags: dict[str, list[str]] = {}
        for cert in certs:
            for note in cert.sender_flags:
                flags.setdefault(note.flag.value, []).append(note.detail)
        if not flags:
            rows.append((maker, "", 0, len(certs), ""))
        for flag, details in flags.items():
            rows.append((maker, flag, len(details), len(certs),
                         "; ".join(dict.fromkeys(details))))
    return rows


def _sender_markdown(results: ResultsFile) -> list[str]:
    rows = sender_rows(results)
    if not rows:
        return []
    lines = ["", "Sender flags (the reference's judgement of each certificate as a sender: "
             "each entitles a receiver to refuse it, so a refusal one can explain is the "
             "maker's fault):", ""]
    for maker, flag, count, total, details in rows:
        if not flag:
            lines.append(f"- {md(maker)}: none on its {total} certificate(s)")
        else:
            lines.append(f"- {md(maker)}: {code(flag)} on {count} of {total}: {md(details)}")
    return lines


def interop_findings(results: ResultsFile) -> list[tuple[str, str, str, str, str]]:
    """(maker, host key type, verifier, outcome, what it said) for every cell not accepted,
    once per distinct text; the reference verifier's rejections first. A refusal's outcome says
    whose fault it is (:func:`blame`, with what each verifier is shown to tolerate)."""
    made = results.peer_made
    seen: dict[tuple[str, str, str, str, str], str] = {}  # the finding, and its first file
    shown: dict[str, frozenset[SenderFlag]] = {}
    for cert in made.certificates if made else []:
        if cert.reference.verdict != "accept" or cert.reference.peer_id != cert.peer_id:
            fault = blame(cert, cert.reference)
            seen.setdefault((cert.maker, cert.host_key_type, "reference",
                             fault.text("reject", "reference") if fault else "fixturegen bug",
                             str(cert.reference.error)), cert.path)
    for cert in made.certificates if made else []:
        for name, cell in cert.verifiers.items():
            if cell.outcome != "agree":
                if name not in shown:
                    shown[name] = tolerated(results, name)
                fault = blame(cert, cell, shown[name])
                seen.setdefault((cert.maker, cert.host_key_type, name,
                                 fault.text(cell.outcome, name) if fault else cell.outcome,
                                 cell.error or "no error"), cert.path)
    return [(m, t, v, o, f"{e} (e.g. {path})") for (m, t, v, o, e), path in seen.items()]


def _interop_markdown(results: ResultsFile) -> list[str]:
    columns, rows = interop_matrix(results)
    made = results.peer_made
    if made is None:
        return []
    lines = ["", "## Interop: certificates made by each implementation", "",
             "Each implementation's own certificate generator made certificates for fresh host "
             "keys; each cell counts those accepted with the maker's PeerId (rows: maker, "
             "columns: verifier). The certificates are in `peer-made/`.", "",
             "| maker | host key types | " + " | ".join(columns) + " |",
             "|" + "---|" * (len(columns) + 2)]
    for row in rows:
        cells = " | ".join(f"{good}/{total}" for good, total in row.cells)
        lines.append(f"| {md(row.maker)} | {md(', '.join(row.types) or '-')} | {cells} |")
    missing = list(dict.fromkeys((a.maker, a.host_key_type, a.outcome, a.error or "")
                                 for a in made.attempts if a.outcome != "made"))
    if missing:
        lines += ["", "Not made:", ""]
        lines += [f"- {md(m)} {md(t)}: **{md(o)}**: {code(e)}" for m, t, o, e in missing]
    lines += _sender_markdown(results)
    found = interop_findings(results)
    if found:
        lines += ["", "Rejected:", ""]
        lines += [f"- {md(m)} {md(t)} by **{md(v)}**: {md(o)}: {md(e)}"
                  for m, t, v, o, e in found]
    return lines


PROOFS = ("valid", "certificate", "extension", "transcript")


def proof_set_table(results: ResultsFile) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Per handshake entry and proof-set key: whether all-valid passes and each proof,
    corrupted alone, fails the handshake. Cells: ``ok`` (as required), the outcome otherwise."""
    keys = list(dict.fromkeys(e.id.split(".")[1] for e in results.catalogue
                              if e.kind == "proof_set"))
    columns = [f"{key} {proof}" for key in keys for proof in PROOFS]
    rows: list[tuple[str, list[str]]] = []
    for impl in results.implementations:
        if impl.mode != "handshake":
            continue
        side = "server" if impl.direction == "dial" else "client"
        got = {c.id: c for c in impl.cases}
        cells: list[str] = []
        for key in keys:
            for proof in PROOFS:
                case = got.get(f"ps.{key}.{side}.{proof}")
                cells.append("-" if case is None else "ok" if case.outcome == "agree"
                             else case.outcome)
        rows.append((impl.label, cells))
    return columns, rows


def mode_differences(results: ResultsFile) -> list[tuple[str, str, str, str, str]]:
    """(handshake entry, case, API outcome, handshake outcome, what the handshake said) where
    a library's handshake verdict differs from its API verdict on the same case."""
    api = {i.name: {c.id: c for c in i.cases} for i in results.implementations
           if i.mode == "api"}
    out: list[tuple[str, str, str, str, str]] = []
    for impl in results.implementations:
        if impl.mode != "handshake" or impl.name not in api:
            continue
        for case in impl.cases:
            before = api[impl.name].get(case.id)
            if before is None or "skip" in (before.outcome, case.outcome):
                continue
            if before.verdict != case.verdict:
                said = case.error or (case.peer.error if case.peer else None) or "no error"
                out.append((impl.label, case.id, before.outcome, case.outcome, said))
    return out


def handshake_profile(results: ResultsFile) -> list[tuple[str, str, int, float, float]]:
    """(entry, scheme, handshakes, median wall ms on the implementation's side, median fixture
    peer CPU ms), over the handshakes of a run that completed on both sides."""
    names = {s.code_point: name for name, s in SCHEMES.items()}
    out: list[tuple[str, str, int, float, float]] = []
    for impl in results.implementations:
        by_scheme: dict[int, list[CaseResult]] = {}
        for c in impl.cases:
            if c.peer is not None and c.peer.scheme is not None and c.verdict == "accept":
                by_scheme.setdefault(c.peer.scheme, []).append(c)
        for scheme, done in sorted(by_scheme.items()):
            out.append((impl.label, names.get(scheme, f"0x{scheme:04x}"), len(done),
                        1000 * median(c.seconds for c in done),
                        1000 * median(c.peer.cpu_seconds for c in done if c.peer)))
    return out


#: A check is *costly* when its CPU time is this many times the median of the same entry's
#: valid certificates of its host key type (of all its valid certificates, for a case of no
#: such type) and at least COST_FLOOR, or at least COST_BOUND whatever the median. CPU time,
#: not wall time: another process on the machine does not make a check costly.
COST_RATIO = 50.0
COST_FLOOR = 0.05
COST_BOUND = 1.0
#: The most expensive checks each API entry shows.
COST_SHOWN = 3


@dataclass(frozen=True)
class Cost:
    """What one API entry's checks cost in CPU: the median over its valid certificates, and
    over those of each host key type, its most expensive checks (case, seconds), and those
    that are costly."""

    label: str
    measured: int
    median_valid: float
    by_type: tuple[tuple[str, float], ...]
    top: tuple[tuple[str, float], ...]
    costly: tuple[tuple[str, float], ...]


def check_costs(results: ResultsFile) -> list[Cost]:
    """Per API entry whose adapter reports CPU time: the cost of its checks, each compared with
    the valid certificates of its host key type."""
    valid = {c.id for c in results.catalogue if c.kind == "certificate" and c.expected == "valid"}
    types = {c.id: c.host_key_type for c in results.catalogue if c.host_key_type}
    out: list[Cost] = []
    for impl in results.implementations:
        timed = [(c.id, c.cpu_seconds) for c in impl.cases
                 if impl.mode == "api" and c.cpu_seconds is not None and c.verdict != "skip"]
        if not timed:
            continue
        base = [t for case, t in timed if case in valid]
        mid = median(base) if base else median(t for _, t in timed)
        per_type: dict[str, list[float]] = {}
        for case, t in timed:
            if case in valid and case in types:
                per_type.setdefault(types[case], []).append(t)
        by_type = {kind: median(ts) for kind, ts in sorted(per_type.items())}
        ranked = sorted(timed, key=lambda ct: (-ct[1], ct[0]))
        costly = tuple((case, t) for case, t in ranked if t >= COST_BOUND or (
            t >= COST_FLOOR and t >= COST_RATIO * by_type.get(types.get(case, ""), mid)))
        out.append(Cost(impl.label, len(timed), mid, tuple(by_type.items()),
                        tuple(ranked[:COST_SHOWN]), costly))
    return out


def _cost_markdown(results: ResultsFile) -> list[str]:
    costs = check_costs(results)
    if not costs:
        return []
    lines = ["", "## What a check costs", "",
             f"CPU time of each API check, as the adapter measured it. *Costly*: at least "
             f"{COST_RATIO:g} times the median of the entry's valid certificates of the same "
             f"host key type and {COST_FLOOR * 1000:g} ms, or {COST_BOUND:g} s whatever the "
             "median.", "",
             "| entry | checks timed | median, valid (ms) | by host key type (ms) "
             "| most expensive (ms) | costly |",
             "|---|---|---|---|---|---|"]
    for c in costs:
        kinds = "; ".join(f"{md(kind)} {t * 1000:.2f}" for kind, t in c.by_type) or "-"
        top = "; ".join(f"{code(case)} {t * 1000:.1f}" for case, t in c.top)
        costly = "; ".join(f"{code(case)} {t * 1000:.1f}" for case, t in c.costly) or "none"
        lines.append(f"| {md(c.label)} | {c.measured} | {c.median_valid * 1000:.2f} | {kinds} "
                     f"| {top} | {costly} |")
    return lines


def presented_certificates(results: ResultsFile) -> list[tuple[str, int, int, int, str, str]]:
    """Per handshake entry, the certificates the implementation presented to the fixture peer:
    (entry, handshakes in which it presented one, distinct chains, refused by the reference,
    the refusals' codes, the reference's flags on them)."""
    out: list[tuple[str, int, int, int, str, str]] = []
    for impl in results.implementations:
        seen = [c.peer.presented for c in impl.cases
                if c.peer is not None and c.peer.presented is not None]
        if impl.mode != "handshake" or not seen:
            continue
        refused = [p for p in seen if not p.accepted]
        codes = sorted({p.error or "?" for p in refused})
        flags = sorted({f for p in seen for f in p.flags})
        distinct = len({(p.peer_id, p.accepted, p.error) for p in seen})
        out.append((impl.label, len(seen), distinct, len(refused), ", ".join(codes),
                    ", ".join(flags)))
    return out


def _handshake_markdown(results: ResultsFile) -> list[str]:
    columns, rows = proof_set_table(results)
    if not rows:
        return []
    lines = ["", "## Handshakes: three proofs, each corrupted alone", "",
             "Each cell: the handshake with the fixture peer's certificate, extension or "
             "CertificateVerify corrupted alone (`valid`: none) ended as the spec requires "
             "(`ok`), or the outcome it got instead.", "",
             "| entry | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]
    lines += [f"| {md(label)} | " + " | ".join(md(c) for c in cells) + " |"
              for label, cells in rows]
    diffs = mode_differences(results)
    lines += ["", "## Handshake verdicts that differ from the same library's API verdict", ""]
    lines += [f"- {md(label)} {code(case)}: API {md(a)}, handshake **{md(h)}**: {code(said)}"
              for label, case, a, h, said in diffs] or ["None."]
    profile = handshake_profile(results)
    lines += ["", "## Handshake profile", "",
              "Medians over this run's accepted handshakes: wall time from request to the "
              "implementation's answer (its process included), and the fixture peer's own "
              "CPU for its TLS handshake.", "",
              "| entry | scheme | handshakes | median wall ms | median peer CPU ms |",
              "|---|---|---|---|---|"]
    lines += [f"| {md(label)} | {md(scheme)} | {n} | {wall:.2f} | {cpu:.3f} |"
              for label, scheme, n, wall, cpu in profile]
    lines += ["", "## The implementations' own certificates", "",
              "What each implementation presented to the fixture peer (which requires a "
              "certificate in both directions), checked by the reference verifier.", "",
              "| entry | handshakes | identities | refused | why | flags |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {md(label)} | {n} | {distinct} | {refused} | {md(codes or '-')} "
              f"| {md(flags or '-')} |"
              for label, n, distinct, refused, codes, flags in presented_certificates(results)]
    return lines


def markdown(results: ResultsFile) -> str:
    head = ("| implementation | version | cases | agree | acceptable | false accept "
            "| false reject | wrong reason | skip | hang | crash | error | seconds |")
    lines = ["# libp2p TLS conformance", "",
             f"Corpus {code(results.corpus)} (seed {code(results.seed)}, catalogue "
             f"{code(results.catalogue_version)}), {md(results.generator)}.", "",
             head, "|" + "---|" * 13]
    for r in summary_rows(results):
        lines.append(
            f"| {md(r['name'])} | {md(r['version'])} | {r['cases']} | {r['agree']} "
            f"| {r['acceptable']} | {r['false_accept']} | {r['false_reject']} "
            f"| {r['wrong_reason']} | {r['skip']} "
            f"| {r['hang']} | {r['crash']} | {r['error']} | {float(str(r['seconds'])):.1f} |")
    catalogue = {c.id: c for c in results.catalogue}
    for impl in results.implementations:
        found = findings(impl, catalogue)
        lines += ["", f"## {md(impl.label)} {md(impl.version)}: {len(found)} divergences", ""]
        for case in found:
            entry = catalogue[case.id]
            known = " (known)" if case.known else ""
            said = code(case.error) if case.error else "no error"
            why = reason_text(case, entry)
            said += f" ({md(why)})" if why else ""
            lines.append(f"- **{md(case.outcome)}**{known} {code(case.id)} "
                         f"\\[{md(entry.importance or '-')}\\]: {md(entry.rule)}. "
                         f"Implementation said: {said}. File: {code(entry.path)}")
    lines += reach_markdown(results)
    lines += _cost_markdown(results)
    lines += _handshake_markdown(results)
    lines += _interop_markdown(results)
    return "\n".join(lines) + "\n"


def quoteattr(text: str) -> str:
    """An XML attribute value: quoted, escaped, and with every character XML 1.0 cannot hold
    (control characters but tab, newline and CR; surrogates; U+FFFE and U+FFFF) written as
    ``\\xNN`` or ``\\uNNNN``, so the file stays well-formed whatever an adapter said."""
    def shown(m: re.Match[str]) -> str:
        n = ord(m.group())
        return f"\\x{n:02x}" if n < 256 else f"\\u{n:04x}"

    return _quoteattr(_XML_UNSAFE.sub(shown, text))


_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def junit(results: ResultsFile) -> str:
    catalogue = {c.id: c for c in results.catalogue}
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>"]
    for impl in results.implementations:
        failures = sum(1 for c in impl.cases if c.outcome in DIVERGENCES and not c.known)
        skipped = sum(1 for c in impl.cases if c.outcome == "skip" or (
            c.outcome in DIVERGENCES and c.known))
        out.append(f"  <testsuite name={quoteattr(impl.label)} tests=\"{len(impl.cases)}\" "
                   f"failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" "
                   f"time=\"{impl.seconds:.3f}\">")
        props = [("version", impl.version), ("fixturegen", results.generator),
                 ("seed", results.seed or ""), ("catalogue", results.catalogue_version or "")]
        out.append("    <properties>" + "".join(
            f"<property name=\"{name}\" value={quoteattr(value)}/>" for name, value in props)
            + "</properties>")
        for case in impl.cases:
            entry = catalogue[case.id]
            out.append(f"    <testcase classname={quoteattr(impl.label)} name={quoteattr(case.id)} "
                       f"time=\"{case.seconds:.4f}\">")
            expected = entry.expected + (f" ({entry.expected_error})" if entry.expected_error
                                         else "")
            reason = f"; reason {', '.join(case.reason)}" if case.reason else ""
            detail = (f"expected {expected}; verdict {case.verdict}; "
                      f"error {case.error!r}{reason}; rule: {entry.rule}; file: {entry.path}")
            if case.outcome == "skip":
                out.append(f"      <skipped message={quoteattr(case.error or 'skipped')}/>")
            elif case.outcome in DIVERGENCES and case.known:
                out.append(f"      <skipped message={quoteattr('known ' + case.outcome)}/>")
            elif case.outcome in DIVERGENCES:
                out.append(f"      <failure type={quoteattr(case.outcome)} "
                           f"message={quoteattr(detail)}/>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


REPORT_FILES = ("results.json", "junit.xml", "summary.md", "index.html", "known-divergences.txt")


class ReportFolderError(Exception):
    """The reports cannot go to that folder (exit 2)."""


#: The reports folder's owner (its marker): ``harness run`` and ``harness report`` write it.
COMMAND = "harness"


def check_report_folder(folder: Path) -> None:
    """Refuse a reports folder that is a symbolic link, not a folder, or a folder of other
    things: reports go to a new or empty folder, or to one an earlier ``harness run`` or
    ``harness report`` wrote (its marker says so; the files it lists, and the logs and
    certificates of the run, are replaced). Creates it if it is new."""
    try:
        claim(folder, COMMAND)
    except NotOwned as exc:
        raise ReportFolderError(f"{exc} (reports)") from None
    except OSError as exc:
        raise ReportFolderError(f"cannot use {printable(str(folder))} for reports: "
                                f"{exc.strerror or exc}") from None


def write_all(folder: Path, files: Iterable[tuple[str, str]]) -> None:
    """Write each file whole (a reader never sees half a report), into a folder
    :func:`check_report_folder` accepted; the marker lists them."""
    texts = list(files)
    path = claim(folder, COMMAND)
    mark(path, COMMAND, set(owned_files(path, COMMAND)) | {name for name, _ in texts})
    for name, text in texts:
        write_file(path, name, text.encode("utf-8"))


def write_results_only(results: ResultsFile, folder: Path) -> None:
    write_all(folder, [("results.json", dump_results(results))])
