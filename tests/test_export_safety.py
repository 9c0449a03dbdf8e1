"""Generated source is data: ``fixturegen export`` writes every text of a manifest as a string
literal escaped for the language (or into a one-line comment stripped of every line
terminator), derives identifiers to the language's rules, and quotes its header's options.

Each export of the shipped corpus and of a hostile one (rules, descriptions, PeerIds and the
seed carrying newlines, a bare CR, U+2028, NEL, quotes, ``*/``, ``$(...)``, backslashes,
"null", code that writes a marker file; ids that are keywords, start with a digit or differ
only in punctuation) is compiled with the language's real toolchain against
small stand-ins of the libp2p packages it imports, then run: the marker is never created, and
(Python) the fixtures' texts come back exactly as the manifest had them."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixturegen.output.export import ExportError, comment, identifiers, literal, render

ROOT = Path(__file__).resolve().parents[1]
HOSTILE_IDS = 6  # fixtures of the hostile corpus


def _payloads(mark: Path) -> dict[str, str]:
    """After a line terminator, code each language would run where the text lands."""
    m = str(mark)
    return {
        "python": f'__import__("pathlib").Path(r"{m}.py").touch(),  #',
        "ts": f'pwn: import("node:fs").then(f => f.writeFileSync("{m}.ts", "")),  //',
        "go": 'id: func() string { println("PWNED"); return "" }(),  //',
        "rust": f'#[test] fn pwned() {{ std::fs::write("{m}.rs", "").unwrap(); }}\n///',
    }


def hostile_corpus(corpus: Path, root: Path, mark: Path) -> Path:
    shutil.copytree(corpus, root, ignore=shutil.ignore_patterns("conformance"))
    manifest = json.loads((root / "manifest.json").read_text())
    code = " ".join(_payloads(mark).values())
    breaks = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c"]
    texts = [f"d{b}{code}{b}" for b in breaks] + [
        f'*/ {code} /* "quoted" \'single\' `back` ${{x}} $(touch {mark}.sh) \\ \\u0027 null']
    ids = ["self", "fn", "1st.case", "a.b", "a-b", "null"]
    fixtures = manifest["fixtures"][:HOSTILE_IDS]
    for i, f in enumerate(fixtures):
        f["id"] = ids[i]
        f["description"] = " ".join(texts[i:] + texts[:i])
        f["rule"] = texts[(i + 3) % len(texts)]
        if f["expected"]["peer_id"] is not None:
            f["expected"]["peer_id"] = "null" + texts[i % len(texts)]
        f["expect_peer_id"] = "null\\u2028" if i % 2 else f["expect_peer_id"]
    manifest["fixtures"] = fixtures
    manifest["seed"] = f"$(touch {mark}.seed)'\"\n{code}"
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_an_id_that_carries_code_or_a_line_break_is_refused_before_any_export(
        corpus: Path, tmp_path: Path) -> None:
    """A case id names files and is a column of the known list: the manifest refuses one that
    is not letters, digits, '.', '_' and '-', so no export ever sees it."""
    mark = tmp_path / "pwned"
    root = hostile_corpus(corpus, tmp_path / "hostile", mark)
    manifest = json.loads((root / "manifest.json").read_text())
    for bad in ['a"); __import__("os").system("touch ' + str(mark) + '.id") #',
                "null\u2028\\n\\ud800", "a\nb", ".hidden", "x" * 301]:
        manifest["fixtures"][0]["id"] = bad
        (root / "manifest.json").write_text(json.dumps(manifest))
        for lang in ("python", "go", "rust", "ts"):
            with pytest.raises(ExportError, match=r"not a fixturegen manifest: fixtures\[0\]\.id"):
                render(root, lang)
    _no_marker(mark)


# -- the escaping itself ----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c",
                                  "\x00", "\ufeff", "\x1b[31m"])
def test_a_comment_keeps_no_line_terminator(text: str) -> None:
    flat = comment(f"a{text}b */ c")
    assert flat.isprintable() and "*/" not in flat and flat.startswith("a")
    assert len(comment("x" * 1000)) == 150


def test_literals_are_ascii_and_round_trip_in_python() -> None:
    for text in ['"', "\\", "\n", "\r", "\u2028", "\x85", "null", "'", "\ud800", "😀", "\x00"]:
        for lang in ("python", "go", "rust", "ts"):
            assert literal(text, lang).isascii() and literal(text, lang).isprintable()
        assert ast.literal_eval(literal(text, "python")) == text
        assert json.loads(literal(text, "ts").replace("\\u{1f600}", "\\ud83d\\ude00")) == text
    assert literal(None, "python") == "None" and literal("null", "python") == '"null"'


def test_identifiers_follow_the_rules_and_never_collide() -> None:
    names = identifiers(["a.b", "a-b", "A.B", "fn", "1x", "", "é", "r#x", "self"])
    assert len(set(names)) == len(names)
    assert all(n.isascii() and n.isidentifier() and not n[0].isdigit() for n in names)
    assert "fn" not in names and "self" not in names


# -- the real toolchains ------------------------------------------------------------------------


def _export(corpus: Path, lang: str) -> str:
    return render(corpus, lang)[0]


@pytest.fixture(params=["shipped", "hostile"])
def source(request: pytest.FixtureRequest, corpus: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The corpus to export and the marker path whose variants must never be created."""
    mark = tmp_path / "pwned"
    if request.param == "shipped":
        return corpus, mark
    return hostile_corpus(corpus, tmp_path / "hostile", mark), mark


