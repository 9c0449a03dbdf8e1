#!/usr/bin/env python3
"""Build this adapter against another py-libp2p: ``./build --version V`` or ``--source PATH``.

Run by ``build`` in a copy of this folder (fixturegen's build cache). A fresh ``.venv`` gets
``libp2p==V`` from PyPI (or a copy of the tree at PATH: pip would build inside PATH itself)
with pip's resolver, constrained by the pinned requirements.txt, except the pins a version's own
requirements exclude: OVERRIDES replaces those. So every build runs the same cryptography,
aioquic, trio... as the pinned one wherever the version allows. FEATURES says which transports
a version has (the adapter answers ``skip`` for a mode whose transport is missing). Exit 2 when
the request is wrong; the last line of output is always the reason of a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "libp2p"
Version = tuple[int, int, int]


@dataclass(frozen=True)
class Override:
    first: Version
    below: Version
    pins: dict[str, str]  # package -> the version the constraints pin instead of the lock's
    why: str


# The version table: a build of V pins these instead of requirements.txt's, where first <= V <
# below. Each is the version's own Requires-Dist (the lock's pin is outside its range), or a
# dependency the lock does not hold.
OVERRIDES: tuple[Override, ...] = (
    Override((0, 3, 0), (0, 5, 0), {"protobuf": "4.25.9"}, "requires protobuf>=4.25,<5"),
    Override((0, 3, 0), (0, 7, 0), {"zeroconf": "0.147.3"}, "requires zeroconf>=0.147,<0.148"),
    Override((0, 3, 0), (0, 4, 0), {"multiaddr": "0.0.11"},
             "requires multiaddr>=0.0.11; 0.0.11 was the newest on its release day"),
    Override((0, 4, 0), (0, 5, 0), {"multiaddr": "0.1.0"},
             "requires multiaddr>=0.0.11; 0.1.0 was the newest on its release day"),
    Override((0, 5, 0), (0, 7, 0), {"multiaddr": "0.0.11"}, "requires multiaddr==0.0.11"),
    Override((0, 3, 0), (0, 5, 0), {"pymultihash": "0.8.2"}, "requires pymultihash"),
)

# Which transport (adapter mode) a version has: name -> (first version, why absent before).
FEATURES: dict[str, tuple[Version, str]] = {
    "quic": ((0, 3, 0), "libp2p.transport.quic (PeerAuthenticator) is in py-libp2p from 0.3.0"),
    "tcp": ((0, 4, 0), "libp2p.security.tls (the TLS security transport) is in py-libp2p from "
            "0.4.0: py-libp2p-tls answers skip"),
}
MODES = {"quic": "quic", "tcp": "tls"}  # transport -> adapter.py mode

VERDICTS = ("accept", "reject", "skip")


class Failed(Exception):
    """The build cannot be made; ``code`` 2 when the request is wrong."""

    def __init__(self, why: str, code: int = 1) -> None:
        super().__init__(why)
        self.code = code


def parse(version: str) -> Version:
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-.+]?[0-9A-Za-z.+-]*)?", version.strip())
    if m is None:
        raise Failed(f"{version} is not a py-libp2p version (MAJOR.MINOR.PATCH)", 2)
    return int(m[1]), int(m[2]), int(m[3] or 0)


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``cmd``, its output copied to ours (the build log); (exit status, output)."""
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", check=False)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    return proc.returncode, proc.stdout


def pip_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for pattern in (r"^ERROR: (?!Cannot install|ResolutionImpossible)", r"^error: ",
                    r"conflict is caused by", r"^ERROR"):
        for i, line in enumerate(lines):
            if re.search(pattern, line):
                if "conflict is caused by" in line and i + 1 < len(lines):
                    return f"pip: dependency conflict: {lines[i + 1]}"
                return line
    return lines[-1] if lines else "no output"


def constraints(version: Version) -> tuple[str, list[str]]:
    """The constraints file for ``version``: requirements.txt's pins with OVERRIDES applied."""
    pins: dict[str, str] = {}
    for line in Path("requirements.txt").read_text().splitlines():
        name, _, pinned = line.strip().partition("==")
        if pinned and name.lower() != PACKAGE:
            pins[name.lower().replace("_", "-")] = pinned
    applied = []
    for rule in OVERRIDES:
        if rule.first <= version < rule.below:
            pins.update(rule.pins)
            applied.append(f"{', '.join(f'{k}=={v}' for k, v in rule.pins.items())} "
                           f"({rule.why})")
    return "".join(f"{k}=={v}\n" for k, v in sorted(pins.items())), applied


def declared(tree: Path) -> str:
    """The version a py-libp2p tree declares: an sdist's PKG-INFO, else pyproject.toml, else
    setup.py."""
    name = version = None
    try:
        info = (tree / "PKG-INFO").read_text(errors="replace")
        name = re.search(r"^Name:\s*(\S+)", info, re.M)[1]  # type: ignore[index]
        version = re.search(r"^Version:\s*(\S+)", info, re.M)[1]  # type: ignore[index]
    except (OSError, TypeError):
        try:
            project = tomllib.loads((tree / "pyproject.toml").read_text()).get("project", {})
            name, version = project.get("name"), project.get("version")
        except (OSError, tomllib.TOMLDecodeError):
            pass
        if version is None:
            try:
                setup = (tree / "setup.py").read_text(errors="replace")
                m = re.search(r"""version\s*=\s*["']([^"']+)""", setup)
                version = m[1] if m else None
                name = name or ("libp2p" if re.search(r"""name\s*=\s*["']libp2p["']""", setup)
                                else None)
            except OSError:
                pass
    if name is None or name.lower() != PACKAGE or not (tree / "libp2p").is_dir():
        raise Failed(f"{tree} is not a checkout of py-libp2p (no pyproject.toml, setup.py or "
                     "PKG-INFO naming the package libp2p, or no libp2p/ folder)", 2)
    if version is None:
        raise Failed(f"{tree} declares no version (pyproject.toml [project] version)", 2)
    return str(version)


