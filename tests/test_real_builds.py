"""Builds of other versions and of source trees, for real (``make builds-check``, run by CI).

For each shipped implementation with builds of any version: one older release is built from its
registry (with the shims that version needs) and run over the corpus in API mode, and one
source tree (the registry's source of the pinned release, as a checkout would be) is built with
a planted bug (one mutant of the reviewed mutation scope, named by its id), which the corpus
must notice, and then built again pristine and run with ``--source``, where it must answer
exactly as the pinned build does. py-libp2p 0.5.0's own certificates (the interop stage) are
judged as a sender: the critical extensions its generator wrote are flagged and blamed. The
build cache is the user's (``$FIXTUREGEN_CACHE``, else ``~/.cache/fixturegen``), so a second run
takes the builds from it. Needs the pinned adapters (``make adapters``): without them the tests
fail, they do not skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fixturegen.harness.adapters import BY_NAME

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"


@dataclass(frozen=True)
class Older:
    impl: str
    version: str
    why: str  # what this version exercises
    # World facts: cases whose outcome in this version differs from the pinned release's
    # (found by `harness matrix`), or () where the two agree on every case.
    differs: tuple[tuple[str, str, str], ...]  # (case id, this version's, the pinned outcome)


@dataclass(frozen=True)
class Planted:
    impl: str
    mutant: str  # an id of the adapter's mutation listing at the pinned version
    case: str  # ENTRY:CASE, the first answer whose verdict the planted bug changes
    mode: str = "api"  # litep2p has handshakes only


OLDER = (
    Older("go-libp2p", "v0.23.4", "four shims: legacy TLS constructor and multistream, no "
          "QUIC, legacy quicreuse", ()),
    Older("rust-libp2p", "0.6.2", "the crate set of 0.6 and parse's panics caught", ()),
    # The one class the js matrix shows fixed (in 3.0.5): a secp256k1 host key's extension
    # signature as raw r||s instead of DER, accepted by every 1.x and 2.x release. And one
    # reason: 2.2.7 refuses an RSA host key whose Data is one byte short with an error text
    # the reason table reads as another check (wrong_reason, 2026-12-06), 3.1.10 as the right one.
    Older("js-libp2p", "2.2.7", "@libp2p/tls 2.x through compat.js",
          (("js-libp2p:invalid.extension-signature.raw-r-s.secp256k1", "false_accept", "agree"),
           ("js-libp2p:invalid.fault.host-key.data-short.rsa.ecdsa_secp256r1_sha256."
            "noncritical-first", "wrong_reason", "agree"))),
    # An RSA host key under id-RSASSA-PSS with explicit parameters: 0.4.0 (and 0.5.0) refuse
    # it; from 0.6.0 on it is accepted (harness matrix, 2026-12-06), in the two contexts whose
    # certificate both releases accept.
    Older("py-libp2p-tls", "0.4.0", "the first release with the TLS verifier",
          tuple((f"py-libp2p-tls:invalid.fault.host-key.rsa-pss-key-parameters.rsa.{c}",
                 "agree", "false_accept")
                for c in ("ecdsa_secp256r1_sha256.noncritical-first",
                          "rsa_pkcs1_sha256.noncritical-first"))),
)

PLANTED = (
    # `if !valid` as `if valid`: the extension's signature check inverted
    Planted("go-libp2p", "p2p/security/tls/crypto.go:206:5:negate-condition",
            "go-libp2p:acceptable.issuer-differs-from-subject"),
    # == for != where parse_unverified looks for the libp2p extension
    Planted("rust-libp2p", "src/certificate.rs:182:16:BinaryOperator",
            "rust-libp2p:valid.libp2p-extension-among-others"),
    # `!result` as false: a bad extension signature is never refused
    Planted("js-libp2p", "dist/src/utils.js:64:9:ConditionalExpression#44",
            "js-libp2p:acceptable.high-s-secp256k1"),
    # `if not host_pub.verify(...)` without its `not`
    Planted("py-libp2p-tls",
            "libp2p/security/tls/certificate.py:356:1:ReplaceUnaryOperator_Delete_Not",
            "py-libp2p-tls:acceptable.issuer-differs-from-subject"),
    # P2pCertificate::verify -> Ok(()): no signature is checked (handshakes only); the first
    # case in corpus order it lets through has a truncated extension signature
    Planted("litep2p", "src/crypto/tls/certificate.rs:313:9:FnValue",
            "litep2p@quic-dial:invalid.fault.extension-signature.truncated.ed25519.ed25519."
            "critical-last",
            mode="all"),
)


def fixturegen(*args: str, timeout: float = 3000.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def outcomes(results: Path) -> dict[str, str]:
    """ENTRY:CASE -> outcome, over every entry of a run (ENTRY as a campaign names it)."""
    data: dict[str, Any] = json.loads(results.read_text())
    out: dict[str, str] = {}
    for impl in data["implementations"]:
        label = impl["name"] if impl["transport"] is None else \
            f"{impl['name']}@{impl['transport']}-{impl['direction']}"
        out |= {f"{label}:{c['id']}": c["outcome"] for c in impl["cases"]}
    return out


@pytest.fixture(scope="module")
def pinned(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """The pinned builds' API answers (make adapters)."""
    out = tmp_path_factory.mktemp("pinned")
    got: dict[str, dict[str, str]] = {}
    modes = {p.impl: p.mode for p in PLANTED}
    for name in sorted({o.impl for o in OLDER} | set(modes)):
        assert BY_NAME[name].built(ADAPTERS), f"{name} is not built: run 'make adapters'"
        done = fixturegen("harness", "run", "--impl", name, "--mode", modes.get(name, "api"),
                          "--no-interop", "--corpus", str(corpus), "--out", str(out / name))
        assert done.returncode == 0, done.stderr
        got[name] = outcomes(out / name / "results.json")
    return got


