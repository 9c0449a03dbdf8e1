"""``fixturegen import``: certificates from elsewhere become a corpus the harness runs.

Judged by what this project did not write: rust-libp2p's own test certificates (vendored in
``tests/data/rust-libp2p-test-assets``) import with the verdicts, PeerIds and schemes its own
tests assert; certificates and keys a real go-libp2p made run through every built adapter in
real handshakes. And by the catalogue: importing the generated corpus gives back what each case
declares, except where only a sidecar can say so.
"""

from __future__ import annotations

import ast
import base64
import json
import os
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from fixturegen.certs.schemes import SCHEMES
from fixturegen.harness.adapters import PEER, SHIPPED
from fixturegen.verify.manifest_check import check_manifest

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"
ASSETS = Path(__file__).resolve().parent / "data" / "rust-libp2p-test-assets"
AT = "2026-12-05T00:00:00Z"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def _import(*args: str) -> subprocess.CompletedProcess[str]:
    return _cli("import", *args)


def _manifest(folder: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((folder / "manifest.json").read_text())
    return {f["id"]: f for f in data["fixtures"]}


def _pem(label: str, der: bytes) -> str:
    return (f"-----BEGIN {label}-----\n" + base64.encodebytes(der).decode()
            + f"-----END {label}-----\n")


def test_rust_libp2p_test_certificates_import_as_its_own_tests_say(tmp_path: Path) -> None:
    """transports/tls/src/certificate.rs: the three spec certificates parse with the PeerIds
    asserted there, the tampered one fails, every openssl-made asset fails verify() (its
    extension was not signed for its key) and reports the scheme asserted there."""
    out = tmp_path / "corpus"
    run = _import(str(ASSETS), "--out", str(out), "--at", AT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("imported 15 certificates")
    got = _manifest(out)
    peers = {"can_parse_certificate_with_ed25519_keypair":
             "12D3KooWJRSrypvnpHgc6ZAgyCni4KcSmbV7uGRaMw5LgMKT18fq",
             "can_parse_certificate_with_ecdsa_keypair":
             "QmZcrvr3r4S3QvwFdae3c2EWTfo792Y14UpzCZurhmiWeX",
             "can_parse_certificate_with_secp256k1_keypair":
             "16Uiu2HAm2dSCBFxuge46aEt7U1oejtYuBUZXxASHqmcfVmk4gsbx"}
    for name, peer in peers.items():
        f = got[f"imported.{name}"]
        assert f["expected"]["result"] != "invalid" and f["expected"]["peer_id"] == peer
        assert f["imported_from"] == str(ASSETS / f"{name}.der")
        assert f["certificate_key_path"] is None and f["host_key"]["source"] == "imported"
    bad = got["imported.fails_to_parse_bad_certificate_with_ed25519_keypair"]["expected"]
    assert bad == {"result": "invalid", "error": "extension_signature_invalid", "peer_id": None}
    schemes = {"ed448": "ed448", "ed25519": "ed25519", "rsa_pkcs1_sha256": "rsa_pkcs1_sha256",
               "rsa_pkcs1_sha384": "rsa_pkcs1_sha384", "rsa_pkcs1_sha512": "rsa_pkcs1_sha512",
               "nistp256_sha256": "ecdsa_secp256r1_sha256",
               "nistp384_sha384": "ecdsa_secp384r1_sha384",
               "nistp521_sha512": "ecdsa_secp521r1_sha512"}
    for name, scheme in schemes.items():
        f = got[f"imported.{name}"]
        assert f["certificate"]["signature_scheme"] == scheme
        assert f["expected"]["result"] == "invalid"  # check_cert!: verify().is_err()
    assert got["imported.rsa_pss_sha384"]["certificate"]["signature_scheme"] == (
        "rsa_pss_rsae_sha384")  # rust: Ok(RSA_PSS_SHA384)
    odd = got["imported.nistp384_sha256"]["certificate"]["signature_scheme"]
    assert odd not in SCHEMES  # rust: signature_scheme().is_err()
    # The written corpus checks against the reference verifier at the same time.
    from datetime import datetime
    problems, count = check_manifest(out / "manifest.json", at=datetime.fromisoformat(AT))
    assert (problems, count) == ([], 15)
    readme = (out / "README.md").read_text()
    assert "Imported by `fixturegen import`" in readme and "| none |" not in readme


@pytest.mark.slow  # a whole campaign or corpus: make test-slow (CI runs it)
def test_the_generated_corpus_imports_back_to_what_each_case_declares(corpus: Path,
                                                                      tmp_path: Path) -> None:
    """Every distinct fixture as a PEM file (chain, then key) with a sidecar naming its id and
    the PeerId it expects: the import states what the catalogue states. The only differences are
    the acceptable cases the reference verifier rejects (a sidecar must say 'acceptable')."""
    manifest = json.loads((corpus / "manifest.json").read_text())
    given = tmp_path / "given"
    given.mkdir()
    # Each distinct certificate once (the importer leaves out a certificate it has seen): the
    # cases checked after another that repeat their first's bytes, for another expected
    # PeerId, are the only repeats.
    chains: dict[str, str] = {}
    kept = []
    for f in manifest["fixtures"]:
        chain = "".join(_pem("CERTIFICATE", (corpus / p).read_bytes()) for p in f["chain"])
        if chain in chains:
            assert {f["id"], chains[chain]} == {
                f"valid.state.first.{f['id'].rsplit('.', 1)[1]}",
                f"invalid.state.same-certificate-other-peer.{f['id'].rsplit('.', 1)[1]}"}
            continue
        chains[chain] = f["id"]
        kept.append(f)
    assert len(kept) == len(manifest["fixtures"]) - 4
    manifest["fixtures"] = kept
    for f in manifest["fixtures"]:
        chain = "".join(_pem("CERTIFICATE", (corpus / p).read_bytes()) for p in f["chain"])
        key = (corpus / f["certificate_key_path"]).read_text()
        (given / f"{f['id']}.pem").write_text(chain + key)
        side: dict[str, str] = {"id": f["id"]}
        if f["expect_peer_id"]:
            side["expect_peer_id"] = f["expect_peer_id"]
        (given / f"{f['id']}.json").write_text(json.dumps(side))
    out = tmp_path / "out"
    run = _import(str(given), "--out", str(out))
    assert run.returncode == 0, run.stderr
    got = _manifest(out)
    assert set(got) == {f["id"] for f in manifest["fixtures"]}
    # the import states what the reference verifier concludes; a case's other right reasons
    # (expected.also) are the catalogue's knowledge, which no certificate carries
    assert all("also" not in g["expected"] for g in got.values())
    differ = {i for i, f in ((f["id"], f) for f in manifest["fixtures"])
              if got[i]["expected"] != {k: v for k, v in f["expected"].items() if k != "also"}}
    assert differ == {f["id"] for f in manifest["fixtures"] if f["expected"]["result"] ==
                      "acceptable" and f["expected"]["error"] is not None}
    assert differ  # rsa-1024 and the PSS salt lengths: the reference rejects them
    for f in manifest["fixtures"]:
        g = got[f["id"]]
        assert g["sha256"] == f["sha256"] and len(g["chain"]) == len(f["chain"])
        assert (out / g["certificate_key_path"]).read_text() == (
            corpus / f["certificate_key_path"]).read_text()
        if f["expected"]["result"] != "invalid":  # the extension's host key, as the case's
            assert g["host_key"]["public_key_protobuf_hex"] == (
                f["host_key"]["public_key_protobuf_hex"])
        elif g["host_key"] is not None:  # a broken one: the bytes as presented, type read
            assert g["host_key"]["type"] == f["host_key"]["type"] or f["id"].startswith(
                ("invalid.host-key.", "invalid.fault.host-key.", "boundary.host-key."))
        if g["certificate"]["not_after"] != "unknown":
            assert g["certificate"]["not_after"] == f["certificate"]["not_after"]
    valid = [f for f in manifest["fixtures"] if f["expected"]["result"] == "valid"]
    for f in valid:  # everything decodes; the key is the same kind, brought by the user
        g = dict(got[f["id"]]["certificate"])
        assert g.pop("key") == {"type": f["certificate"]["key"]["type"], "source": "imported",
                                "file": None}
        assert g == {k: v for k, v in f["certificate"].items() if k != "key"}


def _key_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", "no such file or folder"),
    ("empty-folder", "no certificate file"),
    ("pem-without-certificate", "no CERTIFICATE block"),
    ("fifo", "not a regular file"),
    ("wrong-key", "not the key of the certificate"),
    ("encrypted-key", "encrypted"),
    ("sidecar-unknown-field", "unknown field 'expected'"),
    ("sidecar-bad-result", "result"),
    ("sidecar-not-json", "not JSON"),
    ("sidecar-deep", "nested too deep"),
    ("sidecar-lone-surrogate", "description"),
    ("sidecar-duplicate-id", "already taken"),
    ("oversized", "limit"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path: Path, setup: str,
                                                          message: str) -> None:
    src = tmp_path / "in"
    src.mkdir()
    leaf = (ASSETS / "can_parse_certificate_with_ed25519_keypair.der").read_bytes()
    target = src / "cert.der"
    target.write_bytes(leaf)
    if setup == "missing":
        target = src / "nothing.der"
    elif setup == "empty-folder":
        target.unlink()
        target = src
    elif setup == "pem-without-certificate":
        target = src / "key.pem"
        target.write_text(_key_pem())
    elif setup == "fifo":
        target = src / "fifo.der"
        os.mkfifo(target)
    elif setup == "wrong-key":
        (src / "cert.key").write_text(_key_pem())
    elif setup == "encrypted-key":
        key = ed25519.Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"))
        (src / "cert.key").write_bytes(key)
    elif setup == "sidecar-unknown-field":
        (src / "cert.json").write_text('{"expected": "valid"}')
    elif setup == "sidecar-bad-result":
        (src / "cert.json").write_text('{"result": "fine"}')
    elif setup == "sidecar-not-json":
        (src / "cert.json").write_text("{")
    elif setup == "sidecar-deep":
        (src / "cert.json").write_text("[" * 60000)
    elif setup == "sidecar-lone-surrogate":
        (src / "cert.json").write_text('{"description": "a\\ud800b"}')
    elif setup == "sidecar-duplicate-id":
        (src / "other.der").write_bytes(
            (ASSETS / "can_parse_certificate_with_ecdsa_keypair.der").read_bytes())
        (src / "cert.json").write_text('{"id": "same"}')
        (src / "other.json").write_text('{"id": "same"}')
        target = src
    elif setup == "oversized":
        target.write_bytes(b"\x30" + b"\x00" * (5 * 1024 * 1024))
    out = tmp_path / "out"
    run = _import(str(target), "--out", str(out))
    assert run.returncode == 2, run.stdout + run.stderr
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("fixturegen: error: ")
    assert message in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()


def test_keys_sidecars_duplicates_and_names(tmp_path: Path) -> None:
    """A key beside its certificate (NAME.key) or in its PEM file is taken (and must be its
    key); a sidecar's result and PeerId are kept and a result the reference verifier does not
    share is noted; the same certificate twice is imported once; two files of one name in
    two folders get two ids."""
    corpus_id = "matrix.ecdsa_secp256r1_sha256.ed25519.fixed"
    generated = tmp_path / "gen"
    run = _cli("generate", "--out", str(generated), "--only", corpus_id)
    assert run.returncode == 0, run.stderr
    leaf = (generated / f"certs/{corpus_id}.der").read_bytes()
    pem_key = (generated / f"keys/{corpus_id}.pem").read_text()
    src = tmp_path / "in"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a" / "node.der").write_bytes(leaf)
    (src / "a" / "node.key").write_text(pem_key)
    (src / "b" / "node.pem").write_text(_pem("CERTIFICATE", leaf) + pem_key)  # a duplicate
    (src / "b" / "spec.der").write_bytes(
        (ASSETS / "can_parse_certificate_with_ed25519_keypair.der").read_bytes())
    (src / "b" / "spec.json").write_text(json.dumps({
        "result": "invalid", "description": "Said to be bad by a bug report."}))
    (src / "b" / "node2.der").write_bytes(
        (ASSETS / "can_parse_certificate_with_ecdsa_keypair.der").read_bytes())
    (src / "b" / "notes.txt").write_text("not a certificate")  # passed over in a folder
    out = tmp_path / "out"
    run = _import(str(src), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert f"{src / 'b' / 'node.pem'}: the same certificate as {src / 'a' / 'node.der'}" in (
        run.stderr)
    assert "its sidecar says invalid, the reference verifier acceptable" in run.stderr
    got = _manifest(out)
    assert sorted(got) == ["imported.node", "imported.node2", "imported.spec"]
    node = got["imported.node"]
    assert node["certificate_key_path"] == "keys/imported.node.pem"
    assert (out / "keys/imported.node.pem").read_text() == pem_key
    spec = got["imported.spec"]
    assert spec["expected"]["result"] == "invalid" and spec["expected"]["peer_id"] is None
    assert spec["description"] == "Said to be bad by a bug report."
    assert "stated in its sidecar file" in spec["rule"]
    # The same folder again: the output is this command's, replaced; another folder is not.
    again = _import(str(src / "a"), "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert sorted(_manifest(out)) == ["imported.node"]
    assert not (out / "certs/imported.spec.der").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.md").write_text("mine")
    refused = _import(str(src / "a"), "--out", str(mine))
    assert refused.returncode == 2 and "did not write" in refused.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["notes.md"]


def _built() -> list[str]:
    return [a.name for a in SHIPPED if a.built(ADAPTERS)]


@pytest.mark.slow
def test_imported_certificates_run_through_every_built_adapter_in_both_modes(
        tmp_path: Path) -> None:
    """rust-libp2p's test certificates (no keys: API mode; handshakes skip them, saying why)
    and certificates a real go-libp2p made with their keys (from the interop stage's folder,
    imported as it is: real handshakes both ways) through every built adapter."""
    names = _built()
    if "go-libp2p" not in names or not (ADAPTERS / PEER).is_file():
        pytest.skip("go-libp2p or the fixture peer is not built: run 'make adapters'")
    spec = tmp_path / "spec"
    assert _import(str(ASSETS), "--out", str(spec)).returncode == 0
    made = tmp_path / "made"
    run = _cli("harness", "run", "--impl", "go-libp2p", "--corpus", str(spec), "--out",
               str(made))
    assert run.returncode in (0, 1), run.stderr  # divergences are findings
    peer_made = made / "peer-made"
    assert sorted(p.suffix for p in peer_made.iterdir()) .count(".pem") >= 4
    both = tmp_path / "both"
    run = _import(str(ASSETS), str(peer_made), "--out", str(both))
    assert run.returncode == 0, run.stderr
    fixtures = _manifest(both)
    keyed = {i for i, f in fixtures.items() if f["certificate_key_path"]}
    assert keyed and all(i.startswith("imported.go-libp2p-") for i in keyed)
    args = [x for n in names for x in ("--impl", n)]
    reports = tmp_path / "reports"
    run = _cli("harness", "run", *args, "--mode", "all", "--no-interop", "--corpus",
               str(both), "--out", str(reports))
    assert run.returncode in (0, 1), run.stderr
    results = json.loads((reports / "results.json").read_text())
    entries = results["implementations"]
    assert {e["name"] for e in entries} == set(names)
    ed25519_made = sorted(i for i in keyed if "ed25519" in i)[0]
    for entry in entries:
        cases = {c["id"]: c for c in entry["cases"]}
        # a listener also meets a dialer without a certificate (a case of no fixture)
        extra = {"ps.no-certificate.client"} if entry.get("direction") == "listen" else set()
        assert set(cases) == set(fixtures) | extra
        if extra:
            assert cases["ps.no-certificate.client"]["verdict"] == "reject", entry["name"]
        if entry["mode"] == "api":
            assert entry["name"] != "litep2p"  # no API mode (a private module): no API entry
            spec_ok = cases["imported.can_parse_certificate_with_ed25519_keypair"]
            assert spec_ok["outcome"] in ("agree", "acceptable"), (entry["name"], spec_ok)
            continue
        for i in fixtures:
            if i not in keyed:
                assert cases[i]["outcome"] == "skip" and "no key" in cases[i]["error"]
        answer = cases[ed25519_made]  # every stack takes an Ed25519 host key
        assert answer["verdict"] == "accept", (entry["name"], entry["transport"],
                                               entry["direction"], answer)
        assert answer["peer_id"] == fixtures[ed25519_made]["expected"]["peer_id"]
    handshakes = {(e["name"], e["transport"], e["direction"]) for e in entries
                  if e["mode"] == "handshake"}
    assert ("go-libp2p", "tcp", "dial") in handshakes and ("go-libp2p", "quic", "listen") in (
        handshakes)
    shutil.rmtree(made)


def test_a_hostile_file_name_and_sidecar_stay_data(tmp_path: Path) -> None:
    """A file name with a newline, quotes, backticks, ``$(...)`` and U+2028, a description
    with line terminators and code: the id is derived to the id rules, every message is one
    line, and each language's export parses (Python: and runs nothing from the manifest)."""
    src = tmp_path / "in"
    src.mkdir()
    name = "b\n$(touch PWN)'\"`x`\u2028*.der"
    (src / name).write_bytes((ASSETS / "can_parse_certificate_with_ecdsa_keypair.der"
                              ).read_bytes())
    (src / "a.der").write_bytes(
        (ASSETS / "can_parse_certificate_with_ed25519_keypair.der").read_bytes())
    (src / "c\n$(touch PWN).der").write_bytes((src / "a.der").read_bytes())  # a duplicate
    mark = tmp_path / "PWNED"
    (src / "a.json").write_text(json.dumps({"description": (
        f"x\u2028__import__('pathlib').Path({str(mark)!r}).touch()\n*/ \r\\ $(touch {mark})")}))
    out = tmp_path / "out"
    run = _import(str(src), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.splitlines()) == 1 and len(run.stderr.splitlines()) == 1
    assert "\\n$(touch PWN)" in run.stderr  # the duplicate's note, escaped on one line
    got = _manifest(out)
    assert sorted(got) == ["imported.a", "imported.b-touch-pwn-x"]
    assert got["imported.b-touch-pwn-x"]["imported_from"] == str(src / name)
    python = tmp_path / "fixtures.py"
    assert _cli("export", "--lang", "python", "--corpus", str(out), "--out", str(python)
                ).returncode == 0
    ast.parse(python.read_text())
    with python.open("rb") as handle:  # the payload only in comments and string literals
        tokens = list(tokenize.tokenize(handle.readline))
    carriers = {t.type for t in tokens if "__import__" in t.string or "touch" in t.string}
    assert carriers and carriers <= {tokenize.COMMENT, tokenize.STRING}
    for lang in ("rust", "go", "ts"):
        assert _cli("export", "--lang", lang, "--corpus", str(out), "--out",
                    str(tmp_path / f"fixtures.{lang}")).returncode == 0
        for line in (tmp_path / f"fixtures.{lang}").read_text().splitlines():
            assert "\u2028" not in line and not line.lstrip().startswith("__import__")
    assert not mark.exists() and not (Path.cwd() / "PWN").exists()


def test_a_key_is_matched_to_its_certificate_by_its_bits_whatever_the_identifier(
        corpus: Path, tmp_path: Path) -> None:
    """A P-256 certificate key written with explicit curve parameters (specifiedCurve) and an
    RSA key under id-RSASSA-PSS are the same keys as their PKCS#8 files (which name the curve,
    or say rsaEncryption): they import with their keys; a key of another certificate does
    not."""
    given = tmp_path / "given"
    given.mkdir()
    for case in ("acceptable.ec-explicit-parameters", "acceptable.rsa-pss-key"):
        chain = _pem("CERTIFICATE", (corpus / "certs" / f"{case}.der").read_bytes())
        key = (corpus / "keys" / f"{case}.pem").read_text()
        (given / f"{case}.pem").write_text(chain + key)
        (given / f"{case}.json").write_text(json.dumps({"id": case, "result": "acceptable"}))
    out = tmp_path / "out"
    run = _import(str(given), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert set(_manifest(out)) == {"acceptable.ec-explicit-parameters", "acceptable.rsa-pss-key"}
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    chain = _pem("CERTIFICATE", (corpus / "certs" / "acceptable.ec-explicit-parameters.der")
                 .read_bytes())
    other = (corpus / "keys" / "acceptable.critical-key-usage.pem").read_text()  # a P-256 key
    (wrong / "x.pem").write_text(chain + other)
    refused = _import(str(wrong), "--out", str(tmp_path / "out2"))
    assert refused.returncode != 0 and "not the key of the certificate" in refused.stderr