def copy_tree(tree: Path, into: Path) -> None:
    """PATH is never written: pip builds a local project inside it, so it builds a copy."""
    if into.exists():
        shutil.rmtree(into)
    skip = {".git", ".venv", "venv", ".tox", "build", "dist", "node_modules", "__pycache__",
            ".mypy_cache", ".pytest_cache", ".ruff_cache"}
    shutil.copytree(tree, into, symlinks=True,
                    ignore=lambda _, names: {n for n in names
                                             if n in skip or n.endswith(".egg-info")})


def smoke(mode: str) -> str | None:
    """API mode must answer: generate a certificate for an Ed25519 host key, then verify it.
    What the library says is its verdict (a note when it is not accept); no answer fails."""
    command = [".venv/bin/python", "adapter.py", mode]
    who = f"adapter.py {mode}"

    def ask(request: dict[str, object]) -> dict[str, object]:
        try:
            proc = subprocess.run(command, input=json.dumps(request) + "\n", text=True,
                                  capture_output=True, timeout=120, check=False)
        except subprocess.TimeoutExpired:
            raise Failed(f"{who} does not answer in API mode (120 s)") from None
        try:
            reply = json.loads(proc.stdout.splitlines()[0])
        except (ValueError, IndexError):
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise Failed(f"{who} does not answer in API mode: {tail}") from None
        if not isinstance(reply, dict) or reply.get("verdict") not in VERDICTS:
            raise Failed(f"{who} answers {reply!r} in API mode")
        return reply

    made = ask({"id": "g", "kind": "generate", "host_key_type": "ed25519", "certificates": []})
    if made["verdict"] != "accept":
        return f"the library makes no certificate for an Ed25519 host key ({made.get('error')})"
    verdict = ask({"id": "c", "kind": "certificate", "certificates": made.get("certificates"),
                   "expect_peer_id": made.get("peer_id")})
    if verdict["verdict"] != "accept" or verdict.get("peer_id") != made.get("peer_id"):
        return ("the library rejects the certificate its own generator made for an Ed25519 "
                f"host key ({verdict.get('error')})")
    return None


def build(version: str, source: Path | None) -> dict[str, str | list[str]]:
    number = parse(version)
    first = min(since for since, _ in FEATURES.values())
    if number < first:
        raise Failed(f"{version} has no TLS verifier (py-libp2p has one from "
                     f"{'.'.join(map(str, first))})", 2)
    pins, applied = constraints(number)
    print(f"py-libp2p {version}{f' (source {source})' if source else ''}: overrides "
          + ("; ".join(applied) or "none"), flush=True)
    Path("constraints.txt").write_text(pins)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    installing = [f"{PACKAGE}=={version}"]
    venv = Path(".venv")
    if source is not None:
        copy_tree(source, Path(".source"))
        installing = ["./.source"]
    elif venv.exists():
        shutil.rmtree(venv)
    (venv / ".installed").unlink(missing_ok=True)
    if not (venv / "bin" / "python").exists():
        code, out = run([sys.executable, "-m", "venv", str(venv)])
        if code != 0:
            raise Failed(f"python3 -m venv failed: {out.strip().splitlines()[-1:]}")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    if source is not None:  # a rebuild of a changed tree: the same version, new content
        run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "--quiet", "-y", PACKAGE])
    code, out = run([*pip, "-c", "constraints.txt", *installing], env)
    if code != 0:
        wanted = re.escape(f"{PACKAGE}=={version}")
        if source is None and re.search(
                rf"(No matching distribution|Could not find a version).*{wanted}\b", out):
            raise Failed(f"{version} is not served by PyPI (pip: no matching distribution)", 2)
        raise Failed(f"pip install failed: {pip_error(out)}")
    transports, notes = [], []
    for transport, (since, why) in FEATURES.items():
        if number >= since:
            transports.append(transport)
            said = smoke(MODES[transport])
            if said is not None:  # a finding for the harness to report, not a build note
                print(f"{transport.upper()} smoke test: {said}", flush=True)
        else:
            notes.append(f"{transport.upper()}: {why}")
    floating = unpinned(venv, pins)
    if floating:
        notes.append("not pinned by requirements.txt or OVERRIDES, resolved by pip: "
                     + ", ".join(floating))
    (venv / ".installed").touch()
    return {"version": version, "transports": sorted(transports), "notes": notes}


def unpinned(venv: Path, pins: str) -> list[str]:
    """What pip installed that the constraints do not pin (to add to OVERRIDES)."""
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "freeze"],
                          capture_output=True, text=True, check=False)
    pinned = {line.partition("==")[0] for line in pins.splitlines()} | {PACKAGE}
    return [line for line in proc.stdout.splitlines() if "==" in line
            and line.partition("==")[0].lower().replace("_", "-") not in pinned]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--version")
    which.add_argument("--source", type=Path)
    args = parser.parse_args()
    try:
        if args.source is not None:
            source = args.source.resolve()
            info = build(declared(source), source)
        else:
            info = build(args.version.strip().removeprefix("v"), None)
    except Failed as exc:
        print(str(exc).replace("\n", " "), flush=True)
        return exc.code
    Path("build-info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"built py-libp2p {info['version']} (transports: {', '.join(info['transports'])})",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