def _no_marker(mark: Path) -> None:
    made = [p.name for p in mark.parent.iterdir() if p.name.startswith(mark.name)]
    assert made == [], f"the manifest's text ran as code: {made}"


PY_STUBS = """
import sys, types
for name in ("libp2p", "libp2p.peer", "libp2p.peer.id", "libp2p.security",
             "libp2p.security.tls", "libp2p.security.tls.certificate"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["libp2p.peer.id"].ID = object
sys.modules["libp2p.security.tls.certificate"].verify_certificate_chain = None
namespace = {"__name__": "export"}
path = sys.argv[1]
exec(compile(open(path, encoding="utf-8").read(), path, "exec"), namespace)
import json
print(json.dumps([list(f[:5]) for f in namespace["FIXTURES"]]))
"""


def test_python_export_is_data(source: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, mark = source
    text = _export(corpus, "python")
    (tmp_path / "test_export.py").write_text(text, encoding="utf-8")
    ast.parse(text)
    done = subprocess.run([sys.executable, "-c", PY_STUBS, str(tmp_path / "test_export.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _no_marker(mark)
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    want = [[f["id"], f["rule"], f["expected"]["result"], f["expected"]["peer_id"],
             f["expect_peer_id"]] for f in manifest["fixtures"]]
    got = json.loads(done.stdout)
    assert got == json.loads(json.dumps(want))  # every text as the manifest had it


GO_STUBS = {
    "go.mod": "module github.com/libp2p/go-libp2p\n\ngo 1.21\n",
    "core/crypto/crypto.go": """package crypto

import "io"

type PubKey interface{}
type PrivKey interface{}

func GenerateEd25519Key(r io.Reader) (PrivKey, PubKey, error) { return nil, nil, nil }
""",
    "core/peer/peer.go": """package peer

import (
	"errors"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

type ID string

func (id ID) String() string { return string(id) }

func Decode(s string) (ID, error) { return ID(s), nil }

func IDFromPublicKey(k ic.PubKey) (ID, error) { return "", errors.New("stand-in") }
""",
    "p2p/security/tls/tls.go": """package libp2ptls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

type Identity struct{}

func NewIdentity(priv ic.PrivKey) (*Identity, error) { return &Identity{}, nil }

func (i *Identity) ConfigForPeer(remote peer.ID) (*tls.Config, <-chan ic.PubKey) {
	keys := make(chan ic.PubKey, 1)
	return &tls.Config{VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error {
		return errors.New("stand-in")
	}}, keys
}
""",
}


def test_go_export_is_data(source: tuple[Path, Path], tmp_path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("no go toolchain on PATH")
    corpus, mark = source
    for rel, text in GO_STUBS.items():
        (tmp_path / "stub" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "stub" / rel).write_text(text)
    module = tmp_path / "module"
    (module / "fixturegen").mkdir(parents=True)
    (module / "go.mod").write_text(
        "module example.com/export\n\ngo 1.21\n\nrequire github.com/libp2p/go-libp2p v0.0.0\n\n"
        "replace github.com/libp2p/go-libp2p => ../stub\n")
    (module / "fixturegen" / "export_test.go").write_text(_export(corpus, "go"),
                                                          encoding="utf-8")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOWORK": "off",
           "GOTOOLCHAIN": "local"}
    fmt = subprocess.run(["gofmt", "-e", "-l", str(module / "fixturegen")],
                         capture_output=True, text=True, timeout=120)
    assert fmt.returncode == 0 and fmt.stderr == "", fmt.stderr
    vet = subprocess.run(["go", "vet", "./..."], cwd=module, env=env, capture_output=True,
                         text=True, timeout=600)
    assert vet.returncode == 0, vet.stderr
    run = subprocess.run(["go", "test", "-count=1", "./..."], cwd=module, env=env,
                         capture_output=True, text=True, timeout=600)
    assert "PWNED" not in run.stdout + run.stderr
    assert "FAIL" in run.stdout or run.returncode == 0  # it ran: the stand-in rejects all
    _no_marker(mark)


RUST_STUBS = {
    "libp2p_identity": """
#[derive(Debug, PartialEq)]
pub struct PeerId(String);
impl PeerId { pub fn to_base58(&self) -> String { self.0.clone() } }
impl std::str::FromStr for PeerId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> { Ok(PeerId(s.to_string())) }
}
""",
    "rustls": """
pub mod pki_types {
    pub struct CertificateDer<'a>(pub &'a [u8]);
    impl<'a> From<&'a [u8]> for CertificateDer<'a> {
        fn from(b: &'a [u8]) -> Self { CertificateDer(b) }
    }
}
""",
    "libp2p_tls": """
pub mod certificate {
    pub struct P2pCertificate;
    impl P2pCertificate {
        pub fn peer_id(&self) -> libp2p_identity::PeerId { unreachable!() }
    }
    pub fn parse(_c: &rustls::pki_types::CertificateDer) -> Result<P2pCertificate, String> {
        Err("stand-in".to_string())
    }
}
""",
}


def test_rust_export_is_data(source: tuple[Path, Path], tmp_path: Path) -> None:
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("no rustc on PATH")
    corpus, mark = source
    libs = tmp_path / "libs"
    libs.mkdir()
    externs: list[str] = []
    for name, text in RUST_STUBS.items():
        (libs / f"{name}.rs").write_text(text)
        built = subprocess.run([rustc, "--edition", "2021", "--crate-type", "rlib",
                                "--crate-name", name, "-L", str(libs), *externs, "-o",
                                str(libs / f"lib{name}.rlib"), str(libs / f"{name}.rs")],
                               capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stderr
        externs += ["--extern", f"{name}={libs / f'lib{name}.rlib'}"]
    (tmp_path / "export.rs").write_text(_export(corpus, "rust"), encoding="utf-8")
    built = subprocess.run([rustc, "--edition", "2021", "--test", "-L", str(libs), *externs,
                            "-A", "warnings", "-o", str(tmp_path / "export"),
                            str(tmp_path / "export.rs")],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    listed = subprocess.run([str(tmp_path / "export"), "--list"], capture_output=True,
                            text=True, timeout=120)
    names = [line.split(":")[0] for line in listed.stdout.splitlines() if ": test" in line]
    fixtures = json.loads((corpus / "manifest.json").read_text())["fixtures"]
    assert len(names) == len(set(names)) == len(fixtures) and "pwned" not in names
    subprocess.run([str(tmp_path / "export"), "-q"], capture_output=True, text=True,
                   timeout=600, cwd=tmp_path)
    _no_marker(mark)


def _tsc() -> Path | None:
    given = os.environ.get("FIXTUREGEN_TSC")
    for candidate in ([Path(given)] if given else []) + [
            ROOT / "adapters/js-libp2p-tls/node_modules/.bin/tsc"]:
        if candidate.is_file():
            return candidate
    return None


TS_STUBS = {
    "package.json": '{"type": "module"}',
    "node_modules/@libp2p/peer-id/package.json":
        '{"name": "@libp2p/peer-id", "type": "module", '
        '"exports": {".": {"types": "./index.d.ts", "default": "./index.js"}}}',
    "node_modules/@libp2p/peer-id/index.js":
        "export function peerIdFromString (s) { return { toString: () => s } }\n",
    "node_modules/@libp2p/peer-id/index.d.ts":
        "export interface PeerId { toString(): string }\n"
        "export declare function peerIdFromString (s: string): PeerId\n",
    "node_modules/@libp2p/tls/package.json":
        '{"name": "@libp2p/tls", "type": "module", '
        '"exports": {"./utils": {"types": "./utils.d.ts", "default": "./utils.js"}}}',
    "node_modules/@libp2p/tls/utils.js":
        "export async function verifyPeerCertificate () { throw new Error('stand-in') }\n",
    "node_modules/@libp2p/tls/utils.d.ts":
        "import type { PeerId } from '@libp2p/peer-id'\n"
        "export declare function verifyPeerCertificate (raw: Uint8Array, expected?: PeerId)"
        ": Promise<PeerId>\n",
}


@pytest.mark.slow
def test_ts_export_is_data(source: tuple[Path, Path], tmp_path: Path) -> None:
    tsc = _tsc()
    if tsc is None:
        pytest.skip("no tsc: build the js-libp2p-tls adapter (its node_modules has "
                    "typescript) or set FIXTUREGEN_TSC to a tsc")
    types = tsc.resolve().parents[2] / "@types"  # node_modules/typescript/bin/tsc
    if not (types / "node").is_dir():
        pytest.skip(f"no @types/node beside {tsc}")
    corpus, mark = source
    for rel, text in TS_STUBS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "tsconfig.json").write_text(json.dumps({
        "compilerOptions": {"module": "NodeNext", "moduleResolution": "NodeNext",
                            "target": "ES2022", "strict": True, "outDir": "dist",
                            "types": ["node"], "typeRoots": [str(types)],
                            "noEmitOnError": False},
        "files": ["export.spec.ts"]}))
    (tmp_path / "export.spec.ts").write_text(_export(corpus, "ts"), encoding="utf-8")
    built = subprocess.run([str(tsc), "-p", str(tmp_path)], capture_output=True, text=True,
                           timeout=600, cwd=tmp_path)
    assert built.returncode == 0, built.stdout[-3000:]
    subprocess.run(["node", "--test", str(tmp_path / "dist" / "export.spec.js")],
                   capture_output=True, text=True, timeout=600, cwd=tmp_path)
    _no_marker(mark)


def test_the_header_quotes_its_options(corpus: Path) -> None:
    text, _ = render(corpus, "python", ["matrix.ed25519.ed25519.*", "x'$(touch y)\ny"])
    first = text.splitlines()[0]
    assert "--only 'matrix.ed25519.ed25519.*'" in first
    assert "'x'\"'\"'$(touch y) y'" in first  # shlex-quoted, its newline a space
