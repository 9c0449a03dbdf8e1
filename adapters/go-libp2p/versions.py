#!/usr/bin/env python3
"""Build this adapter against another go-libp2p: ``./build --version V`` or ``--source PATH``.

Run by ``build`` in a copy of this folder (fixturegen's build cache). go.mod is rewritten to
require go-libp2p alone (a release from the Go module proxy, or PATH through a ``replace``), and
the rest of the module graph is go-libp2p's own (``go build -mod=mod``). The build tags of
SHIMS select the shim_*.go files for the version; the binary is ./adapter, as in the pinned
build; build-info.json says what it has.

go-libp2p v0.8.0 to v0.19.x kept its TLS code in the module go-libp2p-tls (and its keys in
go-libp2p-core): those versions build ./module-tls instead, an API-only adapter whose go.mod
requires that go-libp2p release alone, so it links the go-libp2p-tls and go-libp2p-core the
release required (build-info.json names them). Before v0.8.0 go-libp2p required no
go-libp2p-tls. Exit 2 when the request is wrong; the last line of
output is always the reason of a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MODULE = "github.com/libp2p/go-libp2p"
FIRST = (0, 20, 0)  # p2p/security/tls moved into go-libp2p in v0.20.0
MODULE_TLS = "github.com/libp2p/go-libp2p-tls"
MODULE_TLS_FIRST = (0, 8, 0)  # the first go-libp2p whose go.mod requires go-libp2p-tls
QUIC_V1 = (0, 24, 0)  # before: QUIC draft-29 only, and the fixture peer speaks QUIC v1
LEGACY_CORE = "legacy-core"  # the module that stands in for core/ before v0.22.0


@dataclass(frozen=True)
class Shim:
    below: tuple[int, int, int]  # applies to every version before this one
    tag: str  # the build tag (or, for LEGACY_CORE, the replaced folder)
    why: str


# The version table: a build of version V uses every shim whose ``below`` is above V.
SHIMS: tuple[Shim, ...] = (
    Shim((0, 22, 0), LEGACY_CORE, "core/ is the module go-libp2p-core: ./legacy-core aliases it"),
    Shim((0, 24, 0), "go_libp2p_tls_legacy", "libp2ptls.New(key): no protocol ID, no muxers"),
    Shim((0, 25, 0), "go_libp2p_mss_legacy", "go-multistream v0.3: strings, not generic"),
    Shim((0, 30, 0), "go_libp2p_noquic", "quic-go before v0.37 refuses to build with Go 1.21+"),
    Shim((0, 32, 0), "go_libp2p_quicreuse_legacy", "quicreuse.NewConnManager(resetKey)"),
    Shim((0, 46, 0), "go_libp2p_quic_nolisten",
         "quic-go before v0.57 panics in a QUIC server handshake on Go 1.26: dial only"),
)

VERDICTS = ("accept", "reject", "skip")


class Failed(Exception):
    """The build cannot be made; ``code`` 2 when the request is wrong."""

    def __init__(self, why: str, code: int = 1) -> None:
        super().__init__(why)
        self.code = code


def parse(version: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?", version.strip())
    if m is None:
        raise Failed(f"{version} is not a go-libp2p version (vMAJOR.MINOR.PATCH)", 2)
    return int(m[1]), int(m[2]), int(m[3])


def selected(version: tuple[int, int, int]) -> list[Shim]:
    return [shim for shim in SHIMS if version < shim.below]


def run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[int, str]:
    """Run ``cmd``, its output copied to ours (the build log); (exit status, output)."""
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace", check=False)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    return proc.returncode, proc.stdout


def first_error(output: str) -> str:
    """The line of a go command's output that says what went wrong."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("go: downloading", "go: finding", "#")):
            continue
        if re.search(r"\.go:\d+:\d+: |^go: |cannot |error", line):
            return line
    return lines[-1] if lines else "no output"


def served(version: str, env: dict[str, str]) -> None:
    """Fail with exit 2 when the module proxy does not serve go-libp2p@version."""
    code, out = run(["go", "mod", "download", "-json", f"{MODULE}@{version}"], env)
    if code == 0:
        return
    try:
        why = str(json.loads(out[out.index("{"):]).get("Error") or out)
    except ValueError:
        why = out
    if m := re.search(r"\b(403|404|410)\b", why):
        raise Failed(f"{version} is not served by the Go module proxy ({m[1]})", 2)
    if re.search(r"unknown revision|invalid version|no matching versions", why):
        raise Failed(f"{version} is not a released go-libp2p version ({first_error(why)})", 2)
    raise Failed(f"go mod download {MODULE}@{version} failed: {first_error(why)}")


def declared(tree: Path) -> str:
    """The version a go-libp2p source tree declares (its version.json; else a proxy zip's
    folder name, or the git tag at its HEAD)."""
    try:
        text = (tree / "go.mod").read_text()
    except OSError:
        text = ""
    if not re.search(rf"^module\s+{re.escape(MODULE)}\s*$", text, re.M):
        raise Failed(f"{tree} is not a checkout of go-libp2p (no go.mod for module {MODULE})", 2)
    if not (tree / "p2p" / "security" / "tls").is_dir():
        raise Failed(f"{tree} has no p2p/security/tls (go-libp2p before v0.20.0)", 2)
    try:
        version = str(json.loads((tree / "version.json").read_text())["version"])
    except (OSError, ValueError, KeyError, TypeError):
        m = re.search(r"@(v\d+\.\d+\.\d+\S*)$", tree.name)
        if m is not None:
            version = m[1]
        else:
            git = subprocess.run(["git", "-C", str(tree), "describe", "--tags", "--abbrev=0"],
                                 capture_output=True, text=True, check=False)
            version = git.stdout.strip()
            if git.returncode != 0 or not version:
                why = f"{tree} declares no version (no version.json, no git tag)"
                raise Failed(why, 2) from None
    parse(version)
    return version if version.startswith("v") else f"v{version}"


