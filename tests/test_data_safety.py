"""`generate` replaces only what it wrote (its marker says what), and keeps the reports a
harness run left in the corpus."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


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
    assert run.stderr.count("\n") == 1 and "generate did not write" in run.stderr
    assert _tree(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub", "work.txt"]


def test_a_foreign_file_in_a_corpus_is_kept_and_a_foreign_same_name_is_refused(
        tmp_path: Path) -> None:
    assert _generate("out", tmp_path).returncode == 0
    (tmp_path / "out" / "mine.txt").write_text("mine")
    assert _generate("out", tmp_path).returncode == 0  # its own files replaced, mine.txt kept
    assert (tmp_path / "out" / "mine.txt").read_text() == "mine"
    # A corpus copied without its marker (or someone's folder of the same layout) is not ours.
    (tmp_path / "out" / ".fixturegen-owner.json").unlink()
    before = _tree(tmp_path / "out")
    run = _generate("out", tmp_path)
    assert run.returncode == 2 and "did not write" in run.stderr
    assert _tree(tmp_path / "out") == before


def test_a_folder_with_a_manifest_of_another_tool_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"generator": {"name": "other"}}')
    run = _generate("out", tmp_path)
    assert run.returncode == 2 and "did not write (manifest.json)" in run.stderr
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


# -- paths from a manifest are confined to the corpus -------------------------------------------

import json  # noqa: E402
import shutil  # noqa: E402

HOSTILE = ["../../../../etc/passwd", "/etc/passwd", "certs/../../outside.der", "link-out.der",
           "certs/a\x00b.der", 7, None, "", "certs"]


def _hostile_corpus(corpus: Path, tmp_path: Path, field: str, value: object) -> Path:
    """A copy of the corpus whose first fixture's ``field`` (or first vector's certificate path)
    is ``value``; beside it a file it must never read, and a symlink pointing at that file."""
    root = tmp_path / "c"
    shutil.copytree(corpus, root)
    secret = tmp_path / "outside.der"
    secret.write_bytes((corpus / "certs/matrix.ed25519.ed25519.fixed.der").read_bytes())
    os.symlink(secret, root / "link-out.der")
    manifest = json.loads((root / "manifest.json").read_text())
    if field == "chain":
        manifest["fixtures"][0]["chain"] = [value]
    elif field == "certificate_key_path":
        manifest["fixtures"][0]["certificate_key_path"] = value
    (root / "manifest.json").write_text(json.dumps(manifest))
    if field == "certificate_path":
        t = json.loads((root / "transcripts.json").read_text())
        t["vectors"][0]["certificate_path"] = value
        (root / "transcripts.json").write_text(json.dumps(t))
    return root


@pytest.mark.parametrize("value", HOSTILE, ids=[repr(v)[:30] for v in HOSTILE])
def test_verify_manifest_refuses_paths_out_of_the_corpus(corpus: Path, tmp_path: Path,
                                                         value: object) -> None:
    from fixturegen.verify.manifest_check import ManifestError, check_manifest

    root = _hostile_corpus(corpus, tmp_path, "chain", value)
    if not isinstance(value, str):  # not a path at all: the schema refuses the whole file
        with pytest.raises(ManifestError, match=r"fixtures\[0\]\.chain\[0\]: .* not of type"):
            check_manifest(root / "manifest.json")
        return
    problems, _ = check_manifest(root / "manifest.json")
    first = json.loads((root / "manifest.json").read_text())["fixtures"][0]["id"]
    assert [(p.id, p.what) for p in problems] == [(first, "file")]


@pytest.mark.parametrize("value", HOSTILE[:5], ids=[repr(v)[:30] for v in HOSTILE[:5]])
def test_verify_transcripts_refuses_paths_out_of_the_corpus(corpus: Path, tmp_path: Path,
                                                            value: object) -> None:
    from fixturegen.verify.transcript import check_transcripts

    root = _hostile_corpus(corpus, tmp_path, "certificate_path", value)
    problems, _ = check_transcripts(root / "transcripts.json")
    assert problems and all(p.what == "file" for p in problems[:1])
    assert "corpus" in problems[0].got or "NUL" in problems[0].got


@pytest.mark.parametrize("field", ["chain", "certificate_key_path"])
@pytest.mark.parametrize("value", HOSTILE[:5], ids=[repr(v)[:30] for v in HOSTILE[:5]])
def test_the_harness_refuses_paths_out_of_the_corpus(corpus: Path, tmp_path: Path,
                                                     field: str, value: object) -> None:
    from fixturegen.harness.requests import CorpusError, load_corpus

    root = _hostile_corpus(corpus, tmp_path, field, value)
    with pytest.raises(CorpusError, match=r"corpus|NUL"):
        load_corpus(root)


def test_a_corpus_without_its_keys_still_loads(corpus: Path, tmp_path: Path) -> None:
    from fixturegen.harness.requests import load_corpus

    root = tmp_path / "c"
    shutil.copytree(corpus, root)
    shutil.rmtree(root / "keys")
    cases = load_corpus(root, transcripts=False).cases
    assert cases and all(c.request.certificate_key is None for c in cases)


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", ["../../../x", "a/b", ".hidden", "x" * 65, "a b"],
                         ids=["dotdot", "slash", "dot", "long", "space"])
def test_harness_run_refuses_a_name_that_is_not_a_file_name(corpus: Path, tmp_path: Path,
                                                           name: str) -> None:
    run = _harness("--corpus", str(corpus), "--out", str(tmp_path / "r"), "--name", name,
                   "--", sys.executable, "-c", "pass")
    assert run.returncode == 2 and "--name" in run.stderr and run.stderr.count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_harness_reports_are_never_written_through_a_symlink(corpus: Path,
                                                             tmp_path: Path) -> None:
    root = tmp_path / "c"
    shutil.copytree(corpus, root, ignore=shutil.ignore_patterns("conformance"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, root / "conformance")
    run = _harness("--corpus", str(root), "--", sys.executable, "-c", "pass")
    assert run.returncode == 2 and "symbolic link" in run.stderr
    assert list(elsewhere.iterdir()) == []


def test_jobs_are_capped_by_the_work(tmp_path: Path) -> None:
    from fixturegen.output.writer import render_all, select

    cases = select("matrix.ed25519.*")
    assert len(cases) < 16
    calls: list[int] = []
    import concurrent.futures

    original = concurrent.futures.ProcessPoolExecutor.__init__

    def spy(self: object, max_workers: int | None = None, **kw: object) -> None:
        calls.append(max_workers or 0)
        original(self, max_workers=max_workers, **kw)  # type: ignore[arg-type]

    concurrent.futures.ProcessPoolExecutor.__init__ = spy  # type: ignore[method-assign]
    try:
        rendered = render_all(cases, b"seed", workers=1000)
    finally:
        concurrent.futures.ProcessPoolExecutor.__init__ = original  # type: ignore[method-assign]
    assert len(rendered) == len(cases)
    assert all(n <= len(cases) // 4 + 1 for n in calls)


def test_a_failed_write_keeps_the_reports_and_the_next_run_recovers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fails while the corpus is swapped in (the rename of the new folder into
    place): an error, the old corpus put back whole with the harness reports, no temporary
    folder left, and the next run installs the whole corpus."""
    from fixturegen import owned
    from fixturegen.output import writer

    out = tmp_path / "out"
    writer.generate(out, only="matrix.ed25519.ed25519.*", workers=1)
    (out / "conformance").mkdir()
    (out / "conformance" / "results.json").write_text("{}")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = owned.os.replace
    calls: list[object] = []

    def replace(src: object, dst: object) -> None:
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(owned.os, "replace", replace)
    with pytest.raises(writer.OutputError, match="No space left"):
        writer.generate(out, only="matrix.ed25519.*", workers=1)
    monkeypatch.undo()
    # The staged marker, the old corpus renamed away, the new one (refused), the old one back.
    assert len(calls) == 4 and calls[2] == out and calls[3] == out
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not [p for p in out.rglob("*") if ".tmp-" in p.name]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out"]
    again = writer.generate(out, only="matrix.ed25519.*", workers=1)
    listed = json.loads((out / ".fixturegen-owner.json").read_text())["files"]
    assert {f.path for f in again.fixtures} <= set(listed)
    assert all((out / f).is_file() for f in listed)
    assert (out / "conformance" / "results.json").read_text() == "{}"  # carried over


