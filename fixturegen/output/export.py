"""``fixturegen export``: a corpus's certificate fixtures as a test source file in an
ecosystem's own style, rendered from ``templates/export-LANG.*.j2``.

Each selected fixture is embedded as hex with the manifest's verdict (``valid``: accept with
this PeerId; ``invalid``: reject; ``acceptable``: either), its PeerId and its rule, and the test
calls the implementation's verifier the way the shipped adapter does. The corpus is read as
untrusted input (bounded, schema-checked, every path confined to the corpus).
"""

from __future__ import annotations

import fnmatch
import re
import shlex
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from fixturegen import __version__
from fixturegen.output.render import environment
from fixturegen.owned import NotOwned, write_file
from fixturegen.verify.der import MAX_CERTIFICATE_BYTES
from fixturegen.verify.inputs import InputError, printable, read_confined
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


# -- manifest text as data: literals and comments for each language -----------------------------

#: Characters no comment keeps: every line terminator of the four languages (LF, CR, VT, FF,
#: NEL, LS, PS), every other control character, and a byte order mark (Go refuses one inside a
#: file); a lone surrogate cannot be written as UTF-8 at all.
_LINE_BREAKERS = {0x85, 0x2028, 0x2029, 0xFEFF}


def _unsafe(ch: str) -> bool:
    o = ord(ch)
    return (o < 0x20 or 0x7F <= o < 0xA0 or o in _LINE_BREAKERS or 0xD800 <= o < 0xE000
            or unicodedata.category(ch) in ("Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"))


def comment(text: str | None, limit: int = 150) -> str:
    """``text`` for one comment line: every line terminator and control character a space,
    ``*/`` broken up, at most ``limit`` characters (with ``...``)."""
    flat = "".join(" " if _unsafe(ch) else ch for ch in (text or ""))
    flat = " ".join(flat.split()).replace("*/", "* /")
    return flat if len(flat) <= limit else flat[:limit - 3].rstrip() + "..."


def _escape(ch: str, lang: str) -> str:
    o = ord(ch)
    if ch in '"\\':
        return "\\" + ch
    if 0x20 <= o < 0x7F:
        return ch
    if lang == "python":
        return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"
    if 0xD800 <= o < 0xE000 and lang in ("go", "rust"):
        o = 0xFFFD  # no escape spells a lone surrogate in Go or Rust
    if lang == "rust":
        return f"\\u{{{o:x}}}"
    if lang == "go":
        return f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"
    return f"\\u{o:04x}" if o < 0x10000 else f"\\u{{{o:x}}}"  # TypeScript


def literal(text: str | None, lang: str) -> str:
    """``text`` as a double-quoted string literal of ``lang`` (ASCII only: anything else an
    escape), or the language's null for None."""
    if text is None:
        return {"python": "None", "ts": "null", "go": '""', "rust": "None"}[lang]
    return '"' + "".join(_escape(ch, lang) for ch in text) + '"'


RUST_KEYWORDS = frozenset((
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
    "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true",
    "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final",
    "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield", "gen",
    "union"))


def identifiers(ids: Sequence[str], keywords: frozenset[str] = RUST_KEYWORDS) -> list[str]:
    """A function name for each fixture id: lower-case ASCII letters, digits and underscores,
    not starting with a digit, not a keyword, and unique (``_2``, ``_3``... on a collision)."""
    taken: set[str] = set()
    names = []
    for fid in ids:
        base = re.sub(r"[^a-z0-9]+", "_", fid.lower()).strip("_")[:80] or "fixture"
        if base[0].isdigit() or base in keywords or base.startswith("r#"):
            base = f"f_{base}"
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        names.append(name)
    return names


#: What an export may hold of certificates, in hex: 64 MiB of DER (the shipped corpus: 1 MiB).
MAX_EXPORT_HEX = 2 * 64 * 2**20


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
    read: dict[str, str] = {}  # file -> its hex
    total = 0
    fixtures = manifest["fixtures"]
    assert isinstance(fixtures, list)  # the schema says so
    for f in fixtures:
        if globs and not any(fnmatch.fnmatchcase(f["id"], g) for g in globs):
            continue
        try:  # each a DER certificate (at most 64 KiB), each file read once
            for p in f["chain"]:
                if p not in read:
                    read[p] = read_confined(corpus, p, MAX_CERTIFICATE_BYTES).hex()
            chain = [read[p] for p in f["chain"]]
        except InputError as exc:
            raise ExportError(f"{corpus / 'manifest.json'}: {exc}") from None
        total += sum(len(c) for c in chain)
        if total > MAX_EXPORT_HEX:
            raise ExportError(f"{corpus / 'manifest.json'}: the certificates exported would "
                              f"be more than {MAX_EXPORT_HEX // 2 // 2**20} MiB")
        chosen.append({"id": f["id"], "rule": f["rule"], "description": f["description"],
                       "result": f["expected"]["result"], "peer_id": f["expected"]["peer_id"],
                       "expect_peer_id": f["expect_peer_id"], "chain": chain})
    if not chosen:
        shown = " ".join(f"--only {g}" for g in globs)
        raise ExportError(f"{shown!r} matches no fixture of {corpus}")
    for f, name in zip(chosen, identifiers([f["id"] for f in chosen]), strict=True):
        f["name"] = name
    options = comment(" ".join(f"--only {shlex.quote(g)}" for g in globs), 400)
    options = f" {options}" if options else ""
    seed = manifest.get("seed")
    template = environment().get_template(LANGUAGES[lang][0])
    text = template.render(fixtures=chosen, version=__version__, only_option=options,
                           seed=comment(shlex.quote(seed) if isinstance(seed, str) else "none"),
                           comment=comment, lit=lambda t: literal(t, lang))
    return text.rstrip("\n") + "\n", len(chosen)


#: What the first line of every export says: the mark that a file is one an export wrote.
SIGNATURE = "(fixturegen export --lang "


def write(text: str, out: Path) -> None:
    """Write ``out`` whole or not at all: a new file, or one an earlier export wrote (its first
    line says so); never a link, FIFO, device or folder, nor a file of someone else's."""
    path = out.absolute()
    if str(out).strip() == "" or path.name in ("", ".", ".."):
        raise ExportError(f"--out {printable(str(out))!r}: give a file path")
    try:
        info = path.lstat()
    except FileNotFoundError:
        info = None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise ExportError(f"{printable(str(out))} is not a regular file (a link, folder, "
                              "FIFO or device): nothing was written")
        with path.open("rb") as handle:
            first = handle.readline(4096)
        if SIGNATURE.encode() not in first:
            raise ExportError(f"{printable(str(out))} is a file 'fixturegen export' did not "
                              "write: nothing was written; give a new path")
    if not path.parent.is_dir():
        raise ExportError(f"{printable(str(path.parent))} is not a folder")
    try:
        write_file(path.parent, path.name, text.encode("utf-8"))
    except NotOwned as exc:
        raise ExportError(str(exc)) from None
