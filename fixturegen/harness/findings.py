"""``fixturegen harness findings``: one upstream-ready Markdown report per divergence class.

A divergence class is every case of one implementation (all its entries: the API check and
each handshake transport and direction) that shares a rule and an outcome. Each report has a
title a maintainer would use, the rule and where it is written, what the implementation said
(its own error text, or "accepted"; for ``wrong_reason``, the reference error codes the text
was read as), the importance, the fixtures as hex, and the test that reproduces it: the
``fixturegen export`` of those fixtures in the implementation's language when its API check
shows the same outcome (never for ``wrong_reason``: an export checks the verdict, which is
right there), else the harness command that replays it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixturegen.harness.adapters import BY_NAME
from fixturegen.harness.classes import DivergenceClass, FindingsError, classes
from fixturegen.harness.clock import is_clock, is_late
from fixturegen.harness.matrix import MatrixFile, affected_text
from fixturegen.harness.reach import reach_findings
from fixturegen.harness.results import CaseResult, CatalogueEntry, ResultsFile
from fixturegen.harness.rules import fault_of
from fixturegen.markdown import code, md
from fixturegen.output.export import LANGUAGES, ExportError, render
from fixturegen.owned import NotOwned, check, publish
from fixturegen.verify.inputs import InputError, printable, read_confined
from fixturegen.verify.jsonfile import load_json

INDEX = "findings.md"  # the index of the reports
HEX_SHOWN = 4  # fixtures shown as hex in a report; the export holds them all
EMBED_LIMIT = 60_000  # an export longer than this is attached, not pasted inline
EXTENSIONS = {"go": "_test.go", "rust": ".rs", "ts": ".spec.ts"}  # python: test_*.py
SPECS = {
    "tls.md": "https://github.com/libp2p/specs/blob/master/tls/tls.md",
    "peer-ids.md": "https://github.com/libp2p/specs/blob/master/peer-ids/peer-ids.md",
}


def where_written(rule: str) -> list[str]:
    """Links to the documents the rule cites (libp2p specs, RFCs with their sections)."""
    links: list[str] = []
    for doc, url in SPECS.items():
        if doc in rule:
            links.append(f"[{doc}]({url})")
    for number, section in re.findall(r"RFC ?(\d{3,5})(?: (?:section )?(\d+(?:\.\d+)*))?", rule):
        anchor = f"#section-{section}" if section else ""
        text = f"RFC {number}" + (f" section {section}" if section else "")
        links.append(f"[{text}](https://www.rfc-editor.org/rfc/rfc{number}{anchor})")
    if "X.690" in rule:
        links.append("[ITU-T X.690 (DER)](https://www.itu.int/rec/T-REC-X.690)")
    return list(dict.fromkeys(links))


def _said(result: CaseResult) -> str:
    if result.outcome == "false_accept" or result.verdict == "accept":
        return f"accepted (PeerId {result.peer_id})" if result.peer_id else "accepted"
    text = result.error or {"hang": "no answer in time", "crash": "the adapter died"}.get(
        result.outcome, "no error text")
    text = " ".join(printable(text).split())
    text = (text[:297] + "...") if len(text) > 300 else text
    if result.outcome == "wrong_reason" and result.reason:
        text += f" (read as {', '.join(result.reason)})"
    return text


def _cell(text: str) -> str:
    return md(text)


@dataclass(frozen=True)
class Corpus:
    """What the reports quote from the corpus the run read."""

    folder: Path
    chains: dict[str, list[str]]  # fixture id -> chain paths
    vectors: dict[str, dict[str, Any]]  # vector and proof-set id -> its JSON object
    #: fixture id -> the fixture it is checked after (the manifest's ``after``)
    afters: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> Corpus:
        try:
            manifest = load_json(folder / "manifest.json", "manifest", "fixturegen manifest")
            transcripts: Any = {}
            if (folder / "transcripts.json").exists():
                transcripts = load_json(folder / "transcripts.json", "transcripts",
                                        "transcripts file")
        except InputError as exc:
            raise FindingsError(f"{exc} (pass --corpus, the corpus the run read)") from None
        assert isinstance(manifest, dict)
        chains = {f["id"]: list(f["chain"]) for f in manifest["fixtures"]}
        vectors = {v["id"]: v for key in ("vectors", "proof_sets")
                   for v in (transcripts.get(key) or [])}
        afters = {f["id"]: f["after"] for f in manifest["fixtures"] if f.get("after")}
        return cls(folder, chains, vectors, afters)

    def hexes(self, entry: CatalogueEntry) -> list[str]:
        paths = self.chains.get(entry.id) or [entry.path]
        try:
            return [read_confined(self.folder, p).hex() for p in paths]
        except InputError as exc:
            raise FindingsError(f"{self.folder / 'manifest.json'}: {exc}") from None


def _export(cls: DivergenceClass, corpus: Corpus) -> tuple[str, str, list[str]] | None:
    """(language, source, ids) of the test that reproduces the class through the library's
    API check: the certificate fixtures its API entry got the same outcome for, but those
    checked after another (an exported test checks each certificate on its own, so it could
    not show what a verifier remembers)."""
    adapter = BY_NAME.get(cls.implementation)
    if adapter is None or not adapter.export or cls.outcome == "wrong_reason":
        return None  # an export checks the verdict, which a wrong_reason has right
    ids = [e.id for e in cls.entries if e.kind == "certificate" and e.id in corpus.chains
           and e.id not in corpus.afters
           and any(o.mode == "api" and o.result.outcome == cls.outcome for o in cls.seen[e.id])]
    if not ids:
        return None
    try:
        text, _ = render(corpus.folder, adapter.export, ids)
    except ExportError as exc:
        raise FindingsError(str(exc)) from None
    return adapter.export, text, ids


def markdown(cls: DivergenceClass, corpus: Corpus, export_name: str | None,
             export: tuple[str, str, list[str]] | None, generator: str,
             affected: str | None = None, catalogue_version: str | None = None) -> str:
    lines = [f"# {md(cls.title())}", ""]
    catalogue = f" (catalogue {code(catalogue_version)})" if catalogue_version else ""
    links = where_written(cls.rule)
    importance = cls.importance or (
        "not rated: a valid peer refused (an interoperability bug)"
        if cls.outcome == "false_reject" else "not rated")
    lines += [f"- **Rule**: {md(cls.rule)}" + (f" ({', '.join(links)})" if links else ""),
              f"- **Importance**: {importance}",
              f"- **Outcome**: `{cls.outcome}` in {len(cls.entries)} case(s), seen in "
              + ", ".join(code(label) for label in dict.fromkeys(
                  o.label for obs in cls.seen.values() for o in obs)),
              f"- **Found by**: {md(generator)}{catalogue}; the corpus and its manifest say what a "
              "verifier must conclude for each case"]
    if cls.outcome == "wrong_reason":
        lines.append("- **Why it matters**: the verdict is right, but the error text, read "
                     "through fixturegen's reviewed reason table for this implementation, names "
                     "another check than the one each case breaks (the expected code is beside "
                     "each case): the check this rule needs may be missing, hidden behind the "
                     "one that refused")
    if affected is not None:
        lines.append(f"- **Affected versions** (from the version matrix): {md(affected)}")
    lines.append("")
    lines += ["## What each case is, and what the implementation said", "",
              "| case | expected | entry | what it said |", "|---|---|---|---|"]
    for e in cls.entries:
        expected = md(e.expected + (f" ({e.expected_error})" if e.expected_error else ""))
        said: dict[str, list[str]] = {}
        for o in cls.seen[e.id]:
            said.setdefault(_said(o.result), []).append(code(o.label))
        for text, labels in said.items():  # the entries that said the same, on one row
            lines.append(f"| {code(e.id)} | {expected} | {', '.join(labels)} | {_cell(text)} |")
    lines += ["", "Descriptions:", ""]
    lines += [f"- {code(e.id)}: {md(e.description)}" for e in cls.entries]
    lines += ["", "## Fixtures", ""]
    for e in cls.entries[:HEX_SHOWN]:
        if is_clock(e.id):
            when = ("just before sending it, after the adapter process first answered"
                    if is_late(e.id) else "when the entry started")
            lines += [f"{code(e.id)}: a certificate the harness made {when} "
                      "(its validity is relative to that moment: "
                      "`fixturegen/harness/clock.py`), not a file of the corpus.", ""]
            continue
        lines += [f"{code(e.id)} ({code(e.path)}), DER as hex"
                  + (" (the chain, leaf first)" if len(corpus.chains.get(e.id, [])) > 1 else "")
                  + ":", "", "```", *corpus.hexes(e), "```", ""]
        fault = fault_of(e.id) if e.kind == "rule" else None
        if fault is not None and fault.peer == "message":
            lines += [f"A valid certificate: the message-level peer broke a rule of the "
                      f"handshake instead, its protocol fault `{fault.protocol}` (in "
                      "`adapters/message-peer/peer.py`: tlslite-ng, changed at the message "
                      "level, over TCP).", ""]
        elif fault is not None:
            lines += [f"A valid certificate: the fixture peer broke a rule of the handshake "
                      f"instead, its protocol fault `{fault.protocol}` (in "
                      "`adapters/fixture-peer/rules.go`, through its `tls.Config`).", ""]
        if e.kind != "certificate" and e.id in corpus.vectors:
            lines += [f"The {e.kind.replace('_', ' ')} (from `transcripts.json`):", "",
                      "```json", json.dumps(corpus.vectors[e.id], indent=1, sort_keys=True),
                      "```", ""]
    if len(cls.entries) > HEX_SHOWN:
        lines += [f"The other {len(cls.entries) - HEX_SHOWN} are files of the corpus "
                  "(paths above) and are embedded in the exported test.", ""]
    lines += ["## Reproduce", ""]
    if export is not None and export_name is not None:
        lang, text, ids = export
        lines += [f"`fixturegen export --lang {lang}` of the {len(ids)} certificate(s) whose "
                  f"API check gives this outcome ({LANGUAGES[lang][1]}); it fails on the "
                  f"pinned version, as this report says. Attached: {code(export_name)}.", ""]
        if len(text) <= EMBED_LIMIT:
            fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", text)), default=0))
            lines += ["<details><summary>the test</summary>", "", f"{fence}{lang}",
                      text.rstrip("\n"), fence, "", "</details>", ""]
    modes = sorted({o.mode for obs in cls.seen.values() for o in obs})
    lines += [f"With fixturegen: `fixturegen harness run --impl {cls.implementation} "
              f"--mode {modes[0] if len(modes) == 1 else 'all'} --corpus CORPUS` "
              "(the corpus: `make fixtures`, same seed and version).", ""]
    return "\n".join(lines)


def _export_name(n: str, cls: DivergenceClass, lang: str) -> str:
    """A file name the language's test runner takes: an identifier, and its test suffix."""
    stem = f"finding_{n}_{_slug(cls.outcome)}_{_slug(cls.rule)}".replace("-", "_")
    return f"test_{stem}.py" if lang == "python" else f"{stem}{EXTENSIONS[lang]}"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].rstrip("-")


