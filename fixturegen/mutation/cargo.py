"""The cargo side of a Rust adapter's mutation setup, shared by the adapters' ``mutate`` scripts
(rust-libp2p, litep2p): a release's crate from crates.io, cargo-mutants' listing of the scope's
functions (kept in the adapter's folder for the pinned release, so a campaign of it needs no
cargo-mutants), and the crate's own tests. The scripts keep what is theirs: the crate, the
scope, the test command and what the tests need.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

TOOL_VERSION = "27.1.0"  # cargo-mutants, from crates.io into the tools cache on first use
MAX_CRATE = 32 * 1024 * 1024


class CargoError(Exception):
    """One line: what could not be fetched, listed or run."""


def cache() -> Path:
    """fixturegen's cache folder, as the build cache finds it."""
    return Path(os.environ.get("FIXTUREGEN_CACHE") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fixturegen")


def crate_source(crate: str, version: str, into: Path) -> None:
    """Unpack ``crate`` ``version`` as crates.io serves it into the new folder ``into``."""
    url = f"https://static.crates.io/crates/{crate}/{crate}-{version}.crate"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read(MAX_CRATE + 1)
    except (urllib.error.URLError, OSError) as exc:
        raise CargoError(f"{crate} {version} cannot be fetched from crates.io ({url}): "
                         f"{exc}") from None
    if len(data) > MAX_CRATE:
        raise CargoError(f"{crate} {version}: the crate file is larger than {MAX_CRATE} bytes")
    into.mkdir(parents=True)
    prefix = f"{crate}-{version}/"
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                if not member.name.startswith(prefix) or not (member.isfile() or member.isdir()):
                    continue
                member.name = member.name[len(prefix):]
                if member.name:
                    archive.extract(member, into, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise CargoError(f"{crate} {version}: the crate file cannot be unpacked: {exc}") from None


def digest(tree: Path, files: Sequence[str]) -> dict[str, str]:
    return {f: hashlib.sha256((tree / f).read_bytes()).hexdigest() for f in files}


def cargo_mutants() -> Path:
    """cargo-mutants TOOL_VERSION, installed once into the tools cache (flock'd)."""
    root = cache() / "tools" / f"cargo-mutants-{TOOL_VERSION}"
    binary = root / "bin" / "cargo-mutants"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{root.name}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not binary.exists():
            done = subprocess.run(["cargo", "install", "--locked", "--quiet", "--root",
                                   str(root), "--version", TOOL_VERSION, "cargo-mutants"],
                                  stdout=sys.stderr, check=False)
            if done.returncode != 0:
                raise CargoError(f"cargo install cargo-mutants {TOOL_VERSION} failed")
    return binary


def normalized(name: str) -> str:
    """cargo-mutants' function name as a scope file spells it: lifetimes dropped, a trait
    method as TYPE::method."""
    name = name.replace("<'_>", "")
    m = re.fullmatch(r"<impl .+ for (.+)>::(\w+)", name)
    return f"{m[1]}::{m[2]}" if m else name


def mutants_of(tree: Path, files: Sequence[str],
               functions: set[str]) -> list[dict[str, object]]:
    """cargo-mutants' mutants of ``files`` inside ``functions``, with stable ids
    (FILE:LINE:COLUMN:GENRE, numbered when a span has several)."""
    args = [str(cargo_mutants()), "mutants", "--list", "--json", "--dir", str(tree)]
    for f in files:
        args += ["-f", f]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CargoError(f"cargo mutants --list failed: {done.stderr.strip()[-300:]}")
    out: list[dict[str, object]] = []
    seen: set[str] = set()
    for m in json.loads(done.stdout):
        function = normalized((m.get("function") or {}).get("function_name", ""))
        if function not in functions:
            continue
        span = m["span"]
        start = (span["start"]["line"], span["start"]["column"])
        ident = f"{m['file']}:{start[0]}:{start[1]}:{m['genre']}"
        number = 2
        while ident in seen:
            ident = f"{m['file']}:{start[0]}:{start[1]}:{m['genre']}:{number}"
            number += 1
        seen.add(ident)
        out.append({"id": ident, "file": m["file"], "line": start[0], "function": function,
                    "operator": f"{m['genre']}: {m['name'].split(': ', 1)[-1]}",
                    "start": list(start), "end": [span["end"]["line"], span["end"]["column"]],
                    "replacement": m["replacement"]})
    return out


def listing(tree: Path, scope: dict[str, object], kept: Path, refresh: bool) -> list[str]:
    """The mutants of ``tree`` in ``scope`` (its "files" and "functions"), one JSON line each:
    from ``kept`` when that listing was made from exactly these files, else from cargo-mutants
    (``refresh`` rewrites ``kept``)."""
    files = [str(f) for f in scope["files"]]  # type: ignore[attr-defined]
    functions = {str(f) for f in scope["functions"]}  # type: ignore[attr-defined]
    try:
        have = digest(tree, files)
    except OSError as exc:
        raise CargoError(f"the tree lacks a file of the scope: {exc}") from None
    if kept.exists() and not refresh:
        lines = kept.read_text().splitlines()
        head = json.loads(lines[0])
        if head.get("files") == have:
            print(f"listed by cargo-mutants {head['tool']} (kept in {kept.name})",
                  file=sys.stderr)
            return lines[1:]
    try:
        lines = [json.dumps(m) for m in mutants_of(tree, files, functions)]
    except (subprocess.SubprocessError, ValueError, KeyError) as exc:
        raise CargoError(f"cargo-mutants: {exc}") from None
    if refresh:
        kept.write_text(json.dumps({"tool": TOOL_VERSION, "files": have}) + "\n"
                        + "".join(line + "\n" for line in lines))
    return lines


def cargo_test(tree: Path, args: Sequence[str], target: Path) -> int:
    """``cargo test ARGS`` in ``tree`` with a shared target folder (one at a time): 0 pass,
    1 fail, 3 the tests do not build. The output's tail is copied to ours."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run(["cargo", "test", "--quiet", *args], cwd=tree,
                              env={**os.environ, "CARGO_TARGET_DIR": str(target)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace", check=False)
    sys.stdout.write(done.stdout[-20000:])
    if done.returncode != 0 and re.search(r"^error(\[E\d+\])?:", done.stdout, re.M) \
            and "test result" not in done.stdout:
        print("the tests do not build on this tree")
        return 3
    print(f"cargo test {' '.join(args)}: {'ok' if done.returncode == 0 else 'FAIL'}")
    return 0 if done.returncode == 0 else 1
