"""The package stands on its own: a wheel installed into a fresh venv generates the corpus.

Slow (it builds a wheel and installs its dependencies from PyPI at the pinned versions), so it
runs in ``make test-slow``, which CI runs.
"""

from __future__ import annotations

import subprocess
import sys
import venv
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
