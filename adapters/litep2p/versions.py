#!/usr/bin/env python3
"""Build this adapter against another litep2p: ``./build --version V`` or ``--source PATH``.

Run by ``build`` in a copy of this folder (fixturegen's build cache). Cargo.toml's requirement
on litep2p becomes ``=V``; a source tree (a litep2p checkout, or an unpacked crate) is a
``[patch.crates-io]`` of litep2p at the tree's own version. Cargo.lock is kept, so the rest of
the graph moves only where that version needs it. With $FIXTUREGEN_SHARED the target directory
is shared by every build (flock'd: one build at a time) and the binary copied to
target/release/adapter. No shims: the adapter's API (ConfigBuilder, the QUIC transport's
Config, Litep2pEvent) is what FIRST and later releases have; an older one says why it does not
build. Exit 2 when the request is wrong; the last line of output is always the reason of a
failure.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

CRATE = "litep2p"
INDEX = "https://index.crates.io/li/te/litep2p"
PINNED = re.compile(r'^litep2p = \{ version = "=[^"]+"', re.M)


class Failed(Exception):
    """The build cannot be made; ``code`` 2 when the request is wrong."""

    def __init__(self, why: str, code: int = 1) -> None:
        super().__init__(why)
        self.code = code


def run(cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``cmd``, its output copied to ours (the build log); (exit status, output)."""
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", check=False)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    return proc.returncode, proc.stdout


def first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for pattern in (r"^error(\[E\d+\])?: ", r"failed to select a version",
                    r"Could not find `protoc`", r"^error"):
        for i, line in enumerate(lines):
            if re.search(pattern, line):
                where = next((x for x in lines[i + 1:i + 3] if x.startswith("-->")), "")
                return f"{line} {where}".strip()
    return lines[-1] if lines else "no output"


def served(version: str) -> None:
    """Fail with exit 2 when crates.io (its sparse index) has no litep2p ``version``."""
    request = urllib.request.Request(INDEX, headers={"User-Agent": "fixturegen adapter build"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            lines = answer.read().decode().splitlines()
    except (urllib.error.URLError, OSError) as exc:
        raise Failed(f"cannot read the crates.io index ({INDEX}): {exc}") from None
    if version not in {json.loads(line)["vers"] for line in lines if line.strip()}:
        raise Failed(f"{version} is not served by crates.io (litep2p has no such release)", 2)


def tree_version(tree: Path) -> str:
    """The version of the litep2p package at ``tree`` (exit 2 when it is not one)."""
    try:
        manifest = tomllib.loads((tree / "Cargo.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise Failed(f"{tree} is not a litep2p source tree (no readable Cargo.toml: "
                     f"{exc})", 2) from None
    package = manifest.get("package") or {}
    if package.get("name") != CRATE or not isinstance(package.get("version"), str):
        raise Failed(f"{tree} is not a litep2p source tree (its Cargo.toml is not the litep2p "
                     "package)", 2)
    return str(package["version"])


def build(version: str, source: Path | None) -> dict[str, object]:
    if not os.environ.get("PROTOC") and shutil.which("protoc") is None:
        raise Failed("litep2p needs protoc to build (the build script's find-protoc gives it)")
    text = Path("Cargo.toml").read_text()
    if PINNED.search(text) is None:
        raise Failed("Cargo.toml has no pinned litep2p requirement to replace")
    text = PINNED.sub(f'litep2p = {{ version = "={version}"', text, count=1)
    if source is not None:
        text += f'\n[patch.crates-io]\nlitep2p = {{ path = "{source}" }}\n'
    Path("Cargo.toml").write_text(text)
    print(f"litep2p {version}{f' (source {source})' if source else ''}", flush=True)
    shared = os.environ.get("FIXTUREGEN_SHARED")
    target = Path(shared) / "target" if shared else Path("target").absolute()
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    out_dir = Path("target") / "release"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "adapter").unlink(missing_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    with open(target.parent / "build.lock" if shared else target / ".fixturegen.lock",
              "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time in a shared target dir
        code, out = run(["cargo", "build", "--release"], env)
        if code != 0:
            raise Failed(f"cargo build failed: {first_error(out)}")
        if target != Path("target").absolute():
            shutil.copy2(target / "release" / "adapter", out_dir / "adapter")
    return {"version": version, "transports": ["quic"], "notes": []}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--version")
    which.add_argument("--source", type=Path)
    args = parser.parse_args()
    try:
        if args.source is not None:
            source = args.source.resolve()
            info = build(tree_version(source), source)
        else:
            version = args.version.strip().removeprefix("v")
            served(version)
            info = build(version, None)
    except Failed as exc:
        print(str(exc).replace("\n", " "), flush=True)
        return exc.code
    Path("build-info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"built litep2p {info['version']} (transports: quic)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
