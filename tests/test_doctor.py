"""``fixturegen doctor``: each adapter folder's build needs (its ``# needs:`` line) checked
against what this machine's PATH has, for an adapters folder nothing is built in yet."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from fixturegen.harness.adapters import SHIPPED
from fixturegen.harness.doctor import HOW, readiness

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
    assert names == {a.name for a in SHIPPED} | {"fixture-peer"}
    assert all(r.needs and set(r.needs) <= set(HOW) for r in ready)
    assert next(r for r in ready if r.folder == "litep2p").needs == ("cargo", "protoc",
                                                                    "python3")


def test_what_is_missing_is_named_with_where_to_get_it(tmp_path: Path) -> None:
    adapters = _folder(tmp_path)
    (adapters / "go-libp2p" / "adapter").write_text("")  # as adapters/build leaves it
    p = doctor(adapters, _path_with(tmp_path, ["go", "python3", "node", "npm"]))
    assert p.returncode == 1, p.stderr
    out = p.stdout.splitlines()
    assert out[0] == f"doctor: the adapters in {adapters}"
    rows = {line.split("  ")[0]: " ".join(line.split()) for line in out[1:7]}
    assert rows["fixture-peer"] == "fixture-peer can be built needs go"
    assert rows["go-libp2p"] == "go-libp2p built needs go, python3"
    assert rows["litep2p"] == ("litep2p cannot be built needs cargo (missing), protoc "
                               "(missing), python3")
    assert rows["rust-libp2p"] == "rust-libp2p cannot be built needs cargo (missing), python3"
    assert out[7:] == [f"cargo: {HOW['cargo']}", f"protoc: {HOW['protoc']}"]
    assert "Traceback" not in p.stderr


def test_with_every_tool_the_answer_is_zero(tmp_path: Path) -> None:
    adapters = _folder(tmp_path)
    p = doctor(adapters, _path_with(tmp_path, sorted(HOW)))
    assert p.returncode == 0, p.stdout
    assert "missing" not in p.stdout and "cannot" not in p.stdout
    assert p.stdout.count("can be built") == 6


def test_a_folder_that_is_not_one_is_a_usage_error(tmp_path: Path) -> None:
    p = doctor(tmp_path, os.environ.get("PATH", ""))
    assert p.returncode == 2 and "is not a fixturegen adapters folder" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
