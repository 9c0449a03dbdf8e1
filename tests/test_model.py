"""The typed model: the verifier's vocabulary is written once and everything else agrees with
it; KeyKind owns the key kinds; the import graph has layers and no cycle."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from fixturegen.cases import CATALOGUE
from fixturegen.certs.schemes import SCHEMES
from fixturegen.identity.hostkey import HostKey
from fixturegen.keys import FIXED_KINDS, HOST_KEY_TYPES, KeyKind, KeyPair
from fixturegen.keys.derive import derive_private_key
from fixturegen.keys.fixed import KEYS_DIR
from fixturegen.model.manifest import manifest_schema
from fixturegen.model.transcripts import transcripts_schema
from fixturegen.verify import Verifier
from fixturegen.verify.codes import Check, ErrorCode, Flag, check_table

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fixturegen"


def test_the_readme_table_of_checks_is_the_generated_one() -> None:
    readme = (ROOT / "README.md").read_text()
    assert check_table() in readme


def test_every_generated_file_is_up_to_date() -> None:
    """`make generated` writes the schemas and the README's table from the model; a change to
    an enum or a model without it fails here, naming the stale files."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "tools/generated.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_generator_rewrites_the_readme_table_alone() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("generated", ROOT / "tools/generated.py")
    assert spec is not None and spec.loader is not None
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    text = "before\n\n| # | check | error code |\n|---|---|---|\n| 1 | old | `x` |\n\nafter\n"
    assert generated.readme_with_table(text) == "before\n\n" + check_table() + "\nafter\n"


def test_error_codes_are_in_check_order_and_every_check_has_a_code() -> None:
    positions = [code.check.position for code in ErrorCode]
    assert positions == sorted(positions)
    assert {code.check for code in ErrorCode} == set(Check)


@pytest.mark.parametrize("schema", [manifest_schema(), transcripts_schema()])
def test_the_schemas_enumerate_the_codes_and_flags(schema: dict[str, Any]) -> None:
    defs = schema["$defs"]
    assert defs["ErrorCode"]["enum"] == [c.value for c in ErrorCode]
    assert defs["Flag"]["enum"] == [f.value for f in Flag]


def test_every_flag_is_used_and_every_reported_flag_is_reported(
        corpus: Path, manifest: dict[str, Any], transcripts: dict[str, Any]) -> None:
    stated = {f for fx in manifest["fixtures"] for f in fx["flags"]}
    stated |= {f for v in transcripts["vectors"] for f in v["flags"]}
    assert stated == {f.value for f in Flag}  # no note without a fixture, no flag without note
    assert manifest["notes"] == {f: Flag(f).note for f in sorted(
        {f for fx in manifest["fixtures"] for f in fx["flags"]})}
    v = Verifier()
    reported = set()
    for fx in manifest["fixtures"]:
        verdict = v.verify([(corpus / p).read_bytes() for p in fx["chain"]],
                           expect_peer_id=fx["expect_peer_id"])
        reported |= set(verdict.flags)
        if verdict.accepted:  # (a rejected one may have had a borderline feature on the way)
            # a flag the verifier reports on a certificate it accepts is one the fixture states
            assert set(verdict.flags) <= set(fx["flags"]), fx["id"]
    assert reported == {f for f in Flag if f.reported}


def test_the_catalogue_speaks_the_verifier_vocabulary() -> None:
    for c in CATALOGUE:
        assert c.error is None or isinstance(c.error, ErrorCode), c.id
        assert all(isinstance(f, Flag) for f in c.flags), c.id
        assert (c.result == "invalid") == (c.error is not None and c.result != "acceptable"), c.id


@pytest.mark.parametrize("kind", list(KeyKind))
def test_a_key_kind_owns_its_parameters(kind: KeyKind) -> None:
    private = derive_private_key(kind, b"seed", "model")
    assert KeyKind.of(private) is kind
    pair = KeyPair.of(kind, private, "throwaway")
    if kind.host_key_type is None:
        with pytest.raises(ValueError):
            HostKey(pair).type  # noqa: B018
    else:
        assert kind.host_key_type in HOST_KEY_TYPES
        assert HostKey(pair).type == kind.host_key_type
    if kind.cv_scheme is not None:
        assert SCHEMES[kind.cv_scheme].key_kind.family == kind.family
    assert kind.fixed == (KEYS_DIR / f"{kind}.pem").exists()
    assert (kind in FIXED_KINDS) == kind.fixed


