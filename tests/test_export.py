"""``fixturegen export``: test sources in an ecosystem's style; under ``make conformance`` they
build and run against the pinned go-libp2p, py-libp2p, libp2p-tls and @libp2p/tls (valid cases
pass, a known divergence fails as its finding says)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def fixturegen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def export(corpus: Path, lang: str, only: str, out: Path) -> Path:
    done = fixturegen("export", "--lang", lang, "--corpus", str(corpus), "--only", only,
                      "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.slow
def test_the_exports_embed_each_selected_fixture(corpus: Path, fixtures: dict[str, dict],
                                                 tmp_path: Path) -> None:
    wanted = [i for i in fixtures if i.startswith("invalid.host-key.")]
    py = export(corpus, "python", "invalid.host-key.*", tmp_path / "test_x.py").read_text()
    tree = ast.parse(py)  # a valid Python module
    assert any(isinstance(n, ast.FunctionDef) and n.name == "test_fixturegen_certificate"
               for n in tree.body)
    go = export(corpus, "go", "invalid.host-key.*", tmp_path / "x_test.go").read_text()
    rust = export(corpus, "rust", "invalid.host-key.*", tmp_path / "x.rs").read_text()
    assert rust.count("#[test]\nfn ") == len(wanted)
    ts = export(corpus, "ts", "invalid.host-key.*", tmp_path / "x.spec.ts").read_text()
    for fid in wanted:
        der = (corpus / fixtures[fid]["path"]).read_bytes().hex()
        assert all(f'"{fid}"' in text and der in text for text in (py, go, rust, ts))
    assert py.count('"invalid", ') == go.count('result: "invalid"') == len(wanted)
    assert ts.count('result: "invalid"') == len(wanted)
    stdout = fixturegen("export", "--lang", "go", "--corpus", str(corpus), "--only",
                        "invalid.host-key.*")
    assert stdout.returncode == 0 and stdout.stdout == go
    both = fixturegen("export", "--lang", "go", "--corpus", str(corpus), "--only",
                      "invalid.host-key.*", "--only", "matrix.ed25519.ed25519.fixed")
    assert both.returncode == 0  # repeated --only: a fixture matching any of them
    assert both.stdout.count('result: "') == len(wanted) + 1


def test_bad_export_options(corpus: Path, tmp_path: Path) -> None:
    for args in (["--lang", "cobol"], ["--lang", "go", "--only", "no-such-*"],
                 ["--lang", "go", "--corpus", str(tmp_path)],
                 ["--lang", "go", "--out", str(tmp_path)]):
        done = fixturegen("export", "--corpus", str(corpus), *args) if "--corpus" not in args \
            else fixturegen("export", *args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, args
    assert list(tmp_path.iterdir()) == []


def _go(corpus: Path, only: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    module = tmp_path / "module"
    shutil.copytree(ROOT / "adapters/go-libp2p", module,
                    ignore=shutil.ignore_patterns("adapter"))
    (module / "fixturegen").mkdir()
    export(corpus, "go", only, module / "fixturegen/export_test.go")
    return subprocess.run(["go", "test", "-mod=readonly", "./fixturegen/"], cwd=module,
                          capture_output=True, text=True, timeout=900)


def _python(corpus: Path, only: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    test = export(corpus, "python", only, tmp_path / "test_export.py")
    python = ROOT / "adapters/py-libp2p/.venv/bin/python"
    return subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(test)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.conformance
def test_the_go_export_runs_against_go_libp2p(corpus: Path, tmp_path: Path) -> None:
    ok = _go(corpus, "matrix.*", tmp_path / "ok")
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
    # go-libp2p takes an ECDSA host signature with a trailing byte (a finding): the test fails
    bad = _go(corpus, "invalid.extension-signature.ecdsa-trailing-byte", tmp_path / "bad")
    assert bad.returncode == 1 and "want reject, got accept" in bad.stdout


@pytest.mark.conformance
def test_the_python_export_runs_against_py_libp2p(corpus: Path, tmp_path: Path) -> None:
    ok = _python(corpus, "matrix.ecdsa_secp256r1_sha256.ed25519.*", tmp_path)
    assert ok.returncode == 0 and "2 passed" in ok.stdout, ok.stdout[-3000:]
    # py-libp2p refuses Ed25519-signed certificates (a finding): the test fails
    bad = _python(corpus, "matrix.ed25519.ed25519.fixed", tmp_path)
    assert bad.returncode == 1 and "signature hash algorithm is None" in bad.stdout


def _rust(corpus: Path, only: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """An integration test in a copy of the rust adapter's crate (its pinned Cargo.lock), built
    in the adapter's release target folder so the pinned dependencies are not built again."""
    crate = tmp_path / "crate"
    crate.mkdir(parents=True)
    adapter = ROOT / "adapters/rust-libp2p-tls"
    for name in ("Cargo.toml", "Cargo.lock"):
        shutil.copy(adapter / name, crate / name)
    shutil.copytree(adapter / "src", crate / "src")
    (crate / "tests").mkdir()
    export(corpus, "rust", only, crate / "tests/fixturegen.rs")
    return subprocess.run(["cargo", "test", "--release", "--locked", "--quiet", "--test",
                           "fixturegen"], cwd=crate, capture_output=True, text=True,
                          timeout=1800, env={**os.environ,
                                             "CARGO_TARGET_DIR": str(adapter / "target")})


