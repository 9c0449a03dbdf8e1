"""Profiles: an implementation's test assets under its own names, checked by the reference
verifier and (slow, `make conformance`-time) by rust-libp2p's own tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509

from fixturegen.profiles import profiles
from fixturegen.profiles.rust_libp2p import CHECK_CERT
from fixturegen.verify import Verifier

ROOT = Path(__file__).resolve().parents[1]
FILES = {f"{s}.der" for s in CHECK_CERT} | {"rsa_pss_sha384.der", "nistp384_sha256.der"}


def fixturegen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fixturegen", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def drop_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("assets") / "test_assets"
    out.mkdir()
    (out / "gen.sh").write_text("# the old generator, left alone\n")
    done = fixturegen("profile", "rust-libp2p", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_the_profile_writes_the_files_the_repository_loads(drop_in: Path) -> None:
    assert {p.name for p in drop_in.glob("*.der")} == FILES
    assert (drop_in / "gen.sh").read_text() == "# the old generator, left alone\n"
    manifest = json.loads((drop_in / "manifest.json").read_text())
    assert {f["path"] for f in manifest["fixtures"]} == FILES
    check = fixturegen("verify", "--manifest", str(drop_in / "manifest.json"))
    assert check.returncode == 0, check.stdout
    text = (drop_in / "REGENERATE.md").read_text()
    assert "fixturegen profile rust-libp2p --variant drop-in" in text
    from fixturegen import __version__

    assert "## Getting fixturegen" in text and "pip install ." in text
    assert f"must print: fixturegen {__version__}" in text
    assert all(f"`{name}`" in text for name in FILES)


def test_drop_in_files_have_one_fault_and_valid_files_none(drop_in: Path, tmp_path: Path
                                                           ) -> None:
    v = Verifier()
    done = fixturegen("profile", "rust-libp2p", "--variant", "valid", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for stem, (scheme, _) in CHECK_CERT.items():
        faulty = (drop_in / f"{stem}.der").read_bytes()
        good = (tmp_path / f"{stem}.der").read_bytes()
        assert v.verify([faulty]).error == "extension_signature_invalid", stem
        verdict = v.verify([good])
        assert verdict.accepted and verdict.signature_scheme == scheme, stem
        # the same certificate but for the one fault: same key, scheme and validity
        a, b = x509.load_der_x509_certificate(faulty), x509.load_der_x509_certificate(good)
        assert a.public_key() == b.public_key() and a.subject == b.subject
        assert a.signature_algorithm_oid == b.signature_algorithm_oid
        assert a.not_valid_after_utc == b.not_valid_after_utc
    for folder in (drop_in, tmp_path):
        assert v.verify([(folder / "rsa_pss_sha384.der").read_bytes()]).signature_scheme == (
            "rsa_pss_rsae_sha384")
        assert v.verify([(folder / "nistp384_sha256.der").read_bytes()]).error == (
            "unsupported_signature_scheme")


def test_the_same_seed_gives_the_same_bytes(drop_in: Path, tmp_path: Path) -> None:
    assert fixturegen("profile", "rust-libp2p", "--out", str(tmp_path)).returncode == 0
    for name in [*FILES, "manifest.json", "REGENERATE.md"]:
        assert (tmp_path / name).read_bytes() == (drop_in / name).read_bytes(), name
    other = tmp_path / "other"
    assert fixturegen("profile", "rust-libp2p", "--seed", "x", "--out", str(other)
                      ).returncode == 0
    assert (other / "ed25519.der").read_bytes() != (drop_in / "ed25519.der").read_bytes()


def test_profile_list_and_bad_input(tmp_path: Path) -> None:
    listed = fixturegen("profile", "list")
    assert listed.returncode == 0 and list(profiles()) == [
        line.split()[0] for line in listed.stdout.splitlines() if not line.startswith(" ")]
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    for args in (["no-such", "--out", str(tmp_path)], ["rust-libp2p"],
                 ["rust-libp2p", "--variant", "odd", "--out", str(tmp_path / "a")],
                 ["rust-libp2p", "--out", str(link)]):
        done = fixturegen("profile", *args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, args
    assert not (tmp_path / "a").exists() and not list(tmp_path.glob("*.der"))


@pytest.mark.conformance
def test_rust_libp2p_own_tests_pass_on_both_variants(tmp_path: Path) -> None:
    """rust-libp2p's certificate tests (libp2p-tls, the rust adapter's pinned version) against
    the drop-in assets unchanged, then against the valid assets with the one assertion
    REGENERATE.md tells a maintainer to flip (verify() succeeds, but for ed448 and
    nistp521_sha512, which its ring backend cannot verify). The build is kept beside the rust
    adapter's (its target folder, which make adapters owns): the dependencies are built once per
    machine, not once per run."""
    if shutil.which("cargo") is None:
        pytest.fail("cargo is needed (the machine has Rust)")
    target = ROOT / "adapters/rust-libp2p-tls/target/profile-check"
    for variant in ("drop-in", "valid"):
        done = subprocess.run([str(ROOT / "profiles/check-rust-libp2p"), str(tmp_path), variant],
                              capture_output=True, text=True, timeout=1800,
                              env={**os.environ, "CARGO_TARGET_DIR": str(target)})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert f"against the {variant} assets" in done.stdout
        found = re.search(r"test result: ok\. (\d+) passed; 0 failed", done.stdout)
        assert found and int(found.group(1)) >= 10, (variant, done.stdout[-2000:])
    # The flip happened: the copied crate now asserts verify() is Ok for the valid files.
    source = (tmp_path / "crate/src/certificate.rs").read_text()
    assert "// flipped: the valid variant" in source
    assert "assert!(cert.verify().is_err()); // Because p2p extension" not in source


def test_check_rust_libp2p_refuses_an_unknown_variant(tmp_path: Path) -> None:
    done = subprocess.run([str(ROOT / "profiles/check-rust-libp2p"), str(tmp_path), "odd"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "variant drop-in or valid" in done.stderr
    assert not list(tmp_path.iterdir())


def _rsa_key(path: Path, der: bool = True) -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(65537, 2048)
    encoding = serialization.Encoding.DER if der else serialization.Encoding.PEM
    path.write_bytes(key.private_bytes(encoding, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def test_your_own_rsa_key_signs_the_rsa_fixture_files(tmp_path: Path) -> None:
    import hashlib

    spki = _rsa_key(tmp_path / "rsa-2048.pk8")
    out = tmp_path / "assets"
    done = fixturegen("profile", "rust-libp2p", "--out", str(out), "--certificate-key",
                      str(tmp_path / "rsa-2048.pk8"))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    keyed = [f for f in manifest["fixtures"] if f["path"].startswith("rsa_fixture_")]
    assert sorted(f["path"] for f in keyed) == sorted(
        f"rsa_fixture_{p}_{h}.der" for p in ("pkcs1", "pss") for h in ("sha256", "sha384",
                                                                    "sha512"))
    v = Verifier()
    for f in keyed:
        key = f["certificate"]["key"]
        assert key["source"] == "user" and key["fingerprint"] == hashlib.sha256(spki).hexdigest()
        cert = x509.load_der_x509_certificate((out / f["path"]).read_bytes())
        from cryptography.hazmat.primitives import serialization
        assert cert.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) == spki
        verdict = v.verify([(out / f["path"]).read_bytes()])
        assert verdict.accepted and verdict.signature_scheme == f["certificate"][
            "signature_scheme"]
    assert hashlib.sha256(spki).hexdigest() in (out / "REGENERATE.md").read_text()
    # the key is copied into keys/ and nowhere else
    private = (tmp_path / "rsa-2048.pk8").read_bytes()
    from cryptography.hazmat.primitives import serialization
    pem = serialization.load_der_private_key(private, None).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    holders = {p.relative_to(out).parts[0] for p in out.rglob("*") if p.is_file()
               and p.read_bytes() == pem}
    assert holders == {"keys"}


def test_a_key_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    ed = tmp_path / "ed.pem"
    ed.write_bytes(ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    (tmp_path / "junk.pk8").write_bytes(b"not a key")
    for key, words in ((ed, "need an RSA key"), (tmp_path / "junk.pk8", "PKCS#8"),
                       (tmp_path / "missing.pk8", "cannot read")):
        done = fixturegen("profile", "rust-libp2p", "--out", str(tmp_path / "a"),
                          "--certificate-key", str(key))
        assert done.returncode == 2 and words in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "a").exists()


@pytest.mark.slow
def test_your_key_never_stands_in_for_a_fixed_host_key(tmp_path: Path) -> None:
    """RSA-8192 is a fixed kind, but only as a host key (host-rsa-8192): a user's
    RSA-8192 --certificate-key has no certificate key to replace, and says so."""
    out = tmp_path / "out"
    done = fixturegen("generate", "--only", "host-rsa-8192", "--out", str(out),
                      "--certificate-key", str(ROOT / "keys" / "rsa-8192.pem"))
    assert done.returncode == 2, done.stderr
    assert "no fixture here has a fixed rsa-8192 certificate key" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()
    done = fixturegen("generate", "--only", "host-rsa-8192", "--out", str(out))
    assert done.returncode == 0, done.stderr
    (fixture,) = json.loads((out / "manifest.json").read_text())["fixtures"]
    assert fixture["host_key"]["source"] == "fixed" and fixture["host_key"]["kind"] == "rsa-8192"


def test_generate_with_your_key_replaces_the_fixed_key_of_its_kind(tmp_path: Path) -> None:
    spki = _rsa_key(tmp_path / "rsa.pem", der=False)
    out = tmp_path / "out"
    done = fixturegen("generate", "--only", "matrix.rsa_pss_rsae_sha256.*", "--out", str(out),
                      "--certificate-key", str(tmp_path / "rsa.pem"))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    sources = {f["id"]: f["certificate"]["key"]["source"] for f in manifest["fixtures"]}
    assert {s for i, s in sources.items() if i.endswith(".fixed")} == {"user"}
    assert {s for i, s in sources.items() if i.endswith(".throwaway")} == {"throwaway"}
    for f in manifest["fixtures"]:
        if f["id"].endswith(".fixed"):
            cert = x509.load_der_x509_certificate((out / f["path"]).read_bytes())
            from cryptography.hazmat.primitives import serialization
            assert cert.public_key().public_bytes(
                serialization.Encoding.DER,
                serialization.PublicFormat.SubjectPublicKeyInfo) == spki
    assert fixturegen("verify", "--manifest", str(out / "manifest.json")).returncode == 0
