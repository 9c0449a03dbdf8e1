"""The package stands on its own: a wheel installed into a fresh venv generates the corpus.

Slow (it builds a wheel and installs its dependencies from PyPI at the pinned versions), so it
runs in ``make test-slow``, which CI runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "conformance" not in p.relative_to(root).parts}


@pytest.mark.slow
def test_an_installed_wheel_generates_the_same_bytes(corpus: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels),
                    str(ROOT)], check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("fixturegen-*.whl")
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    subprocess.run([str(env / "bin/python"), "-m", "pip", "install", "-q", "-c",
                    str(ROOT / "constraints.txt"), str(wheel)], check=True,
                   capture_output=True, timeout=900)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = subprocess.run([str(env / "bin/fixturegen"), "generate", "--out", "corpus"],
                       cwd=elsewhere, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    made, reference = _tree(elsewhere / "corpus"), _tree(corpus)
    assert len(made) > 300
    assert made.keys() == reference.keys()
    assert [name for name in made if made[name] != reference[name]] == []


def _tracked_adapters() -> set[str]:
    listed = subprocess.run(["git", "ls-files", "adapters"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    return {p.removeprefix("adapters/") for p in listed}


@pytest.mark.slow
def test_an_installed_wheel_carries_its_adapters_and_a_corpus_of_its_own(tmp_path: Path
                                                                          ) -> None:
    """The wheel holds the shipped adapters, exactly the files git tracks (no build output of
    this checkout); installed outside any checkout, fixturegen copies them into its cache and
    uses that copy; with no ``--corpus`` and no ./out it generates its own corpus in the cache
    (once), runs it, and writes the reports to ./fixturegen-report, each naming the catalogue
    version."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels),
                    str(ROOT)], check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("fixturegen-*.whl")
    with zipfile.ZipFile(wheel) as z:
        prefix = "fixturegen/shipped/adapters/"
        shipped = {n.removeprefix(prefix) for n in z.namelist() if n.startswith(prefix)}
        modes = {n.removeprefix(prefix): z.getinfo(n).external_attr >> 16 for n in z.namelist()
                 if n.startswith(prefix)}
    if (ROOT / ".git").exists():
        assert shipped == _tracked_adapters()
    assert "build" in shipped and "litep2p/find-protoc" in shipped
    assert not any(part in ("target", "node_modules", ".venv") for name in shipped
                   for part in name.split("/"))
    assert modes["build"] & 0o111 and modes["litep2p/find-protoc"] & 0o111

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    subprocess.run([str(env_dir / "bin/python"), "-m", "pip", "install", "-q", "-c",
                    str(ROOT / "constraints.txt"), str(wheel)], check=True,
                   capture_output=True, timeout=900)
    fixturegen = str(env_dir / "bin/fixturegen")
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items()
           if k not in ("FIXTUREGEN_ADAPTERS", "VIRTUAL_ENV", "PYTHONPATH")}
    env["FIXTUREGEN_CACHE"] = str(cache)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "adapters").mkdir()  # another project's folder of that name is not taken
    doctor = subprocess.run([fixturegen, "doctor"], cwd=elsewhere, env=env, capture_output=True,
                            text=True, timeout=120)
    (copy,) = [p for p in (cache / "adapters").glob("0.*-*") if p.is_dir()]
    assert doctor.stdout.splitlines()[0] == f"doctor: the adapters in {copy}", doctor.stderr
    assert {str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()} == \
        shipped | {".copied"}
    assert os.access(copy / "litep2p" / "find-protoc", os.X_OK)

    reference = ROOT / "adapters" / "reference" / "adapter.py"
    command = [fixturegen, "harness", "run", "--no-transcripts", "--name", "reference", "--",
               str(env_dir / "bin/python"), str(reference)]
    first = subprocess.run(command, cwd=elsewhere, env=env, capture_output=True, text=True,
                           timeout=900)
    assert first.returncode == 0, first.stderr
    (made,) = [p for p in (cache / "corpus").glob("0.*-*") if p.is_dir()]
    assert made.is_dir() and (made / "manifest.json").is_file()
    assert "harness: no --corpus: generating fixturegen" in first.stderr
    results = json.loads((elsewhere / "fixturegen-report" / "results.json").read_text())
    manifest = json.loads((made / "manifest.json").read_text())
    assert results["corpus"] == str(made)
    assert results["catalogue_version"] == manifest["catalogue"] == made.name.split("-", 1)[1]
    (impl,) = results["implementations"]
    assert impl["counts"]["false_accept"] == impl["counts"]["false_reject"] == 0
    second = subprocess.run(command, cwd=elsewhere, env=env, capture_output=True, text=True,
                            timeout=900)
    assert second.returncode == 0, second.stderr
    assert "generating" not in second.stderr  # the corpus comes from the cache