def gomod(version: str, source: Path | None, shims: list[Shim]) -> str:
    lines = ["module fixturegen/adapters/go-libp2p", "", "go 1.26.0", "",
             f"require {MODULE} {version}", ""]
    if source is not None:
        lines += [f"replace {MODULE} => {source}", ""]
    if any(s.tag == LEGACY_CORE for s in shims):
        lines += [f"require {MODULE}/core v0.0.0", f"replace {MODULE}/core => ./{LEGACY_CORE}",
                  ""]
    return "\n".join(lines)


def module_version(path: str, env: dict[str, str], cwd: Path | None = None) -> str | None:
    proc = subprocess.run(["go", "list", "-m", "-f", "{{.Version}}", path], env=env, cwd=cwd,
                          capture_output=True, text=True, check=False)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def smoke(binary: Path) -> str | None:
    """API mode must answer: generate a certificate for an Ed25519 host key, then verify it.
    What the library says is its verdict (a note when it is not accept); no answer fails."""
    command = [str(binary)]
    who = "the built adapter"

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
    env = {**os.environ, "GOWORK": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}
    number = parse(version)
    if number < MODULE_TLS_FIRST:
        raise Failed(f"{version} has no TLS verifier (go-libp2p requires the module "
                     "go-libp2p-tls from v0.8.0, and has p2p/security/tls from v0.20.0)", 2)
    if source is None:
        served(version, env)
    if number < FIRST:
        if source is not None:
            raise Failed(f"{source}: a source tree of go-libp2p before v0.20.0 cannot be built "
                         "(its TLS code is the module go-libp2p-tls)", 2)
        return module_tls(version, env)
    shims = selected(number)
    print(f"go-libp2p {version}{f' (source {source})' if source else ''}: shims "
          + (", ".join(f"{s.tag} ({s.why})" for s in shims) or "none"), flush=True)
    Path("go.mod").write_text(gomod(version, source, shims))
    Path("go.sum").unlink(missing_ok=True)
    Path("adapter").unlink(missing_ok=True)
    tags = ",".join(s.tag for s in shims if s.tag != LEGACY_CORE)
    code, out = run(["go", "build", "-trimpath", "-tags", tags, "-o", "adapter", "."], env)
    if code != 0:
        raise Failed(f"go build failed: {first_error(out)}")
    said = smoke(Path("adapter").absolute())
    if said is not None:  # a finding for the harness to report, not a build note
        print(f"smoke test: {said}", flush=True)
    notes = []
    quic = not any(s.tag == "go_libp2p_noquic" for s in shims)
    if not quic:
        quic_go = (module_version("github.com/quic-go/quic-go", env)
                   or module_version("github.com/lucas-clemente/quic-go", env) or "?")
        why = f"go-libp2p {version} needs quic-go {quic_go}, which does not build with Go 1.21+"
        if number < QUIC_V1:
            why += ", and it speaks QUIC draft-29 only (the fixture peer speaks QUIC v1)"
        notes.append(f"QUIC: {why}")
    elif any(s.tag == "go_libp2p_quic_nolisten" for s in shims):
        quic_go = module_version("github.com/quic-go/quic-go", env) or "?"
        notes.append(f"QUIC listen: quic-go {quic_go} panics in every server handshake on Go 1.26 "
                     "(crypto/tls SendSessionTicket, golang/go#62032; fixed in quic-go v0.57): "
                     "listen requests are answered skip; QUIC dial works")
    return {"version": version, "transports": ["tcp", "quic"] if quic else ["tcp"],
            "notes": notes}


def module_tls(version: str, env: dict[str, str]) -> dict[str, str | list[str]]:
    """go-libp2p ``version`` before v0.20.0: ./module-tls against the go-libp2p-tls and
    go-libp2p-core that release required; API mode only."""
    folder = Path("module-tls").absolute()
    (folder / "go.mod").write_text(f"module fixturegen/adapters/go-libp2p/module-tls\n\n"
                                   f"go 1.26.0\n\nrequire {MODULE} {version}\n")
    (folder / "go.sum").unlink(missing_ok=True)
    binary = Path("adapter").absolute()
    binary.unlink(missing_ok=True)
    code, out = run(["go", "build", "-trimpath", "-o", str(binary), "."], env, cwd=folder)
    if code != 0:
        raise Failed(f"go build failed: {first_error(out)}")
    tls = module_version(MODULE_TLS, env, folder) or "?"
    core = module_version("github.com/libp2p/go-libp2p-core", env, folder) or "?"
    print(f"go-libp2p {version}: go-libp2p-tls {tls}, go-libp2p-core {core}", flush=True)
    said = smoke(binary)
    if said is not None:
        print(f"smoke test: {said}", flush=True)
    return {"version": version, "transports": [],
            "notes": [f"go-libp2p {version} kept its TLS code in the module go-libp2p-tls {tls} "
                      f"(keys: go-libp2p-core {core}): API mode only, its handshakes are not "
                      "built"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--version")
    which.add_argument("--source", type=Path)
    args = parser.parse_args()
    try:
        if args.source is not None:
            source = args.source.resolve()
            info = build(declared(source), source)
        else:
            version = args.version.strip()
            info = build(f"v{version}" if version[:1].isdigit() else version, None)
    except Failed as exc:
        print(str(exc).replace("\n", " "), flush=True)
        return exc.code
    Path("build-info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"built go-libp2p {info['version']} (transports: "
          f"{', '.join(info['transports']) or 'none, API mode only'})",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
