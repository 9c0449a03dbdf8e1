"""One ownership rule for every writer (fixturegen/owned.py): a command replaces or deletes only
what an earlier run of the same command wrote (its marker lists it), refuses anything else with
one line and exit 2, writes regular files only, refuses an empty path and the filesystem root,
and writes inside an output folder that is a mount point (never renaming it).

The helper is tested once here; then each writer that a folder holding a foreign file of a name
it writes is left as it was (mutate and matrix: tests/test_mutation.py, tests/test_versions.py;
findings: tests/test_findings.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixturegen.owned import MARKER, NotOwned, check, claim, owned_files, publish

ROOT = Path(__file__).resolve().parents[1]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# -- the helper -----------------------------------------------------------------------------------


def test_publish_writes_replaces_its_own_and_drops_what_it_no_longer_writes(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    publish(out, "cmd", [("a.txt", b"1"), ("sub/b.txt", b"2"), ("sub/c.txt", b"3")])
    assert _tree(out) == {"a.txt": b"1", "sub/b.txt": b"2", "sub/c.txt": b"3",
                          MARKER: (out / MARKER).read_bytes()}
    assert owned_files(out, "cmd") == ["a.txt", "sub/b.txt", "sub/c.txt"]
    (out / "mine.txt").write_text("the user's")  # a file of the user's inside: kept
    publish(out, "cmd", [("a.txt", b"new")])
    assert (out / "a.txt").read_bytes() == b"new"
    assert not (out / "sub").exists()  # its files went, and the folder they left empty
    assert (out / "mine.txt").read_text() == "the user's"
    assert owned_files(out, "cmd") == ["a.txt"]
    # keep: files the command wrote earlier and still owns without rewriting them.
    publish(out, "cmd", [("b.txt", b"b")])
    publish(out, "cmd", [("c.txt", b"c")], keep=["b.txt"])
    assert owned_files(out, "cmd") == ["b.txt", "c.txt"] and (out / "b.txt").exists()


def test_a_folder_of_someone_else_is_refused_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("theirs")
    before = _tree(out)
    with pytest.raises(NotOwned, match=r"did not write \(a.txt\)"):
        publish(out, "cmd", [("a.txt", b"mine"), ("b.txt", b"mine")])
    assert _tree(out) == before
    # Another command's output (its marker) is refused too, even for new names.
    publish(tmp_path / "other", "first", [("x", b"x")])
    with pytest.raises(NotOwned, match="another command's output"):
        publish(tmp_path / "other", "second", [("y", b"y")])
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == [MARKER, "x"]


def test_a_shared_folder_takes_new_files_but_never_replaces_a_foreign_one(
        tmp_path: Path) -> None:
    repo = tmp_path / "tests-data"
    repo.mkdir()
    (repo / "gen.sh").write_text("theirs")
    publish(repo, "profile", [("cert.der", b"1")], shared=True)
    assert (repo / "gen.sh").read_text() == "theirs" and (repo / "cert.der").exists()
    (repo / "key.pem").write_text("a committed key")
    before = _tree(repo)
    with pytest.raises(NotOwned, match="not a file an earlier run wrote"):
        publish(repo, "profile", [("cert.der", b"2"), ("key.pem", b"mine")], shared=True)
    assert _tree(repo) == before  # every target was checked before the first was written


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder", "device"])
def test_only_regular_files_are_written(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out"
    publish(out, "cmd", [("a", b"1"), ("b", b"1")])
    (out / "b").unlink()
    if kind == "fifo":
        os.mkfifo(out / "b")
    elif kind == "symlink":
        os.symlink(tmp_path / "elsewhere", out / "b")
    elif kind == "folder":
        (out / "b").mkdir()
    else:
        os.symlink("/dev/null", out / "b")  # a link to a device: lstat sees the link
    with pytest.raises(NotOwned, match="not a regular file"):
        publish(out, "cmd", [("a", b"2"), ("b", b"2")])
    assert (out / "a").read_bytes() == b"1"  # nothing written
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("path", ["/", "/dev/null", "fifo", "link"])
def test_the_root_a_device_a_fifo_and_a_link_are_never_an_output_folder(
        tmp_path: Path, path: str) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    target = Path(path) if path.startswith("/") else tmp_path / path
    with pytest.raises(NotOwned):
        publish(target, "cmd", [("a", b"1")])
    assert list((tmp_path / "real").iterdir()) == []
    with pytest.raises(NotOwned, match="root"):
        check(Path("/.."), "cmd")


def test_a_mount_point_is_written_inside_never_renamed(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A mount point cannot be renamed (EBUSY): the helper never renames or removes the output
    folder itself, so it behaves like one here whatever the machine allows."""
    out = tmp_path / "mnt"
    out.mkdir()
    real_replace, real_rename, real_rmdir = os.replace, os.rename, os.rmdir

    def guard(real):  # type: ignore[no-untyped-def]
        def call(src: object, *rest: object) -> object:
            for p in (src, *rest):
                if Path(str(p)) == out:
                    raise OSError(16, "Device or resource busy")
            return real(src, *rest)
        return call

    monkeypatch.setattr(os, "replace", guard(real_replace))
    monkeypatch.setattr(os, "rename", guard(real_rename))
    monkeypatch.setattr(os, "rmdir", guard(real_rmdir))
    publish(out, "cmd", [("a", b"1"), ("d/b", b"2")])
    publish(out, "cmd", [("c", b"3")])
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "c"]


