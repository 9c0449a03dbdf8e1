"""Why an implementation rejected a case, in the reference verifier's words.

Each shipped adapter may carry a small reviewed table (``adapters/FOLDER/mutation/
NAME.errors.json``): an ordered list of ``{"pattern": REGEX, "codes": [ERROR_CODE, ...]}``.
The first pattern that matches the implementation's error text (case-insensitive, anywhere in
it) gives the reason: the reference's error codes that text stands for (more than one when the
implementation's words cannot tell them apart). Text that no pattern matches has no reason,
and is never counted against the implementation: random or localised text (a port number, a
panic's address) stays tolerated.

``harness run`` loads the table of each shipped adapter (``--reasons FILE`` gives one to a
custom adapter) and records, for every rejection, its mapped reason in the case result
(``reason``; null when no row matches). A rejected invalid case whose mapped reason excludes
the reference's error code (and the case's other right reasons, ``expected.also``) is the
outcome ``wrong_reason`` (the verdict is right, the reason
is another check's: :mod:`fixturegen.harness.compare`), in the API check and in handshakes
alike; a handshake's text is often only a TLS alert or a connection that never came, which no
row matches, so it stays an agreement. A mutation campaign counts a changed reason as a kill.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from fixturegen.verify.codes import ErrorCode

MAX_TABLE_BYTES = 256 * 1024
MAX_TEXT = 4096  # the part of an error text the patterns see


class ReasonTableError(Exception):
    """A reviewed table that cannot be read (a fixturegen bug or a broken checkout)."""


@dataclass(frozen=True)
class ReasonTable:
    rows: tuple[tuple[re.Pattern[str], frozenset[str]], ...]
    path: Path

    def codes(self, text: str | None) -> frozenset[str] | None:
        """The reference error codes ``text`` stands for, or None when no pattern matches."""
        if not text:
            return None
        head = text[:MAX_TEXT]
        for pattern, codes in self.rows:
            if pattern.search(head):
                return codes
        return None


def reason_of(table: ReasonTable | None, verdict: str | None, text: str | None
              ) -> list[str] | None:
    """The mapped reason of an answer, sorted: only a rejection has one (the text of a hang,
    crash or garbage answer is the driver's, and an accept's is not a reason); None when there
    is no table or no row matches."""
    if table is None or verdict != "reject":
        return None
    codes = table.codes(text)
    return None if codes is None else sorted(codes)


def table_path(adapters: Path, folder: str, name: str) -> Path:
    return adapters / folder / "mutation" / f"{name}.errors.json"


def load_table(path: Path) -> ReasonTable | None:
    """The table at ``path`` (None when there is none)."""
    if not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_TABLE_BYTES:
            raise ReasonTableError(f"{path}: over {MAX_TABLE_BYTES} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReasonTableError(f"{path}: {exc}") from None
    known = {code.value for code in ErrorCode}
    rows: list[tuple[re.Pattern[str], frozenset[str]]] = []
    if not isinstance(data, list):
        raise ReasonTableError(f"{path}: not a list of {{pattern, codes}}")
    for number, row in enumerate(data, 1):
        if not isinstance(row, dict) or not isinstance(row.get("pattern"), str) or not isinstance(
                row.get("codes"), list):
            raise ReasonTableError(f"{path}: row {number} is not {{pattern, codes}}")
        unknown = [c for c in row["codes"] if not isinstance(c, str) or c not in known]
        if unknown or not row["codes"]:
            raise ReasonTableError(f"{path}: row {number}: unknown error codes {unknown}")
        try:
            rows.append((re.compile(row["pattern"], re.IGNORECASE), frozenset(row["codes"])))
        except re.error as exc:
            raise ReasonTableError(f"{path}: row {number}: {exc}") from None
    return ReasonTable(tuple(rows), path)
