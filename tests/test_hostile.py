"""Hostile inputs, third round (issue 41): each test is named for the attack it makes.

A campaign folder read back on a resume, a --source tree with links, an import --out inside its
own input, an interrupt during the swap of a corpus, two import ids that write one file, PEM
with text before it, forged shard reports, a file name that is not UTF-8. Each attack gets one
line on stderr and a documented exit code (or is handled), never a traceback, never a file
written outside what the command owns, never a corpus of two runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fixturegen.builds.cache import cache_root
from fixturegen.mutation.campaign import Campaign, CampaignError, copy_confined
from fixturegen.mutation.model import Mutant, MutantResult, MutationFile, count
from fixturegen.mutation.report import MergeError, dumps, merge
from fixturegen.mutation.spans import apply
from fixturegen.owned import NotOwned, recover
from tests.signals import default_signals
from tests.test_mutation import FILE, TESTS, campaign

ROOT = Path(__file__).resolve().parents[1]
ONLY = "matrix.ed25519.*"


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def _one_line(run: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert run.returncode == code, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, \
        run.stderr
    return run.stderr


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small corpus (the Ed25519 matrix), generated once."""
    from fixturegen.output.writer import generate

    out = tmp_path_factory.mktemp("small") / "out"
    generate(out, only=ONLY, workers=1)
    return out


def _valid(corpus: Path, n: int) -> list[bytes]:
    manifest = json.loads((corpus / "manifest.json").read_text())
    paths = [f["path"] for f in manifest["fixtures"] if f["expected"]["result"] == "valid"]
    return [(corpus / p).read_bytes() for p in paths[:n]]


def _pem(der: bytes) -> bytes:
    body = base64.encodebytes(der).decode().replace("\n", "")
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return ("-----BEGIN CERTIFICATE-----\n" + "\n".join(lines)
            + "\n-----END CERTIFICATE-----\n").encode()


# -- 1. a campaign folder read back on a resume ----------------------------------------------


def _campaign(adapters: Path, corpus: Path, out: Path, tmp_path: Path, *,
              source: Path | None = None, only: tuple[str, ...] = (),
              limit: int | None = None) -> Campaign:
    return campaign(adapters, corpus, out, cache_root(tmp_path / "cache"), only=only,
                    limit=limit, upstream=False, source=source)


def _listed(adapters: Path, corpus: Path, out: Path, tmp_path: Path) -> Path:
    """A campaign folder with its mutants listed and nothing run (a --mutant it does not
    list stops it right after the listing): its mutants.jsonl."""
    with pytest.raises(CampaignError, match="no mutant 'nonesuch'"):
        _campaign(adapters, corpus, out, tmp_path, only=("nonesuch",)).run()
    listing = out / "mutants.jsonl"
    assert listing.is_file()
    return listing


@pytest.mark.parametrize("where", ["absolute", "dotdot"])
def test_a_resumed_campaign_whose_mutant_names_a_file_outside_the_tree_is_refused(
        small: Path, adapters: Path, tmp_path: Path, where: str) -> None:
    out = tmp_path / "m"
    listing = _listed(adapters, small, out, tmp_path)
    victim = tmp_path / "victim.py"
    shutil.copy(adapters / "mutable" / "impl" / FILE, victim)
    before = victim.read_bytes()
    forged = os.path.relpath(victim, out / "work" / "pristine") if where == "dotdot" \
        else str(victim)
    assert (where == "dotdot") == forged.startswith("..")
    lines = listing.read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "file": forged})
    listing.write_text("\n".join(lines) + "\n")
    with pytest.raises(CampaignError, match="not inside the source tree"):
        _campaign(adapters, small, out, tmp_path).run()
    assert victim.read_bytes() == before
    assert not (out / "results").exists()  # refused before anything ran