def test_a_claim_marks_a_new_folder_and_the_marker_must_be_a_regular_file(
        tmp_path: Path) -> None:
    out = claim(tmp_path / "new" / "deeper", "cmd")
    assert json.loads((out / MARKER).read_text())["command"] == "cmd"
    odd = tmp_path / "odd"
    odd.mkdir()
    os.mkfifo(odd / MARKER)  # a marker that is not a file proves nothing (and is not read)
    with pytest.raises(NotOwned):
        claim(odd, "cmd")


# -- every writer from the command line ------------------------------------------------------------


def fixturegen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def _refused(run: subprocess.CompletedProcess[str]) -> None:
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def _foreign(folder: Path, name: str) -> dict[str, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("a file of the user's\n")
    return _tree(folder)


@pytest.mark.parametrize("name", ["manifest.json", "README.md"])
def test_generate_leaves_a_foreign_file_of_its_name(tmp_path: Path, name: str) -> None:
    before = _foreign(tmp_path / "out", name)
    _refused(fixturegen("generate", "--out", str(tmp_path / "out"), "--only",
                        "matrix.ed25519.ed25519.*"))
    assert _tree(tmp_path / "out") == before


@pytest.mark.slow
def test_profile_leaves_a_foreign_file_of_its_name(tmp_path: Path) -> None:
    done = fixturegen("profile", "rust-libp2p", "--out", str(tmp_path / "first"))
    assert done.returncode == 0, done.stderr
    names = sorted(owned_files(tmp_path / "first", "profile"))
    repo = tmp_path / "repo"
    before = _foreign(repo, names[0])
    (repo / "gen.sh").write_text("theirs")
    before = _tree(repo)
    _refused(fixturegen("profile", "rust-libp2p", "--out", str(repo)))
    assert _tree(repo) == before
    # Without the clash, the profile's files go in beside the repository's own.
    (repo / names[0]).unlink()
    assert fixturegen("profile", "rust-libp2p", "--out", str(repo)).returncode == 0
    assert (repo / "gen.sh").read_text() == "theirs"


@pytest.mark.slow
def test_export_leaves_a_foreign_file_at_its_path(corpus: Path, tmp_path: Path) -> None:
    target = tmp_path / "x_test.go"
    target.write_text("package mine\n")
    args = ["export", "--lang", "go", "--corpus", str(corpus), "--only",
            "matrix.ed25519.ed25519.*"]
    _refused(fixturegen(*args, "--out", str(target)))
    assert target.read_text() == "package mine\n"
    # An export's own file is replaced; a FIFO or a device never is.
    target.unlink()
    assert fixturegen(*args, "--out", str(target)).returncode == 0
    assert fixturegen(*args, "--out", str(target)).returncode == 0
    os.mkfifo(tmp_path / "fifo")
    _refused(fixturegen(*args, "--out", str(tmp_path / "fifo")))
    _refused(fixturegen(*args, "--out", "/dev/null"))


def test_fuzz_leaves_a_foreign_file_of_its_name(tmp_path: Path) -> None:
    before = _foreign(tmp_path / "f", "fuzz.json")
    _refused(fixturegen("fuzz", "--cases", "1", "--out", str(tmp_path / "f")))
    assert _tree(tmp_path / "f") == before


def test_harness_reports_leave_a_foreign_file_of_their_name(corpus: Path,
                                                            tmp_path: Path) -> None:
    before = _foreign(tmp_path / "r", "results.json")
    _refused(fixturegen("harness", "run", "--corpus", str(corpus), "--out",
                        str(tmp_path / "r"), "--", "/bin/false"))
    assert _tree(tmp_path / "r") == before
    # harness report beside a results.json someone put in a folder of theirs: refused too.
    _refused(fixturegen("harness", "report", str(tmp_path / "r" / "results.json")))
    assert _tree(tmp_path / "r") == before


@pytest.mark.slow
def test_keys_generate_leaves_a_foreign_readme(tmp_path: Path) -> None:
    before = _foreign(tmp_path / "k", "README.md")
    for force in ([], ["--force"]):
        _refused(fixturegen("keys", "generate", "--dir", str(tmp_path / "k"), "--only",
                            "ed25519", *force))
        assert _tree(tmp_path / "k") == before
    # Its own folder (the project's keys/ carries the marker): replaced with --force only.
    own = tmp_path / "own"
    assert fixturegen("keys", "generate", "--dir", str(own), "--only", "ed25519").returncode == 0
    _refused(fixturegen("keys", "generate", "--dir", str(own), "--only", "ed25519"))
    assert fixturegen("keys", "generate", "--dir", str(own), "--only", "ed25519", "--only",
                      "p256", "--force").returncode == 0
    assert sorted(owned_files(own, "keys generate")) == ["README.md", "ed25519.pem", "p256.pem"]
    assert json.loads((ROOT / "keys" / MARKER).read_text())["command"] == "keys generate"


@pytest.mark.parametrize("command", [
    ["generate", "--out"], ["profile", "rust-libp2p", "--out"],
    ["export", "--lang", "go", "--out"], ["fuzz", "--cases", "1", "--out"],
    ["keys", "generate", "--dir"], ["harness", "run", "--out"],
    ["harness", "findings", "results.json", "--impl", "x", "--out"],
    ["harness", "matrix", "--impl", "x", "--out"], ["mutate", "--impl", "x", "--out"],
    ["mutate", "merge", "m", "--out"]], ids=lambda c: "-".join(c[:2]))
def test_an_empty_output_path_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    """``--out ""`` is not the current folder (Path("") would be)."""
    (tmp_path / "mine.txt").write_text("mine")
    run = fixturegen(*command, "", cwd=tmp_path)
    _refused(run)
    assert "empty path" in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