# -- file modes, odd --out values ----------------------------------------------------------------


def test_fresh_fixed_keys_are_0600_and_the_corpus_is_shareable(tmp_path: Path) -> None:
    from fixturegen.cli import main
    from fixturegen.output import writer

    keys = tmp_path / "keys"
    assert main(["keys", "generate", "--dir", str(keys), "--only", "ed25519"]) == 0
    (keys / "ed25519.pem").chmod(0o644)
    assert main(["keys", "generate", "--dir", str(keys), "--only", "ed25519", "--only",
                 "p256", "--force"]) == 0
    assert {p.name: p.stat().st_mode & 0o777 for p in keys.glob("*.pem")} == {
        "ed25519.pem": 0o600, "p256.pem": 0o600}
    # The corpus, written under the usual umask (022), is readable by others, keys included.
    corpus = tmp_path / "out"
    old = os.umask(0o022)
    try:
        writer.generate(corpus, only="matrix.ed25519.*", workers=1)
    finally:
        os.umask(old)
    assert corpus.stat().st_mode & 0o777 == 0o755
    modes = {p.stat().st_mode & 0o777 for p in (corpus / "keys").iterdir()}
    assert modes == {0o644}


@pytest.mark.slow
def test_harness_reports_go_only_to_a_reports_folder(corpus: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine\n")
    p = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--corpus",
                        str(corpus), "--out", str(home), "--", "/bin/false"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "did not write (notes.txt)" in p.stderr
    assert sorted(x.name for x in home.iterdir()) == ["notes.txt"]
    reports = tmp_path / "reports"
    p = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--corpus",
                        str(corpus), "--out", str(reports), "--no-transcripts", "--",
                        "/bin/false"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 3  # the adapter answered nothing: broken, but the reports exist
    assert {x.stat().st_mode & 0o777 for x in reports.iterdir() if x.suffix != ".log"} == {0o644}
    # A folder an earlier run wrote (its marker) is a reports folder: re-rendered in place.
    p = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "report",
                        str(reports / "results.json")], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    # Beside a results file named otherwise, in a folder of other things: refused.
    (tmp_path / "elsewhere.json").write_bytes((reports / "results.json").read_bytes())
    p = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "report",
                        str(tmp_path / "elsewhere.json")], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and "did not write" in p.stderr


@pytest.mark.parametrize("command", ["generate", "harness"])
def test_an_out_path_too_long_for_the_file_system(corpus: Path, tmp_path: Path,
                                                  command: str) -> None:
    out = str(tmp_path / ("a" * 300))
    args = (["generate", "--out", out, "--only", "matrix.ed25519.ed25519.*"]
            if command == "generate" else
            ["harness", "run", "--corpus", str(corpus), "--out", out, "--", "/bin/false"])
    p = subprocess.run([sys.executable, "-m", "fixturegen", *args], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 2
    assert "File name too long" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert sorted(x.name for x in tmp_path.iterdir()) == []
