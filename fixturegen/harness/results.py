"""results.json: the contract other tools read, and the accepted-divergence (known) list.

``implementations`` is a list of {``name``, ``version``, ``cases``: [{``id``, ``verdict``,
``peer_id``, ``error``, ``reason``, ``outcome``}]} (plus a few more fields each); ``catalogue``
carries what the manifest says about every case, so that a report can be rendered from the
file alone.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fixturegen.harness.compare import DIVERGENCES, Outcome
from fixturegen.keys.kinds import HostKeyName
from fixturegen.model.manifest import CASE_ID_PATTERN, NAME_PATTERN, Family, json_schema
from fixturegen.verify.codes import SenderFlag
from fixturegen.verify.inputs import InputError, printable, read_bounded
from fixturegen.verify.jsonfile import load_json

SCHEMA_VERSION = 4  # 2: mode, transport and direction per implementation entry; peer
#                    3: reason per case, the outcome wrong_reason
#                    4: the catalogue kind rule; the peer's version, alpn, certificate_requested


Mode = Literal["api", "handshake"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Presented(_Model):
    """The reference verifier's verdict on the certificate the implementation presented to the
    fixture peer in a handshake (its own identity, not the case's)."""

    accepted: bool
    error: str | None = Field(description="The reference's error code when it refuses")
    peer_id: str | None = Field(description="The PeerId the certificate proves")
    flags: list[str] = Field(description="The reference's flags on it (borderline features)")


class PeerSide(_Model):
    """The fixture peer's view of one handshake."""

    outcome: Literal["complete", "failed", "not_offered", "cannot_present"]
    error: str | None = Field(description="What its TLS stack said (an alert the "
                              "implementation sent, a timeout)")
    scheme: int | None = Field(description="The code point its CertificateVerify carried")
    version: int | None = Field(
        default=None, description="The TLS version its finished handshake agreed (772: TLS "
        "1.3, 771: TLS 1.2); null when it did not finish")
    alpn: str | None = Field(
        default=None, description="The ALPN protocol agreed (empty: none); null when the "
        "handshake did not finish")
    certificate_requested: bool | None = Field(
        default=None, description="The implementation listening: whether it asked for the "
        "peer's certificate (a CertificateRequest came); null otherwise")
    seconds: float = Field(description="Wall time of its TLS handshake")
    cpu_seconds: float = Field(description="Its own CPU time for the TLS handshake")
    presented: Presented | None = Field(
        default=None, description="The reference verifier's verdict on the certificate the "
        "implementation presented (null: it presented none, or the handshake ended first)")


#: What an implementation said is kept up to this many characters (``said`` cuts it): a
#: results file stays readable however much an adapter wrote.
MAX_ERROR_CHARS = 16 * 1024


def said(text: str | None) -> str | None:
    """An implementation's text as a results file keeps it: at most MAX_ERROR_CHARS
    characters, saying how much was cut."""
    if text is None or len(text) <= MAX_ERROR_CHARS:
        return text
    return f"{text[:MAX_ERROR_CHARS - 64]}… ({len(text) - MAX_ERROR_CHARS + 64} characters cut)"


class CaseResult(_Model):
    id: str = Field(pattern=CASE_ID_PATTERN,
                    description="The manifest's fixture id, or the transcript vector's id")
    verdict: Literal["accept", "reject", "skip"] | None = Field(
        description="The implementation's verdict; null when the adapter hung, crashed or "
        "answered garbage")
    peer_id: str | None
    error: str | None = Field(max_length=MAX_ERROR_CHARS, description="The implementation's "
                              "own error text, at most 16384 characters (or, for "
                              "hang/crash/error, what the driver saw)")
    reason: list[str] | None = Field(
        default=None, description="The implementation's mapped reason: the reference error "
        "codes its error text stands for, through the adapter's reviewed reason table "
        "(adapters/FOLDER/mutation/NAME.errors.json); only for a rejection; null when no row "
        "matches or the adapter has no table. A rejected invalid case whose reason excludes "
        "the expected error code and the case's other right reasons (the manifest's "
        "expected.also) is the outcome wrong_reason")
    outcome: Outcome = Field(description="The verdict against the manifest (see the outcomes "
                             "in fixturegen/harness/compare.py)")
    known: bool = Field(default=False, description="Listed in the --known file")
    seconds: float = Field(description="Time from request to answer")
    cpu_seconds: float | None = Field(
        default=None, description="The CPU time (user + system) the adapter's process spent on "
        "the case, from the request to its answer, as the adapter measured it: the library's "
        "check in API mode, its side of the handshake in handshake mode (null: it did not "
        "say)")
    peer: PeerSide | None = Field(
        default=None, description="handshake mode: how the fixture peer's side ended")
    first_attempt: str | None = Field(
        default=None, description="handshake mode: a case whose first attempt ended in hang, "
        "crash or error is tried once more, alone, with a fresh adapter and fixture peer (at "
        "most 16 cases per entry), and the second attempt's result is the case's; this is "
        "how the first ended (null: one attempt)")


class Implementation(_Model):
    name: str = Field(pattern=NAME_PATTERN)
    mode: Mode = Field(default="api", description="api: the library's certificate check on "
                       "DER bytes; handshake: a real handshake with the fixture peer")
    transport: Literal["tcp", "quic"] | None = Field(default=None,
                                                     description="handshake: the transport")
    direction: Literal["dial", "listen"] | None = Field(
        default=None, description="handshake: the implementation dialled the fixture peer, or "
        "listened for it")
    package: str
    version: str
    verifier: str = Field(description="The library entry point the adapter calls")
    command: list[str]
    seconds: float = Field(description="Wall time of the whole run, building excluded")
    counts: dict[str, int]
    cases: list[CaseResult]

    @property
    def label(self) -> str:
        """The entry's name in reports and known lists: ``NAME``, or ``NAME@TRANSPORT-DIRECTION``
        for a handshake entry."""
        return self.name if self.mode == "api" else f"{self.name}@{self.transport}-{self.direction}"


class CatalogueEntry(_Model):
    id: str = Field(pattern=CASE_ID_PATTERN)
    kind: Literal["certificate", "certificate_verify", "proof_set", "rule"]
    expected: Literal["valid", "invalid", "acceptable"]
    expected_error: str | None
    expected_peer_id: str | None
    rule: str
    description: str
    importance: Literal["critical", "high", "medium", "low"] | None
    path: str = Field(description="The fixture file, relative to the corpus folder")
    family: Family | None = Field(
        default=None, description="The manifest's family of the fixture: its id template and "
        "this case's parameters (for the fault model: host, scheme, placement); null for a "
        "case of no such family")
    host_key_type: str | None = Field(
        default=None, max_length=32, description="The host key type the certificate's "
        "extension names (the manifest's host_key.type); null for a case without one. The "
        "cost of a check is compared with the median of the valid certificates of its type")


class PeerVerdict(_Model):
    verdict: Literal["accept", "reject", "skip"] | None
    error: str | None
    peer_id: str | None


class CellResult(PeerVerdict):
    outcome: Outcome = Field(description="Against the maker's claim: the certificate is valid "
                             "and stands for the maker's PeerId")


class SenderNote(_Model):
    """One sender flag of the sender's judgement (fixturegen/verify/sender.py) on a peer-made
    certificate: a property that entitles a receiver to refuse it."""

    flag: SenderFlag
    detail: str = Field(description="What it is about: the OIDs of the critical extensions, "
                        "the time as written, the serial's length ...")


class PeerMadeCertificate(_Model):
    id: str = Field(description="MAKER.HOST_KEY_TYPE.N")
    maker: str = Field(description="The implementation whose generator made it")
    host_key_type: HostKeyName
    path: str = Field(description="The leaf certificate (DER), relative to the reports folder")
    peer_id: str = Field(description="The PeerId the maker announced for it")
    reference: PeerVerdict = Field(description="fixturegen's reference verifier")
    verifiers: dict[str, CellResult] = Field(description="Every implementation, maker included")
    sender_flags: list[SenderNote] = Field(
        default_factory=list, description="The sender's judgement: every property of the "
        "certificate that entitles a receiver to refuse it (empty: none). The reports blame a "
        "refusal one of them can explain on the maker")


class GenerateAttempt(_Model):
    maker: str
    host_key_type: HostKeyName
    outcome: Literal["made", "skip", "reject", "hang", "crash", "error"] = Field(
        description="made; skip (the library does not make this type); reject (it tried and "
        "failed); hang/crash/error (the adapter, or a reply that is not a certificate)")
    error: str | None
    certificate: str | None = Field(description="The id of the certificate it made")


class PeerMade(_Model):
    certificates: list[PeerMadeCertificate]
    attempts: list[GenerateAttempt]


#: Whether a run tested a generated fault for one entry (``harness/reach.py`` computes it).
ReachStatus = Literal["reached", "masked", "unreachable"]
REACH_STATUSES: tuple[ReachStatus, ...] = ("reached", "masked", "unreachable")


class FaultReach(_Model):
    fault: str = Field(description="The fault's family: its case ids' template")
    status: ReachStatus = Field(
        description="reached: some case of it ran where the entry accepted the valid twin; "
        "masked: none did, though the entry accepts some twin under one of its host key "
        "types; unreachable: the entry accepts no twin with any of its host key types")
    cases: int = Field(description="Its cases the entry answered")
    reached: list[str] = Field(description="Its cases whose valid twin the entry accepted")
    hosts: list[str] = Field(description="The host key types of its cases")
    masked_hosts: list[str] = Field(
        description="Host key types the entry verifies (it accepts a twin with one) under "
        "which none of its cases was reached")
    reason: str | None = Field(
        description="What the entry said on the twins of its cases not reached (null when "
        "every host key type was reached)")


class EntryReach(_Model):
    label: str = Field(description="The implementation entry (NAME or NAME@TRANSPORT-DIRECTION)")
    faults: list[FaultReach]
    unverified: dict[str, str] = Field(
        default_factory=dict, description="Each host key type of the twins the entry accepts no "
        "twin with (no fault under it is tested there), and what it said on those twins")

    def count(self, status: ReachStatus) -> int:
        return sum(1 for f in self.faults if f.status == status)

    @property
    def partly(self) -> int:
        """Faults reached, but masked under some host key type the entry verifies."""
        return sum(1 for f in self.faults if f.status == "reached" and f.masked_hosts)


class ResultsFile(_Model):
    schema_version: int = Field(ge=1, le=SCHEMA_VERSION, description="The format's version: "
                                "a newer one is refused, not misread")
    generator: str
    corpus: str = Field(description="The corpus folder the run read")
    seed: str | None
    catalogue_version: str | None = Field(
        default=None, description="The version of the case catalogue the corpus was drawn "
        "from (its manifest's catalogue: COUNT-DIGEST); null for a corpus of imported "
        "certificates or a file written before this field")
    catalogue: list[CatalogueEntry]
    implementations: list[Implementation]
    peer_made: PeerMade | None = Field(
        default=None, description="The interop stage: certificates made by each implementation, "
        "verified by the reference verifier and by every implementation (null: not run)")
    reachability: list[EntryReach] | None = Field(
        default=None, description="Per implementation entry, whether each generated fault was "
        "tested in a context the entry otherwise accepts (its valid twin): reached, masked or "
        "unreachable, and why (null: a file written before this field)")


class ResultsError(Exception):
    """A results or known file that cannot be read."""


def results_schema() -> dict[str, object]:
    return json_schema(ResultsFile, "conformance-results")


def load_results(path: Path) -> ResultsFile:
    """A results file, bounded, valid against its schema and consistent with its catalogue."""
    name = printable(str(path))
    try:
        results = ResultsFile.model_validate(
            load_json(path, "conformance-results", "results file"))
    except InputError as exc:
        raise ResultsError(str(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ResultsError(printable(f"{name} is not a results file: {where}: {first['msg']}")
                           ) from None
    described = {entry.id for entry in results.catalogue}
    if len(described) != len(results.catalogue):
        raise ResultsError(f"{name} is not a results file: a case id twice in its catalogue")
    names: set[str] = set()
    for impl in results.implementations:
        if impl.label in names:
            raise ResultsError(printable(f"{name} is not a results file: implementation "
                                         f"{impl.label!r} twice"))
        names.add(impl.label)
        seen: set[str] = set()
        for case in impl.cases:
            if case.id not in described:
                raise ResultsError(printable(
                    f"{name} is not a results file: {impl.name} reports case {case.id!r}, "
                    "which is not in its catalogue"))
            if case.id in seen:
                raise ResultsError(printable(
                    f"{name} is not a results file: {impl.label} reports case {case.id!r} "
                    "twice"))
            seen.add(case.id)
        counted: Counter[str] = Counter(case.outcome for case in impl.cases)
        if any(impl.counts.get(o, 0) != counted.get(o, 0) for o in (*counted, *impl.counts)):
            raise ResultsError(printable(
                f"{name} is not a results file: {impl.label}'s counts are not those of its "
                "cases"))
    return results


def dump_results(results: ResultsFile) -> str:
    return json.dumps(results.model_dump(mode="json"), indent=1, sort_keys=False) + "\n"


Known = frozenset[tuple[str, str]]
MAX_KNOWN_BYTES = 16 * 1024 * 1024


def stale_known(results: ResultsFile, known: Known) -> tuple[list[tuple[str, str]],
                                                             list[tuple[str, str]]]:
    """The entries of a known list that no longer stand, for an implementation entry of this
    run (an entry naming one that did not run is left alone: a list may serve several):
    those whose case the catalogue no longer has (a case removed or renamed), and those whose
    case ran and no longer diverges (fixed, or a changed case). Each sorted."""
    catalogue = {c.id for c in results.catalogue}
    ran = {impl.label: {c.id: c.outcome for c in impl.cases} for impl in results.implementations}
    gone = sorted((label, case) for label, case in known
                  if label in ran and case not in catalogue)
    fixed = sorted((label, case) for label, case in known
                   if label in ran and case in ran[label]
                   and ran[label][case] not in DIVERGENCES)
    return gone, fixed


def load_known(path: Path) -> Known:
    """Accepted divergences: one ``IMPLEMENTATION CASE-ID`` per line; ``#`` starts a comment.

    ``harness run`` writes ``known-divergences.txt`` in this format, so a downstream CI can
    start from the current run's list.
    """
    try:
        text = read_bounded(path, MAX_KNOWN_BYTES).decode("utf-8")
    except InputError as exc:
        raise ResultsError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{printable(str(path))} is not a known list: not UTF-8 text "
                           f"(byte {exc.start})") from None
    known: set[tuple[str, str]] = set()
    # Lines end at a line feed only: splitlines() would also break at U+2028 or \x1c, and
    # name the wrong line in an error.
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) not in (2, 3):
            shown = printable(repr(line[:80]))
            raise ResultsError(f"{printable(str(path))}:{number}: expected "
                               f"'IMPLEMENTATION CASE-ID', got {shown}")
        known.add((words[0], words[1]))
    return frozenset(known)


def known_text(results: ResultsFile) -> str:
    from fixturegen.harness.compare import DIVERGENCES

    lines = ["# Accepted divergences: IMPLEMENTATION CASE-ID OUTCOME (fixturegen harness run)",
             f"# {results.generator}, seed {results.seed}, catalogue {results.catalogue_version}"]
    for impl in results.implementations:
        lines += [f"{impl.label} {case.id} {case.outcome}" for case in impl.cases
                  if case.outcome in DIVERGENCES]
    return "\n".join(lines) + "\n"


def diff(old: ResultsFile, new: ResultsFile) -> list[str]:
    """What changed between two runs, one line per (implementation, case): its outcome (a
    ``wrong_reason`` with its mapped reason)."""
    lines: list[str] = []
    if old.catalogue_version != new.catalogue_version:
        ids_before = {c.id for c in old.catalogue}
        ids_after = {c.id for c in new.catalogue}
        lines.append(f"~ catalogue {old.catalogue_version} -> {new.catalogue_version}: "
                     f"{len(ids_after - ids_before)} cases added, "
                     f"{len(ids_before - ids_after)} removed (a case that is "
                     "absent before is new, not a regression)")
    before = {i.label: i for i in old.implementations}
    after = {i.label: i for i in new.implementations}
    for name in sorted(before.keys() | after.keys()):
        if name not in after:
            lines.append(f"- {name}: not in the new run")
            continue
        if name not in before:
            lines.append(f"+ {name}: new in this run ({after[name].version})")
            continue
        a, b = before[name], after[name]
        if a.version != b.version:
            lines.append(f"~ {name}: version {a.version} -> {b.version}")
        old_cases = {c.id: _shown(c) for c in a.cases}
        new_cases = {c.id: _shown(c) for c in b.cases}
        for case in sorted(old_cases.keys() | new_cases.keys()):
            was, now = old_cases.get(case, "absent"), new_cases.get(case, "absent")
            if was != now:
                lines.append(f"~ {name} {case}: {was} -> {now}")
    return lines



def _shown(case: CaseResult) -> str:
    """A case's outcome in a diff line; a ``wrong_reason`` with the reason it stood for (a
    change of that reason is a change too)."""
    if case.outcome == "wrong_reason" and case.reason:
        return f"wrong_reason ({', '.join(case.reason)})"
    return case.outcome
