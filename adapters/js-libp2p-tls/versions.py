#!/usr/bin/env python3
"""Build this adapter against another @libp2p/tls: ``./build --version V`` or ``--source PATH``.

Run by ``build`` in a copy of this folder (fixturegen's build cache). package.json is rewritten:
@libp2p/tls at V (or a tarball packed from a copy of the tree at PATH, compiled with tsc first
when it has no dist/), with the companion packages of its @libp2p/interface major (STACKS), and
npm resolves the rest (the pinned package-lock.json is dropped). SHIMS names what compat.js
must bridge for the version; they go to shims.json. Exit 2 when the request is wrong; the last
line of output is always the reason of a failure.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "@libp2p/tls"
TREE = "packages/connection-encrypter-tls"  # where the package sits in the js-libp2p repo
Version = tuple[int, int, int]
VERDICTS = ("accept", "reject", "skip")


@dataclass(frozen=True)
class Stack:
    """The companions of one @libp2p/interface major: what a node of that era installed."""

    interface: int
    dependencies: dict[str, str]
    quic: str | None  # @chainsafe/libp2p-quic, None when none is served for this major
    notes: list[str] = field(default_factory=list)


# @libp2p/tls major -> its stack. 0.0.0 and 1.x are interface 1; 2.x interface 2; 3.x the
# pinned package.json's (interface 3).
STACKS: dict[int, Stack] = {
    1: Stack(1, {"@libp2p/crypto": "4.1.9", "@libp2p/logger": "4.0.20",
                 "@libp2p/multistream-select": "5.1.17", "@libp2p/peer-id": "4.2.4",
                 "@libp2p/tcp": "9.1.6", "@multiformats/multiaddr": "12.5.1"}, None,
             ["QUIC: no @chainsafe/libp2p-quic exists for @libp2p/interface 1 "
              "(@libp2p/tls before 2.0.0)"]),
    2: Stack(2, {"@libp2p/crypto": "5.1.8", "@libp2p/logger": "5.2.0",
                 "@libp2p/multistream-select": "6.0.29", "@libp2p/peer-id": "5.1.9",
                 "@libp2p/tcp": "10.1.19", "@multiformats/multiaddr": "12.5.1"}, "1.1.8"),
    3: Stack(3, {}, "2.1.1"),  # {}: the pinned package.json's companions
}


@dataclass(frozen=True)
class Shim:
    below: Version  # applies to every version before this one
    name: str  # as compat.js knows it
    why: str


# The version table: a build of V uses every shim whose ``below`` is above V.
SHIMS: tuple[Shim, ...] = (
    Shim((1, 0, 0), "verify-no-expected", "verifyPeerCertificate(raw): no expected PeerId"),
    Shim((2, 0, 0), "peer-id-keys", "interface 1: keys travel as a PeerId; no ECDSA"),
    Shim((2, 0, 0), "no-quic", "no @chainsafe/libp2p-quic for interface 1"),
    Shim((3, 0, 0), "duplex", "duplex streams: .conn, multistream-select 5/6 {stream}"),
    Shim((3, 0, 0), "quic-peer-in-addr", "@chainsafe/libp2p-quic 1.x: the PeerId is in remoteAddr"),
    Shim((3, 1, 0), "utils-path", "'./utils' is not exported: imported by its file"),
)


class Failed(Exception):
    """The build cannot be made; ``code`` 2 when the request is wrong."""

    def __init__(self, why: str, code: int = 1) -> None:
        super().__init__(why)
        self.code = code


def parse(version: str) -> Version:
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:-[0-9A-Za-z.-]+)?", version.strip())
    if m is None:
        raise Failed(f"{version} is not an @libp2p/tls version (MAJOR.MINOR.PATCH)", 2)
    return int(m[1]), int(m[2]), int(m[3])


def run(cmd: list[str], cwd: Path | None = None) -> tuple[int, str]:
    """Run ``cmd``, its output copied to ours (the build log); (exit status, output)."""
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", check=False)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    return proc.returncode, proc.stdout


def first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for pattern in (r"npm (ERR!|error) (code|notarget|404)", r"npm (ERR!|error)", r"error TS\d+",
                    r"[Ee]rror"):
        found = [line for line in lines if re.search(pattern, line)]
        if found:
            return " ".join(found[:2]) if "code" in found[0] else found[0]
    return lines[-1] if lines else "no output"


def served(version: str) -> None:
    code, out = run(["npm", "view", f"{PACKAGE}@{version}", "version", "--json"])
    if code == 0 and version in out:
        return
    if code == 0 or re.search(r"E404|ETARGET|notarget|No matching version", out):
        raise Failed(f"{version} is not served by the npm registry ({PACKAGE}@{version})", 2)
    raise Failed(f"npm view {PACKAGE}@{version} failed: {first_error(out)}")


def package_of(tree: Path) -> Path:
    """The @libp2p/tls package in ``tree``: the tree itself (an unpacked npm package or the
    package folder) or, in a js-libp2p checkout, packages/connection-encrypter-tls."""
    for candidate in (tree, tree / TREE, tree / "package"):
        try:
            if json.loads((candidate / "package.json").read_text()).get("name") == PACKAGE:
                return candidate
        except (OSError, ValueError, AttributeError):
            continue
    raise Failed(f"{tree} is not a checkout of js-libp2p (no package.json naming {PACKAGE} "
                 f"in it or in {TREE})", 2)


def compiled(package: Path, into: Path) -> Path:
    """A tarball of the package at ``package``, packed from a copy; a copy without dist/ is
    compiled first (tsc, no type check: its dependencies are not installed)."""
    copy = into / "tls"
    if copy.exists():
        shutil.rmtree(copy)
    skip = {"node_modules", ".git", "coverage", ".nyc_output"}
    shutil.copytree(package, copy, symlinks=False,
                    ignore=lambda _, names: {n for n in names if n in skip})
    if not (copy / "dist" / "src" / "index.js").is_file():
        if not (copy / "src").is_dir():
            raise Failed(f"{package} has neither dist/ nor src/", 2)
        tools = into / "tsc"
        if not (tools / "node_modules" / ".bin" / "tsc").exists():
            tools.mkdir(parents=True, exist_ok=True)
            typescript = json.loads(Path("package.json").read_text())["devDependencies"].get(
                "typescript", "5")
            code, out = run(["npm", "install", "--no-save", "--no-audit", "--no-fund",
                             "--loglevel=error", "--prefix", str(tools),
                             f"typescript@{typescript}"])
            if code != 0:
                raise Failed(f"npm install typescript failed: {first_error(out)}")
        (copy / "tsconfig.fixturegen.json").write_text(json.dumps({
            "compilerOptions": {"module": "NodeNext", "moduleResolution": "NodeNext",
                                "target": "ES2022", "rootDir": "src", "outDir": "dist/src",
                                "noCheck": True, "skipLibCheck": True, "declaration": False,
                                "sourceMap": False, "noEmitOnError": False,
                                # the js-libp2p tree imports './tls.ts' (TypeScript 5.7+)
                                "allowImportingTsExtensions": True,
                                "rewriteRelativeImportExtensions": True},
            "include": ["src/**/*.ts"]}, indent=1))
        code, out = run([str((tools / "node_modules" / ".bin" / "tsc").absolute()), "-p",
                         "tsconfig.fixturegen.json"], cwd=copy)
        if not (copy / "dist" / "src" / "index.js").is_file():
            raise Failed(f"tsc failed: {first_error(out)}")
    for old in into.glob("*.tgz"):
        old.unlink()
    code, out = run(["npm", "pack", "--ignore-scripts", "--loglevel=error", "--pack-destination",
                     str(into.absolute())], cwd=copy)
    tarballs = list(into.glob("*.tgz"))
    if code != 0 or len(tarballs) != 1:
        raise Failed(f"npm pack failed: {first_error(out)}")
    return tarballs[0]


def smoke() -> str | None:
    """API mode must answer: generate a certificate for an Ed25519 host key, then verify it.
    What the library says is its verdict (printed when not accept); no answer fails."""

    def ask(request: dict[str, object]) -> dict[str, object]:
        try:
            proc = subprocess.run(["node", "adapter.js"], input=json.dumps(request) + "\n",
                                  text=True, capture_output=True, timeout=120, check=False)
        except subprocess.TimeoutExpired:
            raise Failed("node adapter.js does not answer in API mode (120 s)") from None
        try:
            reply = json.loads(proc.stdout.splitlines()[0])
        except (ValueError, IndexError):
            lines = proc.stderr.strip().splitlines() or ["no output"]
            # node ends a crash with its version line: the error is the first "...Error" line
            tail = next((x.strip() for x in lines if re.match(r"\s*\w*Error\b", x)), lines[-1])
            raise Failed(f"node adapter.js does not answer in API mode: {tail[:300]}") from None
        if not isinstance(reply, dict) or reply.get("verdict") not in VERDICTS:
            raise Failed(f"node adapter.js answers {reply!r} in API mode")
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
    if source is None:
        served(version)
    stack = STACKS.get(max(number[0], 1))
    if stack is None:
        raise Failed(f"{version}: no companion stack for @libp2p/tls {number[0]}.x in "
                     "versions.py (STACKS)")
    shims = [s for s in SHIMS if number < s.below]
    print(f"@libp2p/tls {version}{f' (source {source})' if source else ''}: interface "
          f"{stack.interface}; shims " + (", ".join(f"{s.name} ({s.why})" for s in shims)
                                          or "none"), flush=True)
    manifest = json.loads(Path("package.json").read_text())
    dependencies = dict(manifest["dependencies"]) if not stack.dependencies else {
        **stack.dependencies}
    dependencies.pop("@chainsafe/libp2p-quic", None)
    if stack.quic is not None:
        dependencies["@chainsafe/libp2p-quic"] = stack.quic
    dependencies[PACKAGE] = version
    if source is not None:
        dependencies[PACKAGE] = f"file:{compiled(source, Path('.source')).as_posix()}"
        shutil.rmtree(Path("node_modules") / "@libp2p" / "tls", ignore_errors=True)
    manifest["dependencies"] = dict(sorted(dependencies.items()))
    Path("package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    Path("package-lock.json").unlink(missing_ok=True)
    Path("shims.json").write_text(json.dumps({"version": version,
                                              "shims": [s.name for s in shims]}) + "\n")
    (Path("node_modules") / "@libp2p" / "tcp" / "package.json").unlink(missing_ok=True)
    code, out = run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"])
    if code != 0:
        raise Failed(f"npm install failed: {first_error(out)}")
    said = smoke()
    if said is not None:  # a finding for the harness to report, not a build note
        print(f"smoke test: {said}", flush=True)
    notes = list(stack.notes)
    if stack.quic is not None and stack.interface != 3:
        notes.append(f"QUIC: @chainsafe/libp2p-quic {stack.quic}, the one served for "
                     f"@libp2p/interface {stack.interface} (its certificate check is "
                     "rust-libp2p's libp2p-tls through napi, not @libp2p/tls)")
    return {"version": version, "transports": ["tcp", "quic"] if stack.quic else ["tcp"],
            "notes": notes}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--version")
    which.add_argument("--source", type=Path)
    args = parser.parse_args()
    try:
        if args.source is not None:
            package = package_of(args.source.resolve())
            version = str(json.loads((package / "package.json").read_text()).get("version"))
            info = build(version, package)
        else:
            info = build(args.version.strip().removeprefix("v"), None)
    except Failed as exc:
        print(str(exc).replace("\n", " "), flush=True)
        return exc.code
    Path("build-info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"built @libp2p/tls {info['version']} (transports: {', '.join(info['transports'])})",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