def write(results: ResultsFile, name: str, out: Path, corpus_dir: Path | None,
          matrix: MatrixFile | None = None) -> int:
    """Write the reports of ``name`` into ``out`` (replaced whole, or not at all); returns how
    many classes there were. With a version ``matrix`` of the same implementation, each report
    says which versions the class affects and where it was fixed."""
    found = classes(results, name)
    if matrix is not None and found and matrix.implementation != found[0].implementation:
        raise FindingsError(f"the matrix is of {matrix.implementation}, not {name}")
    corpus = Corpus.load(corpus_dir if corpus_dir is not None else Path(results.corpus))
    _check_out(out)
    files: list[tuple[str, str]] = []
    index = [f"# Findings: {md(name)}", "",
             f"{len(found)} divergence class(es) in the run of {md(results.generator)} over "
             f"{code(results.corpus)} (seed {code(results.seed)}, catalogue "
             f"{code(results.catalogue_version)}). One report per class: the "
             "cases of this implementation that share a rule and an outcome.", ""]
    if found:
        index += ["| # | report | outcome | importance | cases |"
                  + (" affected versions |" if matrix else ""),
                  "|---|---|---|---|---|" + ("---|" if matrix else "")]
    # Numbers of one width (two digits at least), so that the files sort in report order.
    width = max(2, len(str(len(found))))
    for n, cls in enumerate(found, 1):
        number = f"{n:0{width}d}"
        stem = f"{number}-{cls.outcome.replace('_', '-')}-{_slug(cls.rule)}"
        export = _export(cls, corpus)
        export_name = _export_name(number, cls, export[0]) if export else None
        affected = affected_text(matrix, cls.rule, cls.outcome) if matrix else None
        files.append((f"{stem}.md", markdown(cls, corpus, export_name, export,
                                             results.generator, affected,
                                             results.catalogue_version)))
        if export is not None and export_name is not None:
            files.append((export_name, export[1]))
        index.append(f"| {n} | [{_cell(cls.title())}]({stem}.md) | {md(cls.outcome)} | "
                     f"{cls.importance or '-'} | {len(cls.entries)} |"
                     + (f" {_cell(affected or '-')} |" if matrix else ""))
    index += reach_findings(results, name)
    files.append((INDEX, "\n".join(index) + "\n"))
    _replace(out, files)
    return len(found)


COMMAND = "harness findings"


def _check_out(out: Path) -> None:
    """The folder is new, empty, or one an earlier ``harness findings`` wrote (its marker)."""
    try:
        check(out, COMMAND)
    except NotOwned as exc:
        raise FindingsError(f"--out {exc}") from None


def _replace(out: Path, files: Iterable[tuple[str, str]]) -> None:
    """Write the reports into ``out`` and drop the earlier run's that this one did not write."""
    try:
        publish(out, COMMAND, [(name, text.encode("utf-8")) for name, text in files])
    except NotOwned as exc:
        raise FindingsError(f"--out {exc}") from None
    except OSError as exc:
        raise FindingsError(f"cannot write {printable(str(out))}: {exc.strerror or exc}"
                            ) from None
