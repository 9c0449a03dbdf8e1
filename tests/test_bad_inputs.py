"""Corrupted manifests, transcripts and results files: one line naming the problem, exit 2.

Every input file is bounded (size, UTF-8, number sizes, nesting) and validated against its
shipped schema before use (``fixturegen.verify.jsonfile``); the commands that read it say what
is wrong in one line and exit 2, never with a traceback and never by hanging.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fixturegen.cli import app

ADAPTERS = Path(__file__).resolve().parents[1] / "adapters"

Mutation = Callable[[dict[str, Any]], Any]


def _set(path: str, value: Any) -> Mutation:
    """Set a dotted path (``fixtures.0.chain``) in the parsed file to ``value``."""
    def mutate(data: dict[str, Any]) -> Any:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return data
    return mutate


def _drop(path: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> Any:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]
        return data
    return mutate


def _text(old: str, new: str) -> Mutation:
    """Replace ``old`` by ``new`` once in the file's JSON text (for what JSON cannot hold)."""
    def mutate(data: dict[str, Any]) -> Any:
        text = json.dumps(data)
        assert old in text
        return text.replace(old, new, 1).encode()
    return mutate


def _deep(levels: int) -> Mutation:
    def mutate(data: dict[str, Any]) -> Any:
        return (json.dumps(data)[:-1] + ', "deep": ' + "[" * levels + "]" * levels + "}").encode()
    return mutate


#: (name, mutation, text that must be in the message). A mutation returns the new data, or
#: ``bytes`` for the raw file content.
MANIFESTS: list[tuple[str, Mutation, str]] = [
    ("fixtures-null", _set("fixtures", None), "fixtures: None is not of type 'array'"),
    ("fixtures-missing", _drop("fixtures"), "'fixtures' is a required property"),
    ("chain-null", _set("fixtures.0.chain", None), "fixtures[0].chain: None is not of type"),
    ("chain-empty", _set("fixtures.0.chain", []), "fixtures[0].chain"),
    ("chain-entry-number", _set("fixtures.0.chain.0", 7), "fixtures[0].chain[0]: 7 is not of"),
    ("id-list", _set("fixtures.0.id", ["a"]), "fixtures[0].id: ['a'] is not of type"),
    ("id-number", _set("fixtures.0.id", 12), "fixtures[0].id: 12 is not of type"),
    ("expected-null", _set("fixtures.0.expected", None), "fixtures[0].expected"),
    ("result-unknown", _set("fixtures.0.expected.result", "maybe"),
     "fixtures[0].expected.result: 'maybe' is not one of"),
    ("fixture-string", _set("fixtures.0", "x"), "fixtures[0]: 'x' is not of type 'object'"),
    ("peer-number", _set("fixtures.0.expect_peer_id", 5), "fixtures[0].expect_peer_id"),
    ("flags-string", _set("fixtures.0.flags", "abc"), "fixtures[0].flags: 'abc' is not of"),
    ("unknown-field", _set("fixtures.0.surprise", 1), "fixtures[0]: Additional properties"),
    ("top-level-list", lambda d: [d], "(top level): [{"),
    ("float-overflow", _text('"schema_version": 1', '"schema_version": 1e999'),
     "the number 1e999 is out of range"),
    ("integer-5000-digits", _text('"schema_version": 1', '"schema_version": ' + "9" * 5000),
     "an integer of 5000 digits"),
    ("nan", _text('"schema_version": 1', '"schema_version": NaN'), "NaN is not JSON"),
    ("nested-100k", _deep(100_000), "nested deeper than 32"),
    ("nested-40", _deep(40), "nested deeper than 32"),
    ("truncated", lambda d: json.dumps(d)[:1000].encode(), "not JSON ("),
    ("empty", lambda d: b"", "not JSON ("),
    ("not-utf8", lambda d: b"\xff\xfe{}", "not UTF-8"),
]

TRANSCRIPTS: list[tuple[str, Mutation, str]] = [
    ("vectors-null", _set("vectors", None), "vectors: None is not of type 'array'"),
    ("proof-sets-missing", _drop("proof_sets"), "'proof_sets' is a required property"),
    ("code-point-string", _set("vectors.0.code_point", "x"), "vectors[0].code_point: 'x'"),
    ("context-unknown", _set("vectors.0.context", "neither"), "vectors[0].context: 'neither'"),
    ("signature-not-hex", _set("vectors.0.signature", "zz"), "vectors[0].signature: 'zz'"),
    ("id-list", _set("vectors.0.id", ["v"]), "vectors[0].id: ['v'] is not of type"),
]


def _corpus_with(corpus: Path, tmp_path: Path, name: str, mutation: Mutation) -> Path:
    root = tmp_path / "c"
    shutil.copytree(corpus, root, ignore=shutil.ignore_patterns("conformance"))
    data = json.loads((root / name).read_text())
    new = mutation(data)
    (root / name).write_bytes(new if isinstance(new, bytes) else json.dumps(new).encode())
    return root


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    # A traceback would surface here as an exception that is not the CLI's own exit.
    assert isinstance(result.exception, SystemExit | type(None)), result.exception
    return result.exit_code, result.stderr


