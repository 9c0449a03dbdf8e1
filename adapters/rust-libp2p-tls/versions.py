#!/usr/bin/env python3
"""Build this adapter against another libp2p-tls: ``./build --version V`` or ``--source PATH``.

Run by ``build`` in a copy of this folder (fixturegen's build cache). Cargo.toml's dependencies
on the libp2p crates are rewritten to the coherent set of SETS for the version (libp2p-tls =V,
its libp2p-core, libp2p-identity, multistream-select, rustls and the libp2p-quic that requires
it), the shims are cargo features (src/compat.rs), and cargo resolves the rest afresh (the
pinned Cargo.lock is dropped). A source tree is a ``[patch.crates-io]`` of libp2p-tls and of
every other crate the adapter uses that the tree holds. With $FIXTUREGEN_SHARED the target
directory is shared by every build (flock'd: one build at a time) and the binary copied to
target/release/adapter. Exit 2 when the request is wrong; the last line of output is always the
reason of a failure.
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
from dataclasses import dataclass
from pathlib import Path

CRATE = "libp2p-tls"
INDEX = "https://index.crates.io/li/bp/libp2p-tls"
Version = tuple[int, int, int, int, str]  # major, minor, patch, 1 for a release, pre-release
VERDICTS = ("accept", "reject", "skip")


@dataclass(frozen=True)
class Set:
    """The crates a libp2p-tls release was published with (cargo picks the newest patch)."""

    first: str  # the first libp2p-tls version of the set
    core: str
    identity: str | None  # None: the identity is libp2p-core's own
    mss: str  # multistream-select
    rustls: str
    quic: str  # libp2p-quic, the release that requires this libp2p-tls
    features: tuple[str, ...]  # src/compat.rs shims


LEGACY = ("rustls-legacy", "upgrade-legacy", "listen-legacy", "dial-legacy")
# The version table: a build of V uses the last set whose ``first`` is not above V. Every
# version before 0.7.0 also gets ``catch-panics`` (CATCH_BELOW).
SETS: tuple[Set, ...] = (
    Set("0.1.0-alpha", "0.38", None, "0.12", "0.20", "=0.7.0-alpha",
        ("identity-in-core", *LEGACY)),
    Set("0.1.0-alpha.2", "0.39", None, "0.12", "0.20", "=0.7.0-alpha.2",
        ("identity-in-core", *LEGACY)),
    Set("0.1.0", "0.39", "0.1", "0.12", "0.20", "=0.7.0-alpha.3", LEGACY),
    Set("0.2.0", "0.40", "0.2", "0.13", "0.21", "=0.9.2-alpha",
        ("rustls-legacy", "upgrade-legacy", "dial-legacy")),
    Set("0.2.1", "0.40", "0.2", "0.13", "0.21", "=0.9.3",
        ("rustls-legacy", "upgrade-legacy", "dial-legacy")),
    Set("0.3.0", "0.41", "0.2", "0.13", "0.21", "=0.10.2", ("rustls-legacy", "dial-legacy")),
    Set("0.4.0", "0.41", "0.2", "0.13", "0.23", "=0.10.3", ("dial-legacy",)),
    Set("0.5.0", "0.42", "0.2", "0.13", "0.23", "=0.11.1", ()),
    Set("0.6.0", "0.43", "0.2", "0.13", "0.23", "=0.12.0", ()),
    Set("0.6.2", "0.43", "0.2", "0.13", "0.23", "=0.13.1", ()),
    Set("0.7.0", "0.44", "0.3", "0.14", "0.23", "=0.14.0", ()),
)
CATCH_BELOW = "0.7.0"  # GHSA-5hq8-qhww-jm7q: parse can panic before
IDENTITY_FEATURES = ["ed25519", "rsa", "secp256k1", "ecdsa", "peerid"]
# Where a rust-libp2p checkout keeps the crates the adapter uses besides libp2p-tls.
TREE = {"libp2p-tls": "transports/tls", "libp2p-core": "core", "libp2p-identity": "identity",
        "libp2p-quic": "transports/quic", "multistream-select": "misc/multistream-select"}


class Failed(Exception):
    """The build cannot be made; ``code`` 2 when the request is wrong."""

    def __init__(self, why: str, code: int = 1) -> None:
        super().__init__(why)
        self.code = code


def parse(version: str) -> Version:
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+\S*)?", version.strip())
    if m is None:
        raise Failed(f"{version} is not a libp2p-tls version (MAJOR.MINOR.PATCH)", 2)
    pre = m[4] or ""
    return int(m[1]), int(m[2]), int(m[3]), 0 if pre else 1, pre


def chosen(version: str) -> Set:
    number = parse(version)
    sets = [s for s in SETS if parse(s.first) <= number]
    if not sets:
        raise Failed(f"{version} has no TLS verifier (libp2p-tls starts at 0.1.0-alpha)", 2)
    return sets[-1]


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``cmd``, its output copied to ours (the build log); (exit status, output)."""
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", check=False)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    return proc.returncode, proc.stdout


