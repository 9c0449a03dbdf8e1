"""``fixturegen import``: the command line of bringing your own certificates.

Exit codes: 0 the corpus was written; 2 a usage error (a path that is not there, a file that
is neither PEM nor DER or holds no certificate, a key that is not the certificate's, a bad
sidecar, two fixtures that would write the same file, a file name that is not UTF-8, an --out
that is not this command's to write or that is inside an input folder, or holds an input):
one line, nothing written; 130 / 143 / 129 interrupted or terminated (the earlier corpus kept
whole: the new one is swapped in at once).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from fixturegen.errors import fail, out_path, parse_time
from fixturegen.verify.inputs import printable


def one_line(text: str) -> str:
    """``text`` on one printable line: control characters and line terminators escaped (a
    file name may hold a newline)."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]",
                  lambda m: m.group().encode("unicode_escape").decode("ascii"), printable(text))


def import_command(
    paths: Annotated[list[Path], typer.Argument(
        help="Certificate files (DER or PEM, a PEM file may hold a chain and its key) and "
        "folders of them (*.der, *.crt, *.cer, *.pem, walked recursively).")],
    out: Annotated[Path, typer.Option(
        parser=out_path, help="The corpus folder (new, empty, or an earlier import's).")
                   ] = Path("imported"),
    at: Annotated[str | None, typer.Option(
        help="Validation time of the expected results (ISO 8601, e.g. 2026-01-01T00:00:00Z); "
        "default now. Given, the corpus is reproducible.")] = None,
) -> None:
    """Turn your own certificates into a corpus the harness runs in both modes."""
    from fixturegen.importer.corpus import COMMAND, corpus_files, import_sources
    from fixturegen.importer.sources import ImportProblem, apart, find_sources
    from fixturegen.owned import NotOwned, replace
    from fixturegen.owned import check as may_write

    moment = parse_time(at)
    try:
        may_write(out, COMMAND)  # refused before anything is read
        apart(paths, out)
        result = import_sources(find_sources(paths), at=moment, reproducible=moment is not None)
        replace(out, COMMAND, corpus_files(result))  # swapped in whole
    except (ImportProblem, NotOwned) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    for line in (*result.duplicates, *result.overruled):
        typer.echo(f"note: {one_line(line)}", err=True)
    fixtures = result.manifest.fixtures
    count = {r: sum(f.expected.result == r for f in fixtures)
             for r in ("valid", "acceptable", "invalid")}
    keyed = sum(f.certificate_key_path is not None for f in fixtures)
    noun = "certificate" if len(fixtures) == 1 else "certificates"
    typer.echo(f"imported {len(fixtures)} {noun} into {one_line(str(out))}: "
               f"{count['valid']} valid, {count['acceptable']} acceptable, "
               f"{count['invalid']} invalid; {keyed} with "
               f"their key (handshakes), {len(fixtures) - keyed} without (API mode only); "
               f"{len(result.duplicates)} duplicates left out")
