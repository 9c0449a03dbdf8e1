from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fixturegen.output.writer import generate

#: The stand-in implementations' build scripts run their adapters with ``$PYTHON`` (else the
#: system python3): the test's own interpreter has what they import (cryptography), a fresh
#: machine's python3 need not.
os.environ.setdefault("PYTHON", sys.executable)

#: The libp2p spec's own vectors (public data: libp2p/specs, tls/tls.md and peer-ids/peer-ids.md;
#: the commit is named in the file's "source" field), vendored so that a clone anywhere passes.
ADAPTERS = Path(__file__).resolve().parents[1] / "adapters"
VECTORS = Path(__file__).resolve().parent / "data" / "libp2p-spec-vectors.json"


def build_adapters(*names: str) -> Path:
    """The adapters folder, with ``names`` built by adapters/build (one build at a time across
    pytest's workers); skips the test on a machine without Go."""
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain on this machine")
    with open(ADAPTERS / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([str(ADAPTERS / "build"), *names], check=True, timeout=900,
                       capture_output=True)
    return ADAPTERS


@pytest.fixture()
def adapters(tmp_path: Path) -> Path:
    """A copy of the stand-in implementation's adapter folder (tests/adapters/mutable), for
    mutation campaigns that edit and build it. A module with its own ``adapters`` overrides."""
    folder = tmp_path / "adapters"
    shutil.copytree(Path(__file__).resolve().parent / "adapters" / "mutable",
                    folder / "mutable")
    (folder / "build").write_text("#!/bin/sh\n")
    return folder


@pytest.fixture(scope="session")
def vectors() -> dict[str, Any]:
    return json.loads(VECTORS.read_text())


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default corpus, generated once per test process (checked by the verifier)."""
    from fixturegen.cli import corpus_check

    out = tmp_path_factory.mktemp("corpus") / "out"
    generate(out, check=corpus_check)
    return out


@pytest.fixture(scope="session")
def manifest(corpus: Path) -> dict[str, Any]:
    return json.loads((corpus / "manifest.json").read_text())


@pytest.fixture(scope="session")
def fixtures(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in manifest["fixtures"]}


@pytest.fixture(scope="session")
def transcripts(corpus: Path) -> dict[str, Any]:
    return json.loads((corpus / "transcripts.json").read_text())
