"""Check every fixture of a manifest against its ``expected`` block with the reference verifier.

Reads the manifest as plain JSON checked against the shipped schema (not through the
generator's model): a broken manifest is reported, not trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fixturegen.verify.codes import BORDERLINE_FLAGS
from fixturegen.verify.inputs import InputError, printable, read_certificates
from fixturegen.verify.jsonfile import load_json
from fixturegen.verify.verifier import Verifier


class ManifestError(Exception):
    """The manifest cannot be read or lacks the fields this check needs (exit code 2)."""


@dataclass(frozen=True)
class Disagreement:
    id: str
    what: str
    expected: str
    got: str


def load_manifest(path: Path) -> dict[str, object]:
    """The manifest, bounded and valid against the shipped schema (see ``jsonfile``)."""
    try:
        data = load_json(path, "manifest", "fixturegen manifest")
    except InputError as exc:
        raise ManifestError(str(exc)) from None
    assert isinstance(data, dict) and isinstance(data.get("fixtures"), list)
    return data


def check_manifest(path: Path, verifier: Verifier | None = None, at: datetime | None = None
                   ) -> tuple[list[Disagreement], int]:
    """(disagreements, fixtures checked)."""
    manifest = load_manifest(path)
    verifier = verifier or Verifier()
    root = path.parent
    problems: list[Disagreement] = []
    fixtures = manifest["fixtures"]
    assert isinstance(fixtures, list)
    problems += _afters(fixtures)
    for f in fixtures:
        try:
            fid = str(f["id"])
            chain = list(f["chain"])
            if not chain:
                raise TypeError
            expected = f["expected"]
            want_error = expected["error"]
            want_peer = expected["peer_id"]
            flags = list(f.get("flags", []))
            expect_peer_id = f.get("expect_peer_id")
        except (KeyError, TypeError):
            raise ManifestError(f"{path}: a fixture lacks id, chain or expected") from None
        try:
            if not all(isinstance(p, str) for p in chain):
                raise InputError("a chain entry is not a file name")
            certs = [c for p in chain for c in read_certificates(Path(p), root)]
        except InputError as exc:
            problems.append(Disagreement(fid, "file", "readable", str(exc)))
            continue
        verdict = verifier.verify(certs, expect_peer_id=expect_peer_id, at=at)
        if verdict.error != want_error:
            problems.append(Disagreement(fid, "error", str(want_error), str(verdict.error)))
        if verdict.accepted and verdict.peer_id != want_peer:
            problems.append(Disagreement(fid, "peer_id", str(want_peer), str(verdict.peer_id)))
        missing = [x for x in flags if x in BORDERLINE_FLAGS and x not in verdict.flags]
        if missing:
            problems.append(Disagreement(fid, "flags", ",".join(missing), ",".join(verdict.flags)))
    return problems, len(fixtures)


def _afters(fixtures: list[object]) -> list[Disagreement]:
    """Each ``after`` must name another fixture of the manifest that is valid and itself
    checked after none (a harness sends that one first, to the same verifier)."""
    results = {f.get("id"): (f.get("expected") or {}).get("result") for f in fixtures
               if isinstance(f, dict) and isinstance(f.get("expected"), dict)}
    firsts = {f.get("id") for f in fixtures if isinstance(f, dict) and f.get("after")}
    problems = []
    for f in fixtures:
        if not isinstance(f, dict) or f.get("after") is None:
            continue
        after = f["after"]
        if after == f.get("id") or results.get(after) != "valid" or after in firsts:
            problems.append(Disagreement(str(f.get("id")), "after",
                                         "a valid fixture of this manifest, checked after none",
                                         str(after)))
    return problems


def format_table(problems: list[Disagreement]) -> str:
    rows = [("fixture", "field", "expected", "reference verifier")]
    rows += [(printable(p.id), printable(p.what), printable(p.expected), printable(p.got))
             for p in problems]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])