@pytest.mark.parametrize("planted", ["work/tree", "work/pristine", "results"])
def test_a_resumed_campaign_with_a_link_planted_in_its_folder_is_refused(
        small: Path, adapters: Path, tmp_path: Path, planted: str) -> None:
    out = tmp_path / "m"
    _listed(adapters, small, out, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(adapters / "mutable" / "impl", elsewhere)
    before = _tree(elsewhere)
    if (out / planted).exists():
        shutil.rmtree(out / planted)
    (out / planted).symlink_to(elsewhere)
    with pytest.raises(CampaignError, match="is a link or not a folder"):
        _campaign(adapters, small, out, tmp_path).run()
    assert _tree(elsewhere) == before


def test_a_truncated_mutants_file_is_one_line_not_a_traceback(
        small: Path, adapters: Path, tmp_path: Path) -> None:
    out = tmp_path / "m"
    listing = _listed(adapters, small, out, tmp_path)
    text = listing.read_text()
    listing.write_text(text[: len(text) // 2])  # cut inside a line
    with pytest.raises(CampaignError, match=r"mutants.jsonl: line \d+ is not a mutant") as e:
        _campaign(adapters, small, out, tmp_path).run()
    assert "\n" not in str(e.value)


def test_a_truncated_or_foreign_result_on_resume_is_one_line_not_a_traceback(
        small: Path, adapters: Path, tmp_path: Path) -> None:
    out = tmp_path / "m"
    first = _campaign(adapters, small, out, tmp_path, limit=2).run()
    assert len(first.mutants) == 2
    one, two = sorted((out / "results").glob("*.json"))
    good = one.read_bytes()
    one.write_bytes(good[: len(good) // 2])
    with pytest.raises(CampaignError, match="not a mutant's result") as e:
        _campaign(adapters, small, out, tmp_path, limit=2).run()
    assert "\n" not in str(e.value)
    one.write_bytes(two.read_bytes())  # another mutant's (whole) result under this name
    with pytest.raises(CampaignError, match="the result of another mutant"):
        _campaign(adapters, small, out, tmp_path, limit=2).run()


# -- 2. a --source tree with links -----------------------------------------------------------


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(TESTS / "adapters" / "mutable" / "impl", src)
    return src


def test_a_source_link_leaving_the_tree_is_refused_and_its_target_untouched(
        small: Path, adapters: Path, tmp_path: Path) -> None:
    src = _source(tmp_path)
    victim = tmp_path / "victim.py"
    (src / FILE).rename(victim)
    (src / FILE).symlink_to(victim)
    before = victim.read_bytes()
    with pytest.raises(CampaignError, match="a link that leaves the source tree"):
        _campaign(adapters, small, tmp_path / "m", tmp_path, source=src).run()
    assert victim.read_bytes() == before
    assert not (tmp_path / "m" / "work" / "tree").exists()


def test_a_source_link_inside_the_tree_is_copied_as_a_file(tmp_path: Path) -> None:
    src = _source(tmp_path)
    real = src / "testimpl" / "real_verify.py"
    (src / FILE).rename(real)
    (src / FILE).symlink_to("real_verify.py")
    (src / "lib").symlink_to("testimpl")  # a folder link inside: a copy of the folder
    (src / "testimpl" / "loop").symlink_to("..")  # a loop: refused, never followed forever
    with pytest.raises(CampaignError, match="loops"):
        copy_confined(src, tmp_path / "copy")
    (src / "testimpl" / "loop").unlink()
    copy_confined(src, tmp_path / "copy")
    copied = tmp_path / "copy" / FILE
    assert not copied.is_symlink() and copied.read_bytes() == real.read_bytes()
    assert not (tmp_path / "copy" / "lib").is_symlink()
    assert (tmp_path / "copy" / "lib" / "verify.py").read_bytes() == real.read_bytes()
    assert not [p for p in (tmp_path / "copy").rglob("*") if p.is_symlink()]


def test_a_mutant_is_never_written_through_a_link_in_the_scratch_tree(tmp_path: Path) -> None:
    pristine = _source(tmp_path)
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    victim = tmp_path / "victim.py"
    victim.write_bytes((pristine / FILE).read_bytes())
    (tree / FILE).unlink()
    (tree / FILE).symlink_to(victim)
    text = (pristine / FILE).read_text()
    line = next(n for n, t in enumerate(text.splitlines(), 1) if ".startswith(" in t)
    column = text.splitlines()[line - 1].index(".startswith(") + 1
    mutant = Mutant(id="m", file=FILE, line=line, function=None, operator="x",
                    start=(line, column), end=(line, column + 12), replacement=".endswith(")
    with pytest.raises(NotOwned, match="never written through"):
        apply(tree, pristine, mutant)
    assert victim.read_bytes() == (pristine / FILE).read_bytes()


# -- 3. import --out inside its own input ----------------------------------------------------


def test_import_out_inside_the_input_folder_is_refused(small: Path, tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    for i, der in enumerate(_valid(small, 2)):
        (certs / f"c{i}.der").write_bytes(der)
    before = _tree(certs)
    stderr = _one_line(_cli("import", str(certs), "--out", str(certs / "imported"),
                            "--at", "2026-12-05T00:00:00Z"))
    assert "inside the input folder" in stderr
    assert _tree(certs) == before and not (certs / "imported").exists()
    # An input inside --out (its own earlier output, given back): refused too.
    done = _cli("import", str(certs), "--out", str(tmp_path / "corpus"))
    assert done.returncode == 0, done.stderr
    kept = _tree(tmp_path / "corpus")
    stderr = _one_line(_cli("import", str(tmp_path / "corpus" / "certs"), "--out",
                            str(tmp_path / "corpus")))
    assert "inside --out" in stderr
    assert _tree(tmp_path / "corpus") == kept


# -- 4. a signal while a corpus is swapped in ------------------------------------------------

PAUSED = """
import os, sys
from fixturegen import owned

def pause(stage):
    if stage == os.environ["PAUSE_AT"]:
        print("PAUSED " + stage, flush=True)
        sys.stdin.readline()

owned.pause = pause
sys.argv = ["fixturegen", *sys.argv[1:]]
from fixturegen.__main__ import run
run()
"""


def _paused(stage: str, *args: str) -> subprocess.Popen[str]:
    """fixturegen ``args``, stopped at ``stage`` of the swap (fixturegen.owned.pause) until a
    line comes on its stdin: the signal is sent while the run is known to be there."""
    proc = subprocess.Popen([sys.executable, "-c", PAUSED, *args], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=default_signals,
                            env={**os.environ, "PAUSE_AT": stage})
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("PAUSED"):
            assert line.strip() == f"PAUSED {stage}"
            return proc
    raise AssertionError(f"never paused at {stage}: {proc.communicate()}")


def _generated(tmp_path: Path, seed: str) -> dict[str, bytes]:
    """The bytes of a corpus of ``seed`` (reproducible: what any run of it writes)."""
    where = tmp_path / f"reference-{seed}"
    assert _cli("generate", "--out", str(where), "--only", ONLY, "--seed", seed,
                "--jobs", "1").returncode == 0
    return _tree(where)


def _wholly(out: Path, runs: list[dict[str, bytes]]) -> int:
    """Which of ``runs`` the folder is, byte for byte (the marker aside), checked by verify."""
    tree = {k: v for k, v in _tree(out).items() if k != ".fixturegen-owner.json"}
    matches = [i for i, run in enumerate(runs)
               if tree == {k: v for k, v in run.items() if k != ".fixturegen-owner.json"}]
    assert len(matches) == 1, "the folder is neither run's corpus"
    check = _cli("verify", "--manifest", str(out / "manifest.json"))
    assert check.returncode == 0, check.stdout + check.stderr
    return matches[0]


@pytest.mark.slow
@pytest.mark.parametrize(("stage", "name", "code", "which"), [
    ("staged", "SIGINT", 130, 0),     # before the swap: the run stops, the old corpus stays
    ("swapping", "SIGTERM", 143, 1),  # mid-swap: held until the new corpus is in, then stops
    ("swapping", "SIGINT", 130, 1)])
def test_a_signal_during_the_swap_of_a_corpus_leaves_it_wholly_old_or_new(
        tmp_path: Path, stage: str, name: str, code: int, which: int) -> None:
    old, new = _generated(tmp_path, "old"), _generated(tmp_path, "new")
    assert old["manifest.json"] != new["manifest.json"]
    out = tmp_path / "out"
    assert _cli("generate", "--out", str(out), "--only", ONLY, "--seed", "old",
                "--jobs", "1").returncode == 0
    proc = _paused(stage, "generate", "--out", str(out), "--only", ONLY, "--seed", "new",
                   "--jobs", "1")
    if stage == "swapping":  # the old corpus is renamed away, the new one not yet in
        assert not out.exists() and list(tmp_path.glob(".out.old-*"))
    proc.send_signal(getattr(signal, name))
    _, stderr = proc.communicate("go\n", timeout=120)
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    assert _wholly(out, [old, new]) == which
    assert not list(tmp_path.glob(".out.*"))


def test_a_run_killed_mid_swap_is_recovered_by_the_next(tmp_path: Path, small: Path) -> None:
    """SIGKILL cannot be held: killed between the renames, the old corpus waits beside the
    folder, and the next run (any run of generate or import) puts it back first."""
    certs = tmp_path / "certs"
    certs.mkdir()
    for i, der in enumerate(_valid(small, 3)):
        (certs / f"c{i}.der").write_bytes(der)
    out = tmp_path / "imported"
    assert _cli("import", str(certs / "c0.der"), "--out", str(out)).returncode == 0
    old = _tree(out)
    proc = _paused("swapping", "import", str(certs), "--out", str(out))
    proc.kill()
    proc.communicate(timeout=60)
    assert not out.exists()
    recover(out)
    assert _tree(out) == old
    assert not list(tmp_path.glob(".imported.*"))


def test_a_whole_replace_keeps_the_users_files_and_refuses_what_it_cannot_carry(
        tmp_path: Path) -> None:
    """The swap replaces the folder, not only the command's files: the user's file, link and
    empty folder inside come along (linked before the swap); a FIFO cannot, and is refused
    with nothing changed."""
    from fixturegen.owned import replace

    out = tmp_path / "out"
    replace(out, "cmd", [("a", b"1"), ("d/b", b"2")])
    (out / "d" / "mine.txt").write_text("mine")
    (out / "link").symlink_to("d/mine.txt")
    (out / "empty").mkdir()
    replace(out, "cmd", [("a", b"new")])
    assert (out / "a").read_bytes() == b"new" and not (out / "d" / "b").exists()
    assert (out / "d" / "mine.txt").read_text() == "mine"
    assert os.readlink(out / "link") == "d/mine.txt" and (out / "empty").is_dir()
    os.mkfifo(out / "fifo")
    before = _tree(out)
    with pytest.raises(NotOwned, match="FIFO"):
        replace(out, "cmd", [("a", b"newer")])
    assert _tree(out) == before and (out / "fifo").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# -- 5. two import ids that write one file ---------------------------------------------------


def test_two_sidecar_ids_writing_one_file_are_refused(small: Path, tmp_path: Path) -> None:
    a, b, c = _valid(small, 3)
    src = tmp_path / "src"
    src.mkdir()
    (src / "chain.pem").write_bytes(_pem(a) + _pem(b))  # id x: certs/x.der, certs/x.2.der
    (src / "chain.json").write_text(json.dumps({"id": "x"}))
    (src / "other.der").write_bytes(c)  # id x.2: certs/x.2.der
    (src / "other.json").write_text(json.dumps({"id": "x.2"}))
    stderr = _one_line(_cli("import", str(src), "--out", str(tmp_path / "out")))
    assert "certs/x.2.der" in stderr and not (tmp_path / "out").exists()


def test_a_derived_id_that_would_write_a_taken_file_is_named_apart(small: Path,
                                                                   tmp_path: Path) -> None:
    """A derived id (no sidecar) never holds a dot, but a sidecar's may: ``0.der`` says it is
    ``imported.a.2``, then ``a.pem``'s chain (``imported.a``) would write that file too; the
    derived one is named apart, the same way every run."""
    a, b, c = _valid(small, 3)
    src = tmp_path / "src"
    src.mkdir()
    (src / "0.der").write_bytes(c)  # read first (sorted)
    (src / "0.json").write_text(json.dumps({"id": "imported.a.2"}))
    (src / "a.pem").write_bytes(_pem(a) + _pem(b))
    run = _cli("import", str(src), "--out", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    chains = {f["id"]: [(tmp_path / "out" / p).read_bytes() for p in f["chain"]]
              for f in manifest["fixtures"]}
    assert chains == {"imported.a.2": [c], "imported.a-2": [a, b]}
    for f in manifest["fixtures"]:
        assert hashlib.sha256((tmp_path / "out" / f["path"]).read_bytes()).hexdigest() \
            == f["sha256"]


# -- 6. PEM with text before it ----------------------------------------------------------------


@pytest.mark.parametrize("before", [
    b"Certificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number: 01\n",
    b"Bag Attributes\n    localKeyID: 01 00 00 00\nsubject=CN = x\n\nissuer=CN = x\n\n",
    b"\xef\xbb\xbf",  # a UTF-8 byte order mark
    b"0 s:CN = a line that opens like DER\n"])
def test_pem_with_text_before_its_begin_line_is_read_as_pem(
        small: Path, tmp_path: Path, before: bytes) -> None:
    (der,) = _valid(small, 1)
    src = tmp_path / "src"
    src.mkdir()
    (src / "text.pem").write_bytes(before + _pem(der))
    run = _cli("import", str(src), "--out", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    (fixture,) = json.loads((tmp_path / "out" / "manifest.json").read_text())["fixtures"]
    assert fixture["expected"]["result"] == "valid"
    assert (tmp_path / "out" / fixture["path"]).read_bytes() == der
    # verify reads it the same way (one reader of certificate files).
    checked = _cli("verify", str(src / "text.pem"))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_file_neither_pem_nor_der_is_an_error_not_an_invalid_fixture(
        small: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "notes.crt").write_text("Certificate: see the attached file\n")
    stderr = _one_line(_cli("import", str(src), "--out", str(tmp_path / "out")))
    assert "neither PEM" in stderr and not (tmp_path / "out").exists()
    # DER that merely holds the BEGIN text inside stays DER (a broken one: an invalid fixture).
    broken = b"\x30\x25" + b"-----BEGIN CERTIFICATE-----" + b"\x00" * 10  # spans the file
    (src / "notes.crt").write_bytes(broken)
    run = _cli("import", str(src), "--out", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    (fixture,) = json.loads((tmp_path / "out" / "manifest.json").read_text())["fixtures"]
    assert fixture["expected"]["result"] == "invalid"


# -- 7. forged shard reports -------------------------------------------------------------------


def _mutant(number: int) -> MutantResult:
    m = Mutant(id=f"f.py:{number}:1:op", file="f.py", line=number, function=None,
               operator="op", start=(number, 1), end=(number, 2), replacement="x")
    return MutantResult(mutant=m, status="survived", category="survived", corpus=None,
                        upstream="not_run", note="", survivor="unreviewed", seconds=1.0)


def _report(shard: str | None, numbers: list[int], **changed: Any) -> MutationFile:
    results = [_mutant(n) for n in numbers]
    base: dict[str, Any] = dict(
        schema_version=1, generator="fixturegen 1", implementation="x", version="1",
        tool="t", scope=["f.py"], shard=shard, corpus="out", seed="s", mode="api",
        upstream="not run", counts=count(results, False), seconds_per_mutant={},
        mutants=results)
    return MutationFile(**{**base, **changed})


def _merge_cli(tmp_path: Path, parts: list[MutationFile]) -> subprocess.CompletedProcess[str]:
    names = []
    for i, part in enumerate(parts):
        path = tmp_path / f"part{i}.json"
        path.write_text(dumps(part))
        names.append(str(path))
    return _cli("mutate", "merge", *names, "--out", str(tmp_path / "joined"))


@pytest.mark.parametrize("shard", ["abc", "a/b", "0/0", "1/1", "-1/2", "0/999999999999",
                                   "0/1000000", "0/2/3", "٠/٢"])
def test_a_bad_shard_string_in_a_report_is_one_line(tmp_path: Path, shard: str) -> None:
    """Not K/N with 0 <= K < N <= 999999 (a huge N once grew a list of N names)."""
    with pytest.raises(MergeError, match="is not K/N"):
        merge([_report(shard, [1]), _report("1/2", [2])])
    stderr = _one_line(_merge_cli(tmp_path, [_report(shard, [1]), _report("1/2", [2])]))
    assert "is not K/N" in stderr and not (tmp_path / "joined").exists()


@pytest.mark.parametrize(("changed", "why"), [
    ({"corpus": "other-corpus"}, "differ in corpus"),
    ({"seed": "t"}, "differ in seed"),
    ({"version": "2"}, "differ in version"),
    ({"generator": "fixturegen 2"}, "differ in generator")])
def test_shards_of_different_campaigns_do_not_merge(tmp_path: Path, changed: dict[str, str],
                                                    why: str) -> None:
    stderr = _one_line(_merge_cli(tmp_path, [_report("0/2", [1]),
                                             _report("1/2", [2], **changed)]))
    assert why in stderr


@pytest.mark.slow
def test_shards_with_one_mutant_twice_or_one_shard_twice_do_not_merge(tmp_path: Path) -> None:
    stderr = _one_line(_merge_cli(tmp_path, [_report("0/2", [1, 2]), _report("1/2", [2])]))
    assert "in two shards" in stderr
    stderr = _one_line(_merge_cli(tmp_path, [_report("0/2", [1]), _report("0/2", [2])]))
    assert "given twice" in stderr
    stderr = _one_line(_merge_cli(tmp_path, [_report("0/900000", [1]),
                                             _report("2/900000", [2])]))
    assert "shard 1/900000 is missing (899998 of 900000 missing)" in stderr
    joined = merge([_report("1/2", [2]), _report("0/2", [1])])
    assert [r.mutant.id for r in joined.mutants] == ["f.py:1:1:op", "f.py:2:1:op"]


# -- 8. a file name that is not UTF-8 ------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file names are UTF-8 always")
def test_an_import_of_a_file_name_that_is_not_utf8_is_one_line(small: Path,
                                                                tmp_path: Path) -> None:
    (der,) = _valid(small, 1)
    src = tmp_path / "src"
    src.mkdir()
    (src / os.fsdecode(b"caf\xe9.der")).write_bytes(der)
    stderr = _one_line(_cli("import", str(src), "--out", str(tmp_path / "out")))
    assert "not valid UTF-8" in stderr
    assert not (tmp_path / "out").exists()


# -- text that reaches a terminal, Markdown or HTML ------------------------------------------

#: An implementation's error text with a terminal escape sequence, a carriage return, a DEL and
#: markup: what a hostile or broken adapter can print.
HOSTILE_TEXT = "bad \x1b[31mred\x1b[0m\roverwritten\x7f <b>bold</b> | `tick` # head"


@pytest.mark.slow
def test_control_characters_never_reach_a_terminal_a_report_or_a_page(corpus: Path,
                                                                     tmp_path: Path) -> None:
    """Every text an adapter prints reaches the terminal, summary.md, index.html and the
    findings with its control characters as visible escapes (no raw ESC, CR or DEL), its
    markup escaped; a --version that holds one is refused at input."""
    refuse = tmp_path / "refuse.py"
    refuse.write_text("import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n"
                      "    print(json.dumps({'id': r['id'], 'verdict': 'reject', 'peer_id': None,"
                      f" 'error': {HOSTILE_TEXT!r}}}), flush=True)\n")
    out = tmp_path / "r"
    run = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--corpus",
                          str(corpus), "--no-transcripts", "--no-interop", "--name", "hostile",
                          "--out", str(out), "--", sys.executable, str(refuse)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    findings = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "findings",
                               str(out), "--impl", "hostile", "--out", str(tmp_path / "f")],
                              capture_output=True, text=True, timeout=300)
    assert findings.returncode == 0, findings.stderr
    written = {p.name: p.read_text() for p in [out / "summary.md", out / "index.html",
                                              *(tmp_path / "f").glob("*.md")]}
    assert len(written) > 3
    for name, text in [*written.items(), ("stdout", run.stdout + findings.stdout),
                       ("stderr", run.stderr + findings.stderr)]:
        assert not any(c in text for c in "\x1b\r\x7f"), name
    summary = written["summary.md"]
    assert r"\x1b[31mred\x1b[0m\x0doverwritten\x7f" in summary
    page = written["index.html"]
    assert "<b>bold" not in page and "&lt;b&gt;bold" in page and r"\x1b[31mred" in page
    bad = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--corpus",
                          str(corpus), "--name", "x", "--version", "1.0\x1b[2J", "--out",
                          str(tmp_path / "v"), "--", sys.executable, str(refuse)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--version" in bad.stderr and "\x1b" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not (tmp_path / "v").exists()


def test_a_source_tree_that_is_the_filesystems_root_is_refused_in_one_line(
        tmp_path: Path) -> None:
    """``harness build --source`` on a link to / used to hash the whole filesystem and block
    reading /proc/kmsg: the root is refused at once, and a tree's walk never crosses into
    another filesystem (here /proc, a mount point of its own)."""
    from fixturegen.builds.cache import _same_device

    link = tmp_path / "checkout"
    link.symlink_to("/")
    run = _cli("harness", "build", "--impl", "go-libp2p", "--source", str(link),
               "--cache", str(tmp_path / "cache"))
    assert "root is not a source tree" in _one_line(run)
    assert not (tmp_path / "cache" / "builds").exists()
    if Path("/proc/self").exists():
        assert not _same_device(Path("/proc"), Path("/").stat().st_dev)
    assert _same_device(tmp_path / "checkout", tmp_path.stat().st_dev)


def test_a_source_trees_hash_sees_linked_files_and_source_folders_named_like_outputs(
        tmp_path: Path) -> None:
    """The build cache keys a source tree by its content: an edit behind a link to a file, or
    in a source folder that happens to be named ``target`` or ``.venv``, is a new tree (it used
    to reuse the stale build); cargo's and venv's own outputs (marked by CACHEDIR.TAG and
    pyvenv.cfg) stay out; a link to a folder outside the tree is refused in one line."""
    from fixturegen.builds.cache import CacheError, tree_hash

    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "src" / "target").mkdir(parents=True)
    outside.mkdir()
    (outside / "shared.rs").write_text("fn a() {}\n")
    (tree / "src" / "shared.rs").symlink_to(outside / "shared.rs")
    (tree / "src" / "target" / "mod.rs").write_text("pub mod x;\n")
    before = tree_hash(tree)
    (outside / "shared.rs").write_text("fn b() {}\n")
    after_link = tree_hash(tree)
    assert after_link != before
    (tree / "src" / "target" / "mod.rs").write_text("pub mod y;\n")
    after_source = tree_hash(tree)
    assert after_source != after_link
    # Build outputs: changing them changes nothing.
    (tree / "target").mkdir()
    (tree / "target" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    (tree / "target" / "debug.o").write_bytes(b"\x7fELF")
    (tree / ".venv").mkdir()
    (tree / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tree / "node_modules").mkdir()
    (tree / "node_modules" / "x.js").write_text("1\n")
    assert tree_hash(tree) == after_source
    (tree / "vendor").symlink_to(outside)
    with pytest.raises(CacheError, match="a folder outside the source tree"):
        tree_hash(tree)


# -- 9. a case id or a name that would write a line of its own into a known list --------------

ACCEPT_ALL = """import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps({'id': r['id'], 'verdict': 'accept', 'peer_id': None, 'error': None}),
          flush=True)
"""


@pytest.mark.slow
def test_a_case_id_with_a_line_break_never_reaches_a_known_list(small: Path,
                                                                 tmp_path: Path) -> None:
    """An id ending in a line of its own (``NAME CASE OUTCOME``) would be copied into
    known-divergences.txt, where --known would read it as an accepted divergence."""
    corpus = tmp_path / "corpus"
    shutil.copytree(small, corpus)
    manifest = json.loads((corpus / "manifest.json").read_text())
    manifest["fixtures"][0]["id"] += "\nrust-libp2p valid.hidden false_accept"
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    adapter = tmp_path / "accept.py"
    adapter.write_text(ACCEPT_ALL)
    out = tmp_path / "out"
    run = _cli("harness", "run", "--corpus", str(corpus), "--out", str(out), "--no-transcripts",
               "--no-interop", "--name", "acc", "--", sys.executable, str(adapter))
    assert "is not a fixturegen manifest: fixtures[0].id:" in _one_line(run)
    assert not out.exists()
    assert "is not a fixturegen manifest" in _one_line(_cli(
        "verify", "--manifest", str(corpus / "manifest.json")), 2)
    # The same id, or such a name, in a results file read back by report, findings or diff.
    good = tmp_path / "good"
    manifest["fixtures"][0]["id"] = manifest["fixtures"][0]["id"].split("\n")[0]
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    run = _cli("harness", "run", "--corpus", str(corpus), "--out", str(good),
               "--no-transcripts", "--no-interop", "--name", "acc", "--", sys.executable,
               str(adapter))
    assert run.returncode in (0, 1), run.stderr  # 1: a divergence
    results = json.loads((good / "results.json").read_text())
    for field, value in (("id", "x\nacc valid.hidden false_accept"), ("name", "acc\nx")):
        forged = json.loads(json.dumps(results))
        if field == "id":
            forged["implementations"][0]["cases"][0]["id"] = value
        else:
            forged["implementations"][0]["name"] = value
        path = tmp_path / f"forged-{field}.json"
        path.write_text(json.dumps(forged))
        for args in (("report", str(path), "--out", str(tmp_path / f"r-{field}")),
                     ("diff", str(good / "results.json"), str(path))):
            said = _one_line(_cli("harness", *args))
            assert "is not a results file" in said and "\\n" in said
        assert not (tmp_path / f"r-{field}").exists()


# -- 10. the fourth sweep: owned folders, bounded manifests, forged reports, versions, XML -------


@pytest.mark.slow
def test_a_link_inside_an_owned_folder_never_leads_its_cleanup_outside(tmp_path: Path,
                                                                        small: Path) -> None:
    """A forged marker names a file under a folder that is a link out of --out: the cleanup of
    files an earlier run wrote (``owned.publish``) must not follow it."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("x")
    out = tmp_path / "findings"
    out.mkdir()
    (out / "sub").symlink_to(victim)
    (out / ".fixturegen-owner.json").write_text(json.dumps(
        {"command": "harness findings", "files": ["findings.md", "sub/precious.txt"]}))
    _results(small, tmp_path)
    p = _cli("harness", "findings", str(tmp_path / "base" / "results.json"), "--impl", "acc",
             "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert (victim / "precious.txt").read_text() == "x"
    assert (out / "findings.md").is_file()


@pytest.mark.slow
def test_a_manifest_naming_one_big_file_many_times_is_refused_before_it_is_read(
        small: Path, tmp_path: Path) -> None:
    """A 14 KB manifest whose chain names a 1.9 MB file 300 times made verify and export hold
    hundreds of MB: a chain is at most 16 certificates, and a file a corpus names as a
    certificate is read once, at most 64 KiB."""
    corpus = tmp_path / "corpus"
    shutil.copytree(small, corpus)
    big = corpus / "certs" / "big.pem"
    big.write_bytes(_pem(os.urandom(1_400_000)))
    manifest = json.loads((corpus / "manifest.json").read_text())
    manifest["fixtures"][0]["chain"] = ["certs/big.pem"] * 300
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    for args in (("verify", "--manifest", str(corpus / "manifest.json")),
                 ("export", "--lang", "go", "--corpus", str(corpus))):
        assert "fixtures[0].chain" in _one_line(_cli(*args))
    manifest["fixtures"][0]["chain"] = ["certs/big.pem"]
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    said = _one_line(_cli("export", "--lang", "go", "--corpus", str(corpus)))
    assert "big.pem" in said and "limit 65536" in said


@pytest.mark.parametrize("version", ["1.0.0-²", "v0.5²", "1.0.0-①"])
def test_a_version_with_digits_that_are_not_ascii_is_one_line(version: str) -> None:
    said = _one_line(_cli("harness", "matrix", "--impl", "go-libp2p", "--versions", version,
                          "--dry-run"))
    assert "is not a version" in said
    assert "is not a version" in _one_line(_cli("harness", "build", "--impl",
                                                f"go-libp2p@{version}"))


def _results(corpus: Path, tmp_path: Path) -> dict[str, Any]:
    adapter = tmp_path / "accept.py"
    adapter.write_text(ACCEPT_ALL)
    run = tmp_path / "base"
    p = _cli("harness", "run", "--corpus", str(corpus), "--out", str(run), "--no-transcripts",
             "--no-interop", "--name", "acc", "--", sys.executable, str(adapter))
    assert p.returncode in (0, 1), p.stderr
    results: dict[str, Any] = json.loads((run / "results.json").read_text())
    return results


@pytest.mark.slow
def test_a_results_file_that_contradicts_itself_is_refused(small: Path, tmp_path: Path) -> None:
    """Counts that are not those of the cases (or missing: a KeyError once), and one case
    twice with two outcomes (diff said "no change" or a change depending on the order)."""
    results = _results(small, tmp_path)
    impl = results["implementations"][0]
    twice = json.loads(json.dumps(results))
    twice["implementations"][0]["cases"].append(dict(impl["cases"][0], outcome="false_accept"))
    no_counts = json.loads(json.dumps(results))
    no_counts["implementations"][0]["counts"] = {}
    for name, forged, said in (("twice", twice, "twice"),
                               ("counts", no_counts, "counts are not those of its cases")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(forged))
        for args in (("report", str(path), "--out", str(tmp_path / f"r-{name}")),
                     ("diff", str(tmp_path / "base" / "results.json"), str(path))):
            assert said in _one_line(_cli("harness", *args))
        assert not (tmp_path / f"r-{name}").exists()


def test_a_matrix_whose_range_is_not_a_pair_is_one_line(small: Path, tmp_path: Path) -> None:
    results = _results(small, tmp_path)
    run = {"version": "0.1.0", "released": None, "built": True, "reason": None,
           "build_seconds": 0, "run_seconds": 1, "transports": [], "notes": [],
           "entries": ["acc"], "counts": {}, "results": None}
    matrix = {"schema_version": 1, "generator": "g", "implementation": "acc", "package": "p",
              "corpus": "out", "seed": None, "mode": "api", "spec": "all", "versions": [run],
              "classes": [{"id": "x", "rule": "r", "outcome": "false_accept",
                           "importance": None, "cases": [], "versions": {},
                           "affected": ["0.1.0"], "introduced": "0.1.0", "fixed_in": None,
                           "ranges": [["0.1.0"]]}]}
    (tmp_path / "matrix.json").write_text(json.dumps(matrix))
    (tmp_path / "r.json").write_text(json.dumps(results))
    said = _one_line(_cli("harness", "findings", str(tmp_path / "r.json"), "--impl", "acc",
                          "--out", str(tmp_path / "f"), "--matrix", str(tmp_path / "matrix.json")))
    assert "ranges[0]" in said and "too short" in said


SKIP_WITH_CONTROLS = """import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps({'id': r['id'], 'verdict': 'skip', 'peer_id': None,
                      'error': 'not handled \\x01\\x1b[0m\\ufffe'}), flush=True)
"""


def test_junit_stays_well_formed_xml_whatever_an_adapter_says(small: Path,
                                                              tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    adapter = tmp_path / "skip.py"
    adapter.write_text(SKIP_WITH_CONTROLS)
    out = tmp_path / "out"
    p = _cli("harness", "run", "--corpus", str(small), "--out", str(out), "--no-transcripts",
             "--no-interop", "--name", "skipper", "--version", "1", "--", sys.executable,
             str(adapter))
    assert p.returncode == 0, p.stderr
    root = ET.parse(out / "junit.xml").getroot()
    messages = [s.get("message") for s in root.iter("skipped")]
    assert messages and all(m == "not handled \\x01\\x1b[0m\\ufffe" for m in messages)


def test_a_key_twice_in_a_json_object_is_refused_not_resolved(small: Path,
                                                              tmp_path: Path) -> None:
    """``{"result": "invalid", "result": "valid"}``: parsers differ on which copy wins."""
    cert = tmp_path / "in" / "a.der"
    cert.parent.mkdir()
    cert.write_bytes(_valid(small, 1)[0])
    (tmp_path / "in" / "a.json").write_text('{"result": "invalid", "result": "valid"}')
    said = _one_line(_cli("import", str(tmp_path / "in"), "--out", str(tmp_path / "out")))
    assert "the key 'result' twice in one object" in said and not (tmp_path / "out").exists()
    text = dumps(_report(None, [1])).replace('"mode": "api"', '"mode": "api", "mode": "api"', 1)
    assert text.count('"mode"') == 2
    (tmp_path / "m.json").write_text(text)
    said = _one_line(_cli("mutate", "merge", str(tmp_path / "m.json"), "--out",
                          str(tmp_path / "joined")))
    assert "the key 'mode' twice in one object" in said


@pytest.mark.parametrize("version", [-7, 0, 999])
def test_a_format_version_this_fixturegen_does_not_know_is_refused(small: Path, tmp_path: Path,
                                                                   version: int) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(small, corpus)
    manifest = json.loads((corpus / "manifest.json").read_text())
    manifest["schema_version"] = version
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    said = _one_line(_cli("verify", "--manifest", str(corpus / "manifest.json")))
    assert "schema_version" in said
    (tmp_path / "m.json").write_text(dumps(_report(None, [1], schema_version=1)).replace(
        '"schema_version": 1', f'"schema_version": {version}', 1))
    assert "schema_version" in _one_line(_cli("mutate", "merge", str(tmp_path / "m.json"),
                                              "--out", str(tmp_path / "joined")))


def test_a_seed_or_a_timing_key_is_text_in_markdown_not_markup(tmp_path: Path) -> None:
    seed = "`<img src=x onerror=alert(1)>`\x1b]0;t\x07\n# heading"
    out = tmp_path / "corpus"
    p = _cli("generate", "--out", str(out), "--only", "valid.extended-key-usage-any",
             "--seed", seed)
    assert p.returncode == 0, p.stderr
    readme = (out / "README.md").read_text()
    line = next(x for x in readme.splitlines() if "from seed" in x)
    assert "from seed `` `<img src=x onerror=alert(1)>`\\x1b]0;t\\x07 # heading `` (" in line
    assert "\n# heading" not in readme and "\x1b" not in readme
    report = _report(None, [1], seconds_per_mutant={"<img src=x>\x1b[2J": 1.0})
    (tmp_path / "m.json").write_text(dumps(report))
    p = _cli("mutate", "merge", str(tmp_path / "m.json"), "--out", str(tmp_path / "joined"))
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "joined" / "mutation.md").read_text()
    assert "\\<img src=x\\>\\\\x1b\\[2J 1.0" in text
    assert "<img" not in text.replace("\\<img", "") and "\x1b" not in text


def test_the_export_header_names_the_command_that_made_it(small: Path) -> None:
    p = _cli("export", "--lang", "go", "--corpus", str(small), "--only", "matrix.ed25519.*")
    assert p.returncode == 0, p.stderr
    assert "fixturegen export --lang go --only 'matrix.ed25519.*'" in p.stdout


def test_an_implementation_that_writes_megabytes_is_kept_readable(small: Path,
                                                                  tmp_path: Path) -> None:
    """A 24 MB error text once made a results.json of 72 MB that no command could read back:
    what an implementation said is kept up to 16384 characters."""
    adapter = tmp_path / "talk.py"
    adapter.write_text("import json, sys\n"
                       "for line in sys.stdin:\n"
                       "    r = json.loads(line)\n"
                       "    print(json.dumps({'id': r['id'], 'verdict': 'reject', 'peer_id': None,"
                       " 'error': '\\U0001F600' * 300_000}), flush=True)\n")
    out = tmp_path / "out"
    p = _cli("harness", "run", "--corpus", str(small), "--out", str(out), "--no-transcripts",
             "--no-interop", "--name", "talk", "--", sys.executable, str(adapter))
    assert p.returncode in (0, 1), p.stderr
    cases = json.loads((out / "results.json").read_text())["implementations"][0]["cases"]
    assert all(len(c["error"]) <= 16384 and c["error"].endswith("characters cut)")
               for c in cases)
    again = _cli("harness", "report", str(out / "results.json"), "--out", str(tmp_path / "r"))
    assert again.returncode in (0, 1), again.stderr


@pytest.mark.slow
def test_no_text_from_a_file_or_an_option_reaches_the_terminal_raw(small: Path,
                                                                   tmp_path: Path) -> None:
    """A version, a path, a PeerId given on the command line: every command's output goes
    through one stream filter (``fixturegen.cli._Visible``), whatever message carries it."""
    results = _results(small, tmp_path)
    forged = json.loads(json.dumps(results))
    forged["implementations"][0]["version"] = "1\x1b]0;pwned\x07\x1b[2J"
    (tmp_path / "v.json").write_text(json.dumps(forged))
    base = str(tmp_path / "base" / "results.json")
    cert = tmp_path / "a.der"
    cert.write_bytes(_valid(small, 1)[0])
    runs = [_cli("harness", "diff", base, str(tmp_path / "v.json")),
            _cli("harness", "report", str(tmp_path / "v.json"), "--out",
                 str(tmp_path / "out\x1b]0;x\x07")),
            _cli("verify", str(cert), "--expect-peer-id", "X\x1b]0;pwned\x07"),
            _cli("generate", "--out", str(tmp_path / "c\x1b[2J"), "--only",
                 "valid.extended-key-usage-any")]
    for n, run in enumerate(runs):
        text = run.stdout + run.stderr
        assert "\x1b" not in text and "\x07" not in text, text
        assert "\\x1b" in text or n == 3, text  # generate names its folder without it


@pytest.mark.slow
def test_a_fuzzed_adapter_that_dies_on_every_mutant_is_not_a_clean_run(tmp_path: Path) -> None:
    """``-- /bin/false`` exited 0 with "5 disagreements": an adapter that never gave a verdict
    was not compared, so the run exits 3 and says why."""
    run = _cli("fuzz", "--cases", "5", "--jobs", "1", "--out", str(tmp_path / "fz"), "--",
               "/bin/false")
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr
    assert "gave no verdict on any of 5 mutants (0 protocol errors, 5 crashes" in run.stderr
    assert (tmp_path / "fz" / "summary.md").is_file()  # the report says so too


def test_import_of_a_long_file_name_or_a_deep_folder_says_what_it_does(small: Path,
                                                                       tmp_path: Path) -> None:
    """A 251-character name once failed with "cannot write --out: File name too long" (the
    probe for its key file); a certificate 17 folders down was dropped in silence."""
    long = tmp_path / "long"
    long.mkdir()
    (long / ("a" * 251 + ".der")).write_bytes(_valid(small, 1)[0])
    run = _cli("import", str(long), "--out", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["fixtures"]) == 1
    deep = tmp_path / "deep"
    below = deep.joinpath(*[f"d{n}" for n in range(17)])
    below.mkdir(parents=True)
    (deep / "top.der").write_bytes(_valid(small, 2)[0])
    (below / "deep.der").write_bytes(_valid(small, 2)[1])
    said = _one_line(_cli("import", str(deep), "--out", str(tmp_path / "out2")))
    assert "nested deeper than 16" in said and not (tmp_path / "out2").exists()


def test_the_smaller_holes_of_the_fourth_sweep(small: Path, tmp_path: Path) -> None:
    """--versions ',,,' once meant every version; a sidecar integer of 5,000 digits gave
    Python's advice to raise a limit; a U+2028 in a known list broke its line in two and the
    error named the wrong line."""
    said = _one_line(_cli("harness", "matrix", "--impl", "go-libp2p", "--versions", ",,,",
                          "--dry-run"))
    assert "names no version" in said
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.der").write_bytes(_valid(small, 1)[0])
    (folder / "a.json").write_text('{"description": "x", "result": ' + "9" * 5000 + "}")
    said = _one_line(_cli("import", str(folder), "--out", str(tmp_path / "out")))
    assert "an integer of 5000 digits" in said and "set_int_max_str_digits" not in said
    results = _results(small, tmp_path)
    known = tmp_path / "known.txt"
    known.write_text("# first\nacc a.b\u2028c d e\n")
    (tmp_path / "r.json").write_text(json.dumps(results))
    said = _one_line(_cli("harness", "report", str(tmp_path / "r.json"), "--out",
                          str(tmp_path / "rep"), "--known", str(known)))
    assert "known.txt:2: expected" in said


def test_matrix_md_writes_registry_and_file_text_as_text() -> None:
    """A version is digits and then any text (what a registry publishes); the package, the
    seed and the generator come from the matrix file: none of it becomes Markdown."""
    from fixturegen.harness.matrix import MatrixFile
    from fixturegen.versions.render import matrix_markdown

    version = "1.0<img src=x onerror=alert(1)>|x"
    run = {"version": version, "released": "2026<b>", "built": False, "reason": "[a](b)",
           "build_seconds": None, "run_seconds": None, "transports": [], "notes": [],
           "entries": [], "counts": {}, "results": None}
    m = MatrixFile.model_validate({
        "schema_version": 1, "generator": "g <i>", "implementation": "impl", "package": "p|q",
        "corpus": "out", "seed": "s`x", "mode": "api", "spec": "all", "versions": [run],
        "classes": []})
    text = matrix_markdown(m)
    assert not re.search(r"(?<!\\)<", text)  # every < escaped
    row = next(line for line in text.splitlines() if line.startswith("| 1.0"))
    assert len(re.split(r"(?<!\\)\|", row)) == 11  # nine cells: no | broke out of one
    assert "1.0\\<img src=x onerror=alert(1)\\>\\|x" in text and "p\\|q" in text
    assert "(seed ``s`x``, catalogue" in text and "\\[a\\](b)" in text


@pytest.mark.parametrize("body", ["MIIB====", "MIIBAA=", "MI=IB", "MIIBA==="])
def test_base64_that_is_not_whole_quads_or_pads_past_two_is_refused(small: Path, tmp_path: Path,
                                                                    body: str) -> None:
    """``MIIB====`` once read as three bytes of a certificate."""
    lines = _pem(_valid(small, 1)[0]).decode().splitlines()
    text = "\n".join([lines[0], body, lines[-1]]) + "\n"
    path = tmp_path / "c.pem"
    path.write_text(text)
    run = _cli("verify", str(path))
    assert run.returncode == 1 and "a PEM block is not valid base64" in run.stdout, run
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "c.pem").write_text(text)
    said = _one_line(_cli("import", str(folder), "--out", str(tmp_path / "out")))
    assert "not valid base64" in said
