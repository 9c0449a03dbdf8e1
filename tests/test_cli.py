"""The command line, run as a user runs it: exit codes, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fixturegen.cases import CATALOGUE
from fixturegen.output.writer import CheckFailed, generate

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout


def test_verify_explains_an_accept_and_a_reject(corpus: Path,
                                                fixtures: dict[str, dict[str, Any]]) -> None:
    ok = corpus / fixtures["matrix.ed25519.ed25519.fixed"]["path"]
    bad = corpus / fixtures["invalid.extension-signature.other-host-key"]["path"]
    p = run("verify", str(ok))
    assert p.returncode == 0 and "ACCEPT" in p.stdout
    assert fixtures["matrix.ed25519.ed25519.fixed"]["expected"]["peer_id"] in p.stdout
    p = run("verify", str(ok), str(bad))
    assert p.returncode == 1
    assert "REJECT extension_signature_invalid" in p.stdout and "FAILED" in p.stdout


def test_verify_json_takes_thousands_of_paths(corpus: Path,
                                              fixtures: dict[str, dict[str, Any]]) -> None:
    paths = [str(corpus / f["path"]) for f in fixtures.values()]
    many = (paths * (3000 // len(paths) + 1))[:3000]
    p = run("verify", "--json", *many)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(lines) == 3000 and p.returncode == 1
    by_path = {x["path"]: x for x in lines}
    for f in fixtures.values():
        got = by_path[str(corpus / f["path"])]
        assert set(got) >= {"path", "result", "error", "peer_id"}
        if len(f["chain"]) == 1 and f["expect_peer_id"] is None:
            assert got["error"] == f["expected"]["error"], f["id"]


def test_bad_inputs_are_reported_per_input(tmp_path: Path) -> None:
    (tmp_path / "empty.der").write_bytes(b"")
    (tmp_path / "garbage.der").write_bytes(b"\xde\xad\xbe\xef" * 50)
    (tmp_path / "bad.pem").write_text(
        "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n")
    args = ["verify", "--json", str(tmp_path / "empty.der"), str(tmp_path / "garbage.der"),
            str(tmp_path), str(tmp_path / "missing.der"), str(tmp_path / "bad.pem")]
    p = run(*args)
    no_traceback(p)
    assert p.returncode == 1
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert [x["result"] for x in out] == ["reject", "reject", "error", "error", "error"]
    assert out[0]["error"] == out[1]["error"] == "malformed_certificate"


def test_pem_chain_and_expected_peer_id(corpus: Path, fixtures: dict[str, dict[str, Any]],
                                        tmp_path: Path) -> None:
    import base64
    f = fixtures["invalid.two-certificates"]
    pem = "".join(
        "-----BEGIN CERTIFICATE-----\n"
        + base64.encodebytes((corpus / rel).read_bytes()).decode()
        + "-----END CERTIFICATE-----\n" for rel in f["chain"])
    (tmp_path / "chain.pem").write_text(pem)
    p = run("verify", "--json", str(tmp_path / "chain.pem"))
    assert json.loads(p.stdout)["error"] == "chain_length"
    m = fixtures["invalid.peer-id-mismatch"]
    leaf = str(corpus / m["path"])
    p = run("verify", "--json", "--expect-peer-id", m["expect_peer_id"], leaf)
    assert json.loads(p.stdout)["error"] == "peer_id_mismatch" and p.returncode == 1
    own = json.loads(run("verify", "--json", leaf).stdout)["peer_id"]
    assert own != m["expect_peer_id"]
    p = run("verify", "--json", "--expect-peer-id", own, leaf)
    assert json.loads(p.stdout)["result"] == "accept" and p.returncode == 0


@pytest.mark.slow
def test_verify_at_and_usage_errors(corpus: Path) -> None:
    leaf = str(corpus / "certs/matrix.ed25519.ed25519.fixed.der")
    p = run("verify", "--json", "--at", "1990-01-01T00:00:00Z", leaf)
    assert json.loads(p.stdout)["error"] == "not_yet_valid"
    for args in (["verify", "--at", "yesterday", leaf], ["verify"], ["verify", "--bogus"],
                 ["generate", "--jobs", "-1"], ["list", "--only", "nothing-matches-*"],
                 ["show", "no.such.case"]):
        p = run(*args)
        no_traceback(p)
        assert p.returncode == 2, args
        assert len(p.stderr.strip().splitlines()) == 1 and "error" in p.stderr, args


def test_manifest_check_reports_disagreements(corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "out"
    shutil.copytree(corpus, copy)
    p = run("verify", "--manifest", str(copy / "manifest.json"))
    assert p.returncode == 0 and "agree" in p.stdout
    m = json.loads((copy / "manifest.json").read_text())
    m["fixtures"][0]["expected"]["error"] = "expired"
    (copy / "manifest.json").write_text(json.dumps(m))
    p = run("verify", "--manifest", str(copy / "manifest.json"))
    assert p.returncode == 1 and m["fixtures"][0]["id"] in p.stdout and "expired" in p.stdout
    (copy / "manifest.json").write_text("{not json")
    p = run("verify", "--manifest", str(copy / "manifest.json"))
    no_traceback(p)
    assert p.returncode == 2


@pytest.mark.slow
def test_generate_refuses_bad_output_and_keeps_the_old_corpus(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker, blocker / "out"):
        p = run("generate", "--out", str(out), "--only", "matrix.ed25519.ed25519.*")
        no_traceback(p)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    out = tmp_path / "out"
    p = run("generate", "--out", str(out), "--only", "matrix.ed25519.*")
    assert p.returncode == 0, p.stderr
    before = {q: q.read_bytes() for q in out.rglob("*") if q.is_file()}
    assert len(before) > 5
    # Refused runs over an existing corpus: a pattern that matches nothing, a bad --jobs.
    for bad in (["--only", "no-such-case.*"], ["--jobs", "-3"]):
        p = run("generate", "--out", str(out), *bad)
        no_traceback(p)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert {q: q.read_bytes() for q in out.rglob("*") if q.is_file()} == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["file", "out"]


def test_a_failed_check_leaves_the_previous_corpus(tmp_path: Path) -> None:
    from fixturegen.cli import corpus_check

    out = tmp_path / "out"
    generate(out, only="invalid.expired", check=corpus_check, workers=1)
    before = {q: q.read_bytes() for q in out.rglob("*") if q.is_file()}
    i = next(i for i, c in enumerate(CATALOGUE) if c.id == "invalid.expired")
    original = CATALOGUE[i]
    CATALOGUE[i] = replace(original, error="not_yet_valid")
    try:
        with pytest.raises(CheckFailed) as exc:
            generate(out, only="invalid.expired", check=corpus_check, workers=1)
    finally:
        CATALOGUE[i] = original
    assert "invalid.expired" in exc.value.report
    assert {q: q.read_bytes() for q in out.rglob("*") if q.is_file()} == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out"]


def test_list_and_show() -> None:
    p = run("list", "--json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(rows) == len(CATALOGUE) and all(r["description"] for r in rows)
    p = run("show", "invalid.extension-signature.replayed")
    shown = json.loads(p.stdout)
    assert shown["verdict"]["error"] == shown["fixture"]["expected"]["error"] == (
        "extension_signature_invalid")


@pytest.mark.parametrize("command", [["generate", "--out", "OUT"], ["profile", "rust-libp2p",
                                     "--out", "OUT"], ["show", "matrix.ed25519.ed25519.fixed"],
                                     ["fuzz", "--cases", "5", "--out", "OUT"]])
def test_a_seed_that_is_not_utf8_or_too_long_is_one_line(command: list[str],
                                                         tmp_path: Path) -> None:
    """A seed is hashed as UTF-8: undecodable bytes on the command line have no UTF-8 form."""
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    for seed, words in ((b"\xff", "not valid UTF-8"), (b"a" * 5000, "longer than 4096")):
        p = subprocess.run([sys.executable, "-m", "fixturegen", *argv, b"--seed", seed],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and words in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
        no_traceback(p)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_list_has_a_header_and_filters_by_expected_result() -> None:
    p = run("list", "--only", "invalid.extension-*")
    lines = p.stdout.splitlines()
    assert p.returncode == 0
    assert lines[0].split() == ["ID", "RESULT", "ERROR", "IMPORTANCE"]
    assert lines[1].startswith("invalid.extension-")
    expected = {r: sum(c.result == r for c in CATALOGUE) for r in ("valid", "invalid",
                                                                    "acceptable")}
    for result, count in expected.items():
        p = run("list", "--result", result)
        rows = p.stdout.splitlines()[1:]
        assert len(rows) == count > 0, result
        assert {r.split()[1] for r in rows} == {result}
    p = run("list", "--result", "acceptable", "--json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]  # no header line in JSON Lines
    assert len(rows) == expected["acceptable"] and {r["result"] for r in rows} == {"acceptable"}
    p = run("list", "--result", "accepted")
    assert p.returncode == 2 and "--result 'accepted'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not p.stdout
    no_traceback(p)


def _schema(name: str) -> Any:
    import jsonschema

    shipped = json.loads((ROOT / f"fixturegen/schemas/{name}.schema.json").read_text())
    return jsonschema.Draft202012Validator(shipped)


def test_the_json_the_commands_print_validates_against_their_schemas(
        corpus: Path, fixtures: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    (tmp_path / "garbage.der").write_bytes(b"\xde\xad\xbe\xef" * 50)
    ok = corpus / fixtures["matrix.ed25519.ed25519.fixed"]["path"]
    bad = corpus / fixtures["invalid.extension-signature.other-host-key"]["path"]
    p = run("verify", "--json", str(ok), str(bad), str(tmp_path / "garbage.der"),
            str(tmp_path / "missing.der"))
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert [x["result"] for x in lines] == ["accept", "reject", "reject", "error"]
    verify = _schema("verify-output")
    for line in lines:
        verify.validate(line)
    assert lines[3]["error"] == "unreadable" and lines[3]["checks"] == []
    assert not verify.is_valid({**lines[0], "result": "maybe"})
    listing = _schema("list-output")
    rows = [json.loads(x) for x in run("list", "--json").stdout.splitlines()]
    assert len(rows) == len(CATALOGUE)
    for row in rows:
        listing.validate(row)
    show = _schema("show-output")
    shown = json.loads(run("show", "invalid.extension-signature.replayed").stdout)
    show.validate(shown)
    assert not show.is_valid({**shown, "verdict": {**shown["verdict"], "flags": ["nonsense"]}})
