"""`generate` replaces only a corpus it wrote, and keeps the reports a harness run left in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _generate(out: str, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", "generate", "--out", out,
                           "--only", "matrix.ed25519.ed25519.*", *extra], cwd=cwd,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_generate_into_the_current_folder_with_other_files_refuses(tmp_path: Path) -> None:
    (tmp_path / "work.txt").write_text("a week of work")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes.md").write_text("notes")
    before = _tree(tmp_path)
    run = _generate(".", tmp_path)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "not a corpus fixturegen wrote" in run.stderr
    assert _tree(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub", "work.txt"]


def test_a_corpus_with_a_foreign_file_beside_it_is_not_replaced(tmp_path: Path) -> None:
    assert _generate("out", tmp_path).returncode == 0
    (tmp_path / "out" / "mine.txt").write_text("mine")
    before = _tree(tmp_path / "out")
    run = _generate("out", tmp_path)
    assert run.returncode == 2 and "(mine.txt)" in run.stderr
    assert _tree(tmp_path / "out") == before


def test_a_folder_with_a_manifest_of_another_tool_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"generator": {"name": "other"}}')
    run = _generate("out", tmp_path)
    assert run.returncode == 2 and "no manifest.json written by fixturegen" in run.stderr
    assert (out / "manifest.json").read_text() == '{"generator": {"name": "other"}}'


def test_reports_of_a_harness_run_survive_a_rebuild(tmp_path: Path) -> None:
    assert _generate("out", tmp_path).returncode == 0
    reports = tmp_path / "out" / "conformance"
    reports.mkdir()
    (reports / "results.json").write_text("{}")
    assert _generate("out", tmp_path).returncode == 0
    assert (reports / "results.json").read_text() == "{}"
    assert (tmp_path / "out" / "manifest.json").exists()


def test_an_empty_folder_and_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert _generate("empty", tmp_path).returncode == 0
    os.symlink(tmp_path / "empty", tmp_path / "link")
    run = _generate("link", tmp_path)
    assert run.returncode == 2 and "symbolic link" in run.stderr
    assert (tmp_path / "empty" / "manifest.json").exists()
