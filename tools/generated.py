"""The files generated from the typed model: the shipped JSON schemas (fixturegen/schemas/)
and the README's table of checks. After a change to an enum or a model (a new ErrorCode, Flag,
field), ``make generated`` rewrites them; ``--check`` (run by the tests) says which are stale.

Usage: python tools/generated.py [--check]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from fixturegen.fuzz.report import fuzz_schema
from fixturegen.harness.matrix import matrix_schema
from fixturegen.harness.protocol import reply_schema, request_schema
from fixturegen.harness.results import results_schema
from fixturegen.model.manifest import dumps, manifest_schema
from fixturegen.model.transcripts import transcripts_schema
from fixturegen.verify.codes import check_table

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS: dict[str, Callable[[], dict[str, object]]] = {
    "manifest": manifest_schema, "transcripts": transcripts_schema,
    "harness-request": request_schema, "harness-reply": reply_schema,
    "conformance-results": results_schema, "fuzz": fuzz_schema, "matrix": matrix_schema,
}
TABLE_HEAD = "| # | check | error code |\n"


def readme_with_table(text: str) -> str:
    """The README with its table of checks (from its header row to the first line that is not
    a table row) replaced by the generated one."""
    start = text.index(TABLE_HEAD)
    end = start
    for line in text[start:].splitlines(keepends=True):
        if not line.startswith("|"):
            break
        end += len(line)
    return text[:start] + check_table() + text[end:]


def expected() -> dict[Path, str]:
    out = {ROOT / "fixturegen/schemas" / f"{name}.schema.json": dumps(make())
           for name, make in SCHEMAS.items()}
    readme = ROOT / "README.md"
    out[readme] = readme_with_table(readme.read_text())
    return out


def main(argv: list[str]) -> int:
    stale = [path for path, text in expected().items()
             if not path.exists() or path.read_text() != text]
    if "--check" in argv:
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)} (run 'make generated')")
        return 1 if stale else 0
    for path, text in expected().items():
        if path in stale:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