@pytest.mark.parametrize("older", OLDER, ids=lambda o: f"{o.impl}@{o.version}")
def test_an_older_release_is_built_and_run(older: Older, corpus: Path, tmp_path: Path,
                                           pinned: dict[str, dict[str, str]]) -> None:
    out = tmp_path / "run"
    done = fixturegen("harness", "run", "--impl", f"{older.impl}@{older.version}", "--mode",
                      "api", "--corpus", str(corpus), "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "results.json").read_text())
    (impl,) = data["implementations"]
    assert impl["version"] == older.version.lstrip("v") or impl["version"] == older.version
    got = outcomes(out / "results.json")
    assert got.keys() == {k for k in pinned[older.impl] if "@" not in k}
    assert "crash" not in got.values() and "hang" not in got.values()
    answered = [o for o in got.values() if o != "skip"]
    assert sum(o in ("agree", "acceptable") for o in answered) > len(answered) // 2
    expected = {k: v for k, v in pinned[older.impl].items() if k in got}
    for case, then, now in older.differs:
        assert (got[case], pinned[older.impl][case]) == (then, now)
        expected[case] = then
    assert got == expected  # and on every other case the two agree


@pytest.mark.parametrize("planted", PLANTED, ids=lambda p: p.impl)
def test_a_source_tree_with_a_planted_bug(planted: Planted, corpus: Path, tmp_path: Path,
                                          pinned: dict[str, dict[str, str]]) -> None:
    campaign = tmp_path / "mutate"
    done = fixturegen("mutate", "--impl", planted.impl, "--mutant", planted.mutant,
                      "--no-upstream", "--mode", planted.mode, "--corpus", str(corpus),
                      "--out", str(campaign))
    assert done.returncode == 0, done.stderr
    report = json.loads((campaign / "mutation.json").read_text())
    (mutant,) = report["mutants"]
    assert mutant["mutant"]["id"] == planted.mutant
    assert mutant["status"] == "killed", mutant
    assert planted.case in mutant["corpus"]["verdict"]
    # The campaign leaves its source tree pristine: built as a checkout with --source, it
    # answers as the pinned release does.
    tree = campaign / "work" / "tree"
    out = tmp_path / "source"
    done = fixturegen("harness", "run", "--impl", planted.impl, "--source", str(tree),
                      "--mode", planted.mode, "--no-interop", "--corpus", str(corpus),
                      "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert outcomes(out / "results.json") == pinned[planted.impl]


def test_git_bisect_run_names_the_release_that_fixed_py_libp2p_listening(corpus: Path,
                                                                         tmp_path: Path) -> None:
    """The guide's bisect (docs/guides/versions.md), at release granularity: a git history
    of py-libp2p's released sdists (0.6.0, 0.7.0, 0.8.0, 0.8.1, from PyPI), and `git bisect
    run fixturegen harness check` over it. py-libp2p 0.6.0 listening over TCP accepted a dialler
    whose certificate lacks the libp2p extension (tls.md: abort); the bisect of the real
    history names e1f0a65e "fix(tls): reject inbound connections without client
    certificate", released in 0.7.0: here, the commit holding 0.7.0."""
    repo = tmp_path / "py-libp2p"
    repo.mkdir()

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=repo, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    git("init", "-q")
    commits: dict[str, str] = {}
    for version in ("0.6.0", "0.7.0", "0.8.0", "0.8.1"):
        for old in repo.iterdir():
            if old.name != ".git":
                subprocess.run(["rm", "-rf", str(old)], check=True)
        unpacked = tmp_path / f"sdist-{version}"
        done = subprocess.run([sys.executable, str(ADAPTERS / "py-libp2p" / "mutate"), "source",
                               "--impl", "py-libp2p-tls", "--version", version, "--into",
                               str(unpacked)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        for item in unpacked.iterdir():
            item.rename(repo / item.name)
        git("add", "-A")
        git("commit", "-q", "-m", f"py-libp2p {version}")
        commits[version] = git("rev-parse", "HEAD").strip()
    git("bisect", "start", "--term-old=broken", "--term-new=fixed", commits["0.8.1"],
        commits["0.6.0"])
    check = [sys.executable, "-m", "fixturegen", "harness", "check", "--impl", "py-libp2p-tls",
             "--source", ".", "--case", "invalid.extension-missing", "--entry", "tcp-listen",
             "--good", "diverges", "--corpus", str(corpus), "--adapters", str(ADAPTERS)]
    out = git("bisect", "run", *check)
    assert f"{commits['0.7.0']} is the first fixed commit" in out, out


def test_the_sender_judgement_finds_py_libp2p_0_5_0s_critical_extensions(corpus: Path,
                                                                          tmp_path: Path) -> None:
    """py-libp2p 0.5.0's certificate generator marked basicConstraints and keyUsage critical:
    the reference verifier understands both and accepts, but judged as a sender every one of
    its certificates carries ``critical-extension``, and rust-libp2p's refusal of them (it
    understands no critical extension but libp2p's, and must abort, tls.md) is blamed on the
    maker. The pinned release (0.8.1) makes certificates without a sender flag, which
    rust-libp2p accepts."""
    certificates: dict[str, list[dict[str, Any]]] = {}
    summaries: dict[str, str] = {}
    for impl in ("py-libp2p-tls@0.5.0", "py-libp2p-tls"):
        out = tmp_path / impl
        done = fixturegen("harness", "run", "--impl", impl, "--impl", "rust-libp2p", "--mode",
                          "api", "--no-transcripts", "--corpus", str(corpus), "--out", str(out))
        assert done.returncode == 0, done.stderr
        data = json.loads((out / "results.json").read_text())
        certificates[impl] = [c for c in data["peer_made"]["certificates"]
                              if c["maker"] == "py-libp2p-tls"]
        summaries[impl] = (out / "summary.md").read_text()
        assert len(certificates[impl]) >= 3  # Ed25519, Secp256k1, RSA (two each)
    old = certificates["py-libp2p-tls@0.5.0"]
    assert {c["reference"]["verdict"] for c in old} == {"accept"}
    assert [c["sender_flags"] for c in old] == [[{
        "flag": "critical-extension",
        "detail": "2.5.29.19 (basicConstraints); 2.5.29.15 (keyUsage)"}]] * len(old)
    assert {c["verifiers"]["rust-libp2p"]["outcome"] for c in old} == {"false_reject"}
    assert "by **rust-libp2p**: false\\_reject, the maker's fault (critical-extension)" in \
        summaries["py-libp2p-tls@0.5.0"]
    new = certificates["py-libp2p-tls"]
    assert [c["sender_flags"] for c in new] == [[]] * len(new)
    assert {c["verifiers"]["rust-libp2p"]["outcome"] for c in new} == {"agree"}
    assert "- py-libp2p-tls: none on its" in summaries["py-libp2p-tls"]


def test_the_version_matrix_follows_py_libp2ps_certificate_generator(corpus: Path,
                                                                      tmp_path: Path) -> None:
    """``harness matrix`` runs the interop stage per version, so py-libp2p's generator bugs
    show with their first and fixed versions (2026-12-07): 0.4.0 and 0.5.0 mark basicConstraints
    and keyUsage critical (rust-libp2p refuses them, the maker's fault) and 0.6.0 does not;
    0.4.0's Ed25519 certificates carry an extension signature the reference refuses (py-libp2p
    0.4.0 itself and go-libp2p refuse them too), fixed in 0.5.0. js-libp2p's refusal of every
    py-libp2p certificate is its own fault (it reads only the first extension, and is shown
    to accept critical basicConstraints where the libp2p extension comes first)."""
    out = tmp_path / "matrix"
    done = fixturegen("harness", "matrix", "--impl", "py-libp2p-tls", "--versions",
                      "0.4.0,0.5.0,0.6.0", "--mode", "api", "--corpus", str(corpus), "--out",
                      str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "matrix.json").read_text())
    assert [v["checkers"][0] for v in data["versions"]] == ["py-libp2p-tls"] * 3
    made = {c["id"]: c for c in data["made"]}
    spans = {ident: (c["affected"], c["fixed_in"]) for ident, c in made.items()}
    assert spans["sender:critical-extension"] == (["0.4.0", "0.5.0"], "0.6.0")
    assert spans["refused:rust-libp2p:maker"] == (["0.4.0", "0.5.0"], "0.6.0")
    assert spans["invalid:extension_signature_invalid"] == (["0.4.0"], "0.5.0")
    assert made["invalid:extension_signature_invalid"]["versions"]["0.4.0"] == [
        "py-libp2p-tls.ed25519.1", "py-libp2p-tls.ed25519.2"]
    assert spans["refused:js-libp2p:verifier"] == (["0.4.0", "0.5.0", "0.6.0"], None)
    assert "critical-extension" in data["tolerance"]["js-libp2p"]
    assert "critical-extension" not in data["tolerance"]["rust-libp2p"]
    old = json.loads((out / "versions" / "0.4.0" / "results.json").read_text())
    ed = next(c for c in old["peer_made"]["certificates"] if c["id"] == "py-libp2p-tls.ed25519.1")
    assert ed["verifiers"]["go-libp2p"]["verdict"] == "reject"
    assert ed["verifiers"]["py-libp2p-tls"]["verdict"] == "reject"
    assert "| the reference verifier refuses its certificates (extension\\_signature\\_invalid)" \
        in (out / "matrix.md").read_text()


def test_go_libp2p_before_v0_20_0_is_built_from_the_go_libp2p_tls_module(corpus: Path,
                                                                        tmp_path: Path) -> None:
    """go-libp2p v0.8.0 to v0.19.x kept its TLS code in the module go-libp2p-tls; the go
    adapter builds those releases API-only against the go-libp2p-tls and go-libp2p-core each
    required, so the matrix reaches two released bugs of that module (2026-12-07): go-libp2p-tls
    v0.1.3 refused a critical libp2p extension ("x509: unhandled critical extension",
    go-libp2p-tls #87, fixed in v0.2.0 = go-libp2p v0.15.0), and its certificates had an empty
    issuer and subject until v0.3.1 (go-libp2p v0.16.0)."""
    out = tmp_path / "matrix"
    done = fixturegen("harness", "matrix", "--impl", "go-libp2p", "--versions",
                      "v0.14.4,v0.15.0,v0.16.0", "--mode", "api", "--corpus", str(corpus),
                      "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "matrix.json").read_text())
    assert [v["built"] for v in data["versions"]] == [True] * 3
    assert "go-libp2p-tls v0.1.3 (keys: go-libp2p-core v0.8.5)" in data["versions"][0]["notes"][0]
    assert data["versions"][0]["transports"] == []
    rejects = [c for c in data["classes"] if c["outcome"] == "false_reject"]
    assert [(c["affected"], c["fixed_in"]) for c in rejects] == [(["v0.14.4"], "v0.15.0")]
    assert all("critical" in case for case in rejects[0]["cases"])
    old = json.loads((out / "versions" / "v0.14.4" / "results.json").read_text())
    said = {c["id"]: c["error"] for impl in old["implementations"] for c in impl["cases"]}
    assert said["fault-twin.rsa.ed25519.critical-first"].endswith(
        "x509: unhandled critical extension")
    made = {c["id"]: (c["affected"], c["fixed_in"]) for c in data["made"]}
    assert made["sender:empty-issuer"] == (["v0.14.4", "v0.15.0"], "v0.16.0")
    assert made["sender:empty-subject"] == (["v0.14.4", "v0.15.0"], "v0.16.0")
    # Before v0.8.0 go-libp2p required no go-libp2p-tls: refused in one line, nothing built.
    none = fixturegen("harness", "run", "--impl", "go-libp2p@v0.7.4", "--mode", "api",
                      "--corpus", str(corpus), "--out", str(tmp_path / "old"))
    assert (none.returncode, none.stderr) == (2, "fixturegen: error: go-libp2p@v0.7.4: older "
                                              "than v0.8.0, the first github.com/libp2p/go-libp2p "
                                              "version with the verifier the adapter calls\n")


def test_py_libp2p_0_6_0s_listener_never_asks_for_the_dialers_certificate(
        corpus: Path, tmp_path: Path) -> None:
    """The history of issue 39's released listener bug, seen on the wire: py-libp2p 0.6.0's
    TCP listener sends no CertificateRequest (the fixture peer, dialling, reports
    ``certificate_requested`` false), so a dialler with no certificate is let in; 0.8.1's asks
    and refuses it. Both listeners complete a handshake whose dialler offers only h2 in ALPN
    (no protocol selected: RFC 7301 wants no_application_protocol)."""
    seen: dict[str, dict[str, dict[str, Any]]] = {}
    for impl in ("py-libp2p-tls@0.6.0", "py-libp2p-tls"):
        out = tmp_path / impl
        done = fixturegen("harness", "run", "--impl", impl, "--mode", "handshake",
                          "--no-interop", "--no-transcripts", "--corpus", str(corpus),
                          "--out", str(out))
        assert done.returncode == 0, done.stderr
        data = json.loads((out / "results.json").read_text())
        listen = next(i for i in data["implementations"] if i["direction"] == "listen")
        seen[impl] = {c["id"]: c for c in listen["cases"]}
    old, new = seen["py-libp2p-tls@0.6.0"], seen["py-libp2p-tls"]
    honest = "rule.tls12-and-tls13.client"  # a dialler that breaks no rule the listener checks
    assert old[honest]["peer"]["certificate_requested"] is False
    assert new[honest]["peer"]["certificate_requested"] is True
    assert old["ps.no-certificate.client"]["outcome"] == "false_accept"
    assert new["ps.no-certificate.client"]["outcome"] == "agree"
    for cases in (old, new):
        h2 = cases["rule.alpn-without-libp2p.client"]
        assert (h2["outcome"], h2["peer"]["alpn"]) == ("false_accept", "")


def test_go_libp2p_v0_26_3_pays_for_a_huge_rsa_host_key_and_v0_52_0_does_not(
        corpus: Path, tmp_path: Path) -> None:
    """CVE-2023-39533, on today's machine: go-libp2p up to v0.27.7 verified an RSA host key of
    any size. Over the whole corpus, v0.26.3 accepts the 24 KiB host key of
    ``acceptable.cost.rsa-host-key-24kib`` and the summary names that check costly (at least
    50 times the median of its valid RSA host keys, CPU time measured inside the adapter);
    v0.52.0 refuses
    it before any arithmetic ("rsa keys must be <= 8192 bits") and names nothing costly."""
    from fixturegen.harness.report import check_costs
    from fixturegen.harness.results import load_results

    case = "acceptable.cost.rsa-host-key-24kib"
    seen: dict[str, Any] = {}
    for impl in ("go-libp2p@v0.26.3", "go-libp2p"):
        out = tmp_path / impl
        done = fixturegen("harness", "run", "--impl", impl, "--mode", "api", "--no-interop",
                          "--no-transcripts", "--corpus", str(corpus), "--out", str(out))
        assert done.returncode == 0, done.stderr
        results = load_results(out / "results.json")
        entry = results.implementations[0]
        answer = next(c for c in entry.cases if c.id == case)
        (cost,) = check_costs(results)
        seen[impl] = (answer, cost, (out / "summary.md").read_text())
    old, old_cost, old_summary = seen["go-libp2p@v0.26.3"]
    new, new_cost, _ = seen["go-libp2p"]
    assert (old.verdict, old.outcome) == ("accept", "acceptable")
    assert (new.verdict, new.outcome) == ("reject", "acceptable")
    assert "rsa keys must be <= 8192 bits" in (new.error or "")
    assert old.cpu_seconds is not None and new.cpu_seconds is not None
    assert [c for c, _ in old_cost.costly][:1] == [case]
    # Compared with the valid certificates of its own host key type (RSA), not all of them.
    assert old.cpu_seconds >= 50 * dict(old_cost.by_type)["RSA"]
    assert case not in [c for c, _ in new_cost.costly]
    assert old.cpu_seconds >= 20 * new.cpu_seconds
    assert f"`{case}`" in old_summary.split("## What a check costs")[1]


def test_go_libp2ps_cache_of_verified_extensions_is_caught_only_after_its_first(
        corpus: Path, tmp_path: Path) -> None:
    """A bug no case checked alone can show (go-libp2p's bug model
    ``key-ext-verification-cached``: verified extensions remembered by their bytes), planted
    in the pinned release's source tree and built: ``harness check`` sends
    ``valid.state.first.ed25519`` first, to the same adapter process (by API, and as a
    handshake before the handshake), and the replayed extension is accepted; the pristine
    tree refuses it. Without its first, the planted build refuses it too (the ``after``
    field dropped from a copy of the manifest)."""
    from tools.cijob import plant, unpack

    case = "invalid.state.extension-replayed.ed25519"
    pristine, buggy = tmp_path / "pristine", tmp_path / "buggy"
    unpack("go-libp2p", pristine)
    unpack("go-libp2p", buggy)
    plant("go-libp2p", "key-ext-verification-cached", buggy)
    for entry in ("api", "tcp-dial", "quic-listen"):
        for tree, status, said in ((buggy, 1, "false_accept"), (pristine, 0, "agree")):
            done = fixturegen("harness", "check", "--impl", "go-libp2p", "--source", str(tree),
                              "--case", case, "--entry", entry, "--corpus", str(corpus))
            assert done.returncode == status, (entry, tree.name, done.stdout, done.stderr)
            assert f"{case}: {said}" in done.stdout, (entry, tree.name, done.stdout)
    alone = tmp_path / "alone"
    shutil.copytree(corpus, alone)
    manifest = json.loads((alone / "manifest.json").read_text())
    for f in manifest["fixtures"]:
        f.pop("after", None)
    (alone / "manifest.json").write_text(json.dumps(manifest))
    done = fixturegen("harness", "check", "--impl", "go-libp2p", "--source", str(buggy),
                      "--case", case, "--entry", "api", "--corpus", str(alone))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"{case}: agree" in done.stdout