def first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for pattern in (r"^error(\[E\d+\])?: ", r"^error", r"failed to select a version",
                    r"Could not find `protoc`", r"[Ee]rror"):
        for i, line in enumerate(lines):
            if re.search(pattern, line):
                where = next((x for x in lines[i + 1:i + 3] if x.startswith("-->")), "")
                return f"{line} {where}".strip()
    return lines[-1] if lines else "no output"


def served(version: str) -> None:
    """Fail with exit 2 when crates.io (its sparse index) has no libp2p-tls ``version``."""
    request = urllib.request.Request(INDEX, headers={"User-Agent": "fixturegen adapter build"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            lines = answer.read().decode().splitlines()
    except (urllib.error.URLError, OSError) as exc:
        raise Failed(f"cannot read the crates.io index ({INDEX}): {exc}") from None
    released = {json.loads(line)["vers"]: json.loads(line) for line in lines if line.strip()}
    if version not in released:
        raise Failed(f"{version} is not served by crates.io (libp2p-tls has no such release)", 2)


def package(path: Path) -> tuple[str, str] | None:
    """(name, version) of the Cargo package at ``path``, None if there is none."""
    try:
        manifest = tomllib.loads((path / "Cargo.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    pkg = manifest.get("package") or {}
    version = pkg.get("version")
    if isinstance(version, dict):  # version.workspace = true
        root = path
        while root != root.parent and version is not None and isinstance(version, dict):
            root = root.parent
            try:
                workspace = tomllib.loads((root / "Cargo.toml").read_text()).get("workspace")
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if workspace:
                version = (workspace.get("package") or {}).get("version")
    if not isinstance(pkg.get("name"), str) or not isinstance(version, str):
        return None
    return pkg["name"], version


def crates_of(tree: Path) -> dict[str, tuple[Path, str]]:
    """The crates the adapter uses that ``tree`` holds: a rust-libp2p checkout (its root or its
    transports/tls) or an unpacked libp2p-tls crate."""
    roots = [tree]
    if tree.name == "tls" and tree.parent.name == "transports":
        roots.insert(0, tree.parent.parent)
    for root in roots:
        found = {}
        for name, where in TREE.items():
            for folder in ((root / where), root) if name == CRATE else (root / where,):
                got = package(folder)
                if got is not None and got[0] == name:
                    found[name] = (folder, got[1])
                    break
        if CRATE in found:
            return found
    raise Failed(f"{tree} is not a checkout of rust-libp2p (no Cargo.toml of the crate {CRATE} "
                 "in it or in transports/tls)", 2)


def manifest(version: str, chosen_set: Set, patches: dict[str, tuple[Path, str]]) -> str:
    """The pinned Cargo.toml with the libp2p dependencies of ``chosen_set``."""
    text = Path("Cargo.toml").read_text()
    s = chosen_set

    def req(name: str, default: str) -> str:
        return patches[name][1] if name in patches else default

    identity = req("libp2p-identity", s.identity or "")
    features = IDENTITY_FEATURES + (["rand"] if not identity.startswith("0.1") else [])
    lines = {
        "libp2p-tls": f'libp2p-tls = "={version}"',
        "libp2p-identity": (f'libp2p-identity = {{ version = "{identity}", features = '
                            f"{json.dumps(features)} }}") if s.identity or
        "libp2p-identity" in patches else "",
        "rustls": (f'rustls = {{ version = "{s.rustls}", default-features = false'
                   + (', features = ["std"] }' if s.rustls == "0.23" else " }")),
        "libp2p-core": (f'libp2p-core = {{ version = "{req("libp2p-core", s.core)}"'
                        + (', features = ["ecdsa", "rsa", "secp256k1"] }' if s.identity is None
                           else " }")),
        "multistream-select": f'multistream-select = "{req("multistream-select", s.mss)}"',
        "libp2p-quic": (f'libp2p-quic = {{ version = "{req("libp2p-quic", s.quic)}", '
                        'features = ["tokio"] }'),
    }
    for name, line in lines.items():
        text, count = re.subn(rf"(?m)^{re.escape(name)} = .*$", line, text)
        if count != 1:
            raise Failed(f"Cargo.toml has no single '{name} = ' line to rewrite")
    if patches:
        text += "\n[patch.crates-io]\n" + "".join(
            f'{name} = {{ path = "{folder}" }}\n' for name, (folder, _) in sorted(patches.items()))
    return text


def smoke(binary: Path) -> str | None:
    """API mode must answer: generate a certificate for an Ed25519 host key, then verify it.
    What the library says is its verdict (printed when not accept); no answer fails."""

    def ask(request: dict[str, object]) -> dict[str, object]:
        try:
            proc = subprocess.run([str(binary)], input=json.dumps(request) + "\n", text=True,
                                  capture_output=True, timeout=120, check=False)
        except subprocess.TimeoutExpired:
            raise Failed("the built adapter does not answer in API mode (120 s)") from None
        try:
            reply = json.loads(proc.stdout.splitlines()[0])
        except (ValueError, IndexError):
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise Failed(f"the built adapter does not answer in API mode: {tail}") from None
        if not isinstance(reply, dict) or reply.get("verdict") not in VERDICTS:
            raise Failed(f"the built adapter answers {reply!r} in API mode")
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
    the_set = chosen(version)
    patches = crates_of(source) if source is not None else {}
    if source is None:
        served(version)
    features = list(the_set.features)
    if parse(version) < parse(CATCH_BELOW):
        features.append("catch-panics")
    print(f"libp2p-tls {version}{f' (source {source})' if source else ''}: set of "
          f"{the_set.first} (libp2p-core {the_set.core}, quic {the_set.quic}); features "
          + (", ".join(features) or "none") + "; patched: " + (", ".join(patches) or "none"),
          flush=True)
    if the_set.identity is None and shutil.which("protoc") is None and the_set.core == "0.38":
        raise Failed("libp2p-core 0.38 (libp2p-tls 0.1.0-alpha) needs protoc to build: "
                     "apt-get install protobuf-compiler")
    Path("Cargo.toml").write_text(manifest(version, the_set, patches))
    Path("Cargo.lock").unlink(missing_ok=True)
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
        command = ["cargo", "build", "--release"]
        if features:
            command += ["--features", ",".join(features)]
        code, out = run(command, env)
        if code != 0:
            raise Failed(f"cargo build failed: {first_error(out)}")
        if target != Path("target").absolute():
            shutil.copy2(target / "release" / "adapter", out_dir / "adapter")
    said = smoke((out_dir / "adapter").absolute())
    if said is not None:  # a finding for the harness to report, not a build note
        print(f"smoke test: {said}", flush=True)
    return {"version": version, "transports": ["tcp", "quic"], "notes": []}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--version")
    which.add_argument("--source", type=Path)
    args = parser.parse_args()
    try:
        if args.source is not None:
            source = args.source.resolve()
            info = build(crates_of(source)[CRATE][1], source)
        else:
            info = build(args.version.strip().removeprefix("v"), None)
    except Failed as exc:
        print(str(exc).replace("\n", " "), flush=True)
        return exc.code
    Path("build-info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"built libp2p-tls {info['version']} (transports: {', '.join(info['transports'])})",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