@pytest.mark.conformance
def test_the_rust_export_runs_against_libp2p_tls(corpus: Path, tmp_path: Path) -> None:
    ok = _rust(corpus, "matrix.*", tmp_path / "ok")
    assert ok.returncode == 0 and "88 passed; 0 failed" in ok.stdout, ok.stdout[-3000:] + (
        ok.stderr[-3000:])
    # libp2p-tls takes a SignedKey length with a leading zero octet (a finding): it fails
    bad = _rust(corpus, "invalid.signed-key.ber-length-leading-zero", tmp_path / "bad")
    assert bad.returncode != 0 and "want reject, got accept" in bad.stdout


TSCONFIG = {"compilerOptions": {"target": "ES2022", "module": "NodeNext",
                                "moduleResolution": "NodeNext", "strict": True,
                                "skipLibCheck": True, "types": ["node"], "outDir": "dist"},
            "files": ["export.spec.ts"]}


def _ts(corpus: Path, only: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str],
                                                         subprocess.CompletedProcess[str]]:
    """The spec compiled by the js adapter's pinned TypeScript (strict, against the packages'
    own type declarations), then run by ``node --test``."""
    project = tmp_path / "project"
    project.mkdir(parents=True)
    adapter = ROOT / "adapters/js-libp2p-tls"
    (project / "node_modules").symlink_to(adapter / "node_modules")
    (project / "package.json").write_text('{"type": "module"}\n')
    (project / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    export(corpus, "ts", only, project / "export.spec.ts")
    tsc = subprocess.run([str(adapter / "node_modules/.bin/tsc"), "-p", "."], cwd=project,
                         capture_output=True, text=True, timeout=600)
    run = subprocess.run(["node", "--test", "dist/export.spec.js"], cwd=project,
                         capture_output=True, text=True, timeout=600)
    return tsc, run


@pytest.mark.conformance
def test_the_ts_export_builds_and_runs_against_libp2p_tls_js(corpus: Path,
                                                             tmp_path: Path) -> None:
    tsc, ok = _ts(corpus, "matrix.*.ed25519.*", tmp_path / "ok")
    assert tsc.returncode == 0, tsc.stdout[-3000:] + tsc.stderr[-3000:]
    assert ok.returncode == 0 and "# fail 0" in ok.stdout, ok.stdout[-3000:]
    assert "# pass 0" not in ok.stdout
    # @libp2p/tls takes a SignedKey length with a leading zero octet (a finding): it fails
    tsc, bad = _ts(corpus, "invalid.signed-key.ber-length-leading-zero", tmp_path / "bad")
    assert tsc.returncode == 0, tsc.stdout[-3000:]
    assert bad.returncode != 0 and "want reject, got accept" in bad.stdout