def _one_line(stderr: str, must: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    assert must in lines[0], lines[0]
    assert len(lines[0]) < 600


CORRUPTED = ([("manifest.json", "--manifest", *m) for m in MANIFESTS]
             + [("transcripts.json", "--transcripts", *t) for t in TRANSCRIPTS])


@pytest.mark.parametrize(("file", "option", "name", "mutation", "must"), CORRUPTED,
                         ids=[f"{c[0].split('.')[0]}-{c[2]}" for c in CORRUPTED])
def test_a_corrupted_corpus_file(corpus: Path, tmp_path: Path, file: str, option: str,
                                 name: str, mutation: Mutation, must: str) -> None:
    """``verify`` and ``harness run`` both refuse it, in one line, before writing anything."""
    root = _corpus_with(corpus, tmp_path, file, mutation)
    for args in (("verify", option, str(root / file)),
                 ("harness", "run", "--corpus", str(root), "--out", str(tmp_path / "r"), "--",
                  "/bin/false")):
        code, err = _invoke(*args)
        assert code == 2
        _one_line(err, must)
    assert not (tmp_path / "r").exists()


def test_a_manifest_that_is_a_fifo_a_folder_or_missing(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path, must in ((fifo, "not a regular file"), (tmp_path, "is a directory"),
                       (tmp_path / "none.json", "No such file")):
        for option in ("--manifest", "--transcripts"):
            code, err = _invoke("verify", option, str(path))
            assert code == 2
            _one_line(err, must)


def test_a_lone_surrogate_in_a_fixture_id(corpus: Path, tmp_path: Path) -> None:
    first = json.loads((corpus / "manifest.json").read_text())["fixtures"][0]["id"]
    root = _corpus_with(corpus, tmp_path, "manifest.json",
                        _text(f'"id": "{first}"', '"id": "x\\ud800"'))
    code, err = _invoke("verify", "--manifest", str(root / "manifest.json"))
    assert code == 2
    _one_line(err, "fixtures[0].id: a lone surrogate")


@pytest.mark.parametrize("kind", ["directory", "binary"])
def test_a_certificate_key_path_that_is_a_directory_or_binary(corpus: Path, tmp_path: Path,
                                                              kind: str) -> None:
    root = _corpus_with(corpus, tmp_path, "manifest.json", lambda d: d)
    manifest = json.loads((root / "manifest.json").read_text())
    fixture = next(f for f in manifest["fixtures"] if f.get("certificate_key_path"))
    target = root / fixture["certificate_key_path"]
    target.unlink()
    if kind == "directory":
        target.mkdir()
    else:
        target.write_bytes(bytes(range(256)))
    code, err = _invoke("harness", "run", "--corpus", str(root), "--out", str(tmp_path / "r"),
                        "--", "/bin/false")
    assert code == 2
    _one_line(err, "is a directory" if kind == "directory" else "is not a PEM file")


RESULTS: list[tuple[str, Mutation, str]] = [
    ("implementations-number", _set("implementations", 3), "implementations: 3 is not of type"),
    ("outcome-unknown", _set("implementations.0.cases.0.outcome", "great"),
     "implementations[0].cases[0].outcome: 'great' is not one of"),
    ("seconds-overflow", _text('"seconds": ', '"seconds": 1e999, "x": '),
     "the number 1e999 is out of range"),
]


@pytest.fixture(scope="module")
def results_file(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real results file: the reference adapter over the corpus, without the transcripts."""
    out = tmp_path_factory.mktemp("results")
    code, err = _invoke("harness", "run", "--corpus", str(corpus), "--out", str(out),
                        "--no-transcripts", "--name", "reference", "--", sys.executable,
                        str(ADAPTERS / "reference/adapter.py"))
    assert code == 0, err
    return out / "results.json"


@pytest.mark.parametrize(("name", "mutation", "must"), RESULTS, ids=[m[0] for m in RESULTS])
def test_a_corrupted_results_file(results_file: Path, tmp_path: Path, name: str,
                                  mutation: Mutation, must: str) -> None:
    new = mutation(json.loads(results_file.read_text()))
    broken = tmp_path / "results.json"
    broken.write_bytes(new if isinstance(new, bytes) else json.dumps(new).encode())
    for args in (("harness", "report", str(broken), "--out", str(tmp_path / "r")),
                 ("harness", "diff", str(results_file), str(broken))):
        code, err = _invoke(*args)
        assert code == 2
        _one_line(err, must)


def test_a_result_for_a_case_the_catalogue_lacks(results_file: Path, tmp_path: Path) -> None:
    data = json.loads(results_file.read_text())
    data["catalogue"] = data["catalogue"][1:]  # the first case is reported but not described
    broken = tmp_path / "results.json"
    broken.write_text(json.dumps(data))
    code, err = _invoke("harness", "report", str(broken), "--out", str(tmp_path / "r"))
    assert code == 2
    _one_line(err, "not in its catalogue")


@pytest.mark.parametrize("known", ["/bin/true", "fifo", "folder"])
def test_a_known_list_that_is_not_text(results_file: Path, tmp_path: Path, known: str) -> None:
    if known == "fifo":
        known = str(tmp_path / "fifo")
        os.mkfifo(known)
    elif known == "folder":
        known = str(tmp_path)
    code, err = _invoke("harness", "report", str(results_file), "--out", str(tmp_path / "r"),
                        "--known", known)
    assert code == 2
    _one_line(err, {"fifo": "not a regular file", "folder": "is a directory"}.get(
        Path(known).name if known != str(tmp_path) else "folder", "not UTF-8 text"))