def test_every_host_key_type_has_a_default_kind() -> None:
    for host_type in HOST_KEY_TYPES:
        assert KeyKind.for_host_type(host_type).host_key_type == host_type


def _imports(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the fixturegen modules it imports (anywhere in it, TYPE_CHECKING included)."""
    modules = {}
    for path in (root / "fixturegen").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                if (t in modules and t != name) or t.startswith("typer._"):
                    deps.add(t)
        graph[name] = deps
    return graph


def test_no_import_cycle() -> None:
    graph = _imports()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in graph.get(node, ()):
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] if dep in path else [dep]
                raise AssertionError(f"import cycle: {' -> '.join([*cycle, dep])}")
            if dep in graph and dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


#: The layers, bottom up (the README's Layout says the same): a module imports only from its own
#: package or from a lower rank. The verifier is at the bottom: it imports nothing it checks.
RANKS = {
    "fixturegen": 0, "fixturegen.verify": 0,
    "fixturegen.keys": 1, "fixturegen.errors": 1,
    "fixturegen.identity": 2,
    "fixturegen.certs": 3,
    "fixturegen.model": 4,
    "fixturegen.cases": 5,
    "fixturegen.output": 6, "fixturegen.profiles": 6, "fixturegen.builds": 6,
    "fixturegen.harness": 7,
    "fixturegen.fuzz": 8, "fixturegen.versions": 8,
    "fixturegen.cli": 9, "fixturegen.__main__": 10,
}


def _layer(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_every_import_goes_down_the_layers() -> None:
    graph = _imports()
    assert {_layer(m) for m in graph} <= set(RANKS), "a new package needs its rank here"
    for module, deps in graph.items():
        for dep in deps:
            if dep.startswith("typer.") or _layer(dep) == _layer(module):
                continue
            assert RANKS[_layer(dep)] < RANKS[_layer(module)], f"{module} imports {dep}"


def test_the_rank_check_sees_relative_and_upward_imports(tmp_path: Path) -> None:
    """A verifier module that reached up with a relative import would be caught."""
    for folder in ("verify", "cases"):
        (tmp_path / "fixturegen" / folder).mkdir(parents=True)
        (tmp_path / "fixturegen" / folder / "__init__.py").write_text("")
    (tmp_path / "fixturegen/__init__.py").write_text("")
    (tmp_path / "fixturegen/cases/model.py").write_text("X = 1\n")
    (tmp_path / "fixturegen/verify/sneaky.py").write_text("from ..cases.model import X\n")
    graph = _imports(tmp_path)
    assert graph["fixturegen.verify.sneaky"] == {"fixturegen.cases.model"}
    up = [(m, d) for m, deps in graph.items() for d in deps
          if RANKS[_layer(d)] >= RANKS[_layer(m)] and _layer(d) != _layer(m)]
    assert up == [("fixturegen.verify.sneaky", "fixturegen.cases.model")]


def test_layers() -> None:
    graph = _imports()
    lower = ("fixturegen.cases", "fixturegen.certs", "fixturegen.identity", "fixturegen.keys",
             "fixturegen.model")
    for module, deps in graph.items():
        assert not any(d.startswith("typer._") for d in deps), module
        if module.startswith(lower):
            up = [d for d in deps if d.startswith(("fixturegen.output", "fixturegen.harness",
                                                   "fixturegen.cli"))]
            assert not up, f"{module} imports {up}"
        if module.startswith("fixturegen.model"):
            assert deps <= {"fixturegen.model", "fixturegen.model.manifest",
                            "fixturegen.verify.codes", "fixturegen.keys.kinds"}, (module, deps)
        if module == "fixturegen.verify.codes":
            assert not deps
        if module.startswith("fixturegen.keys"):
            assert all(d.startswith("fixturegen.keys") for d in deps), (module, deps)


def test_the_manifest_refuses_an_unknown_flag(corpus: Path, tmp_path: Path) -> None:
    from fixturegen.verify.manifest_check import ManifestError, check_manifest

    data = json.loads((corpus / "manifest.json").read_text())
    data["fixtures"][0]["flags"] = ["no-such-flag"]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ManifestError, match="no-such-flag"):
        check_manifest(path)
