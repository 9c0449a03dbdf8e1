"""``fixturegen export``: a corpus's certificate fixtures as a test source file in an
ecosystem's own style, rendered from ``templates/export-LANG.*.j2``.

Each selected fixture is embedded as hex with the manifest's verdict (``valid``: accept with
this PeerId; ``invalid``: reject; ``acceptable``: either), its PeerId and its rule, and the test
calls the implementation's verifier the way the shipped adapter does. The corpus is read as
untrusted input (bounded, schema-checked, every path confined to the corpus).
"""

from __future__ import annotations

import fnmatch
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fixturegen import __version__
from fixturegen.output.render import environment
from fixturegen.verify.inputs import InputError, read_confined
from fixturegen.verify.manifest_check import ManifestError, load_manifest

#: language -> (template, what the generated file is)
LANGUAGES = {
    "go": ("export-go.go.j2", "a Go table test for go-libp2p (p2p/security/tls)"),
    "python": ("export-python.py.j2", "a pytest module for py-libp2p (libp2p.security.tls)"),
    "rust": ("export-rust.rs.j2", "a Rust integration test for libp2p-tls (#[test] functions)"),
    "ts": ("export-ts.ts.j2", "a TypeScript node:test spec for js-libp2p (@libp2p/tls)"),
}


class ExportError(Exception):
    """A usage error (exit code 2)."""


def render(corpus: Path, lang: str, only: str | Sequence[str] | None = None
           ) -> tuple[str, int]:
    """The source text and how many fixtures it holds (``only``: globs, any of which a
    fixture id matches; an exact id is a glob too)."""
    globs = [only] if isinstance(only, str) else list(only or [])
    if lang not in LANGUAGES:
        raise ExportError(f"--lang {lang!r}: one of {', '.join(LANGUAGES)}")
    try:
        manifest = load_manifest(corpus / "manifest.json")
    except ManifestError as exc:
        raise ExportError(str(exc)) from None
    chosen = []
    fixtures = manifest["fixtures"]
    assert isinstance(fixtures, list)  # the schema says so
    for f in fixtures:
        if globs and not any(fnmatch.fnmatchcase(f["id"], g) for g in globs):
            continue
        try:
            chain = [read_confined(corpus, p).hex() for p in f["chain"]]
        except InputError as exc:
            raise ExportError(f"{corpus / 'manifest.json'}: {exc}") from None
        chosen.append({"id": f["id"], "rule": f["rule"], "description": f["description"],
                       "result": f["expected"]["result"], "peer_id": f["expected"]["peer_id"],
                       "expect_peer_id": f["expect_peer_id"], "chain": chain})
    options = "".join(f" --only {g}" for g in globs)
    if not chosen:
        raise ExportError(f"{options.strip()!r} matches no fixture of {corpus}")
    template = environment().get_template(LANGUAGES[lang][0])
    text = template.render(fixtures=chosen, version=__version__, seed=manifest.get("seed"),
                           only_option=options)
    return text.rstrip("\n") + "\n", len(chosen)


def write(text: str, out: Path) -> None:
    """Write ``out`` whole or not at all."""
    out = out.absolute()
    if out.is_symlink() or out.is_dir():
        raise ExportError(f"{out} is a link or a folder: give a file path")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
