"""Cases checked after another (fixturegen/cases/state.py): the manifest's ``after``, the
certificates read back from the outside, and the harness sending the first case just before
its partner, to the same adapter process, however many processes share the run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from fixturegen.cases import CATALOGUE, Case
from fixturegen.cases.model import register
from fixturegen.harness.requests import load_cases
from fixturegen.harness.session import Target, run_target
from fixturegen.output.writer import select
from fixturegen.verify.manifest_check import check_manifest

ROOT = Path(__file__).resolve().parents[1]
REMEMBERING = Target(name="remembering", package="test", version="0", verifier="cache",
                     argv=(sys.executable, str(ROOT / "tests/adapters/remembering.py")))
LIBP2P = x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")
NAMES = ("ed25519", "secp256k1", "ecdsa", "rsa")
KINDS = ("extension-replayed", "host-signature-corrupted", "self-signature-corrupted",
         "same-certificate-other-peer")


def _cert(corpus: Path, fixture: dict[str, Any]) -> x509.Certificate:
    return x509.load_der_x509_certificate((corpus / fixture["path"]).read_bytes())


def _extension(cert: x509.Certificate) -> bytes:
    value = cert.extensions.get_extension_for_oid(LIBP2P).value
    assert isinstance(value, x509.UnrecognizedExtension)
    return value.value


def _spki(cert: x509.Certificate) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return cert.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)


def test_every_state_case_follows_the_valid_first_of_its_host_key_type(
        fixtures: dict[str, dict[str, Any]]) -> None:
    afters = {fid: f["after"] for fid, f in fixtures.items() if "after" in f}
    assert sorted(afters) == sorted(f"invalid.state.{k}.{n}" for k in KINDS for n in NAMES)
    for fid, first in afters.items():
        name = fid.rsplit(".", 1)[1]
        assert first == f"valid.state.first.{name}"
        assert fixtures[first]["expected"]["result"] == "valid"
        assert "after" not in fixtures[first]
        assert fixtures[fid]["host_key"]["type"] == fixtures[first]["host_key"]["type"]
        assert fixtures[fid]["expected"]["result"] == "invalid"


@pytest.mark.parametrize("name", NAMES)
def test_each_case_is_the_first_certificate_with_one_thing_changed(
        corpus: Path, fixtures: dict[str, dict[str, Any]], name: str) -> None:
    first = _cert(corpus, fixtures[f"valid.state.first.{name}"])
    replayed = _cert(corpus, fixtures[f"invalid.state.extension-replayed.{name}"])
    assert _extension(replayed) == _extension(first)  # byte for byte
    assert _spki(replayed) != _spki(first)

    corrupted = _cert(corpus, fixtures[f"invalid.state.host-signature-corrupted.{name}"])
    assert _spki(corrupted) == _spki(first)
    assert _extension(corrupted) != _extension(first)
    assert len(_extension(corrupted)) == len(_extension(first))  # the same keys, a bit flipped
    protobuf = fixtures[f"valid.state.first.{name}"]["host_key"]["public_key_protobuf_hex"]
    assert bytes.fromhex(protobuf) in _extension(corrupted)

    self_corrupted = _cert(corpus, fixtures[f"invalid.state.self-signature-corrupted.{name}"])
    assert self_corrupted.tbs_certificate_bytes == first.tbs_certificate_bytes
    assert self_corrupted.signature != first.signature

    other_peer = fixtures[f"invalid.state.same-certificate-other-peer.{name}"]
    assert (corpus / other_peer["path"]).read_bytes() == (
        corpus / fixtures[f"valid.state.first.{name}"]["path"]).read_bytes()
    assert other_peer["expect_peer_id"] not in (None, fixtures[f"valid.state.first.{name}"][
        "expected"]["peer_id"])
    assert other_peer["expected"]["error"] == "peer_id_mismatch"


def test_register_refuses_an_after_that_is_not_an_earlier_valid_case() -> None:
    template = next(c for c in CATALOGUE if c.id == "invalid.state.extension-replayed.rsa")
    for bad in ("no.such.case", "invalid.two-certificates",
                "invalid.state.extension-replayed.ed25519"):
        with pytest.raises(ValueError, match="after must name a valid case"):
            register(Case(id="invalid.state.test-only", description="", result="invalid",
                          build=template.build, error=template.error, after=bad))
    assert all(c.id != "invalid.state.test-only" for c in CATALOGUE)


def test_a_generated_selection_brings_each_first_along() -> None:
    only = "invalid.state.extension-replayed.*"
    assert {c.id for c in select(only)} == {f"invalid.state.extension-replayed.{n}"
                                            for n in NAMES}
    assert {c.id for c in select(only, with_firsts=True)} == (
        {f"invalid.state.extension-replayed.{n}" for n in NAMES}
        | {f"valid.state.first.{n}" for n in NAMES})


def test_a_manifest_whose_after_names_no_valid_fixture_disagrees(
        corpus: Path, tmp_path: Path) -> None:
    manifest = json.loads((corpus / "manifest.json").read_text())
    kept = [f for f in manifest["fixtures"] if f["id"] in (
        "valid.state.first.ed25519", "invalid.state.extension-replayed.ed25519",
        "invalid.two-certificates")]
    for f in kept:
        for rel in f["chain"]:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_bytes((corpus / rel).read_bytes())
    assert check_manifest(_written(tmp_path, manifest, kept))[0] == []
    next(f for f in kept if f["id"].startswith("invalid.state."))["after"] = (
        "invalid.two-certificates")
    problems, _ = check_manifest(_written(tmp_path, manifest, kept))
    assert [(p.id, p.what, p.got) for p in problems] == [
        ("invalid.state.extension-replayed.ed25519", "after", "invalid.two-certificates")]


def _written(folder: Path, manifest: dict[str, Any], fixtures: list[dict[str, Any]]) -> Path:
    path = folder / "manifest.json"
    path.write_text(json.dumps({**manifest, "fixtures": fixtures}))
    return path


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_verifier_that_remembers_is_caught_only_after_the_first(
        corpus: Path, jobs: int) -> None:
    """The stand-in adapter caches accepted extensions by their bytes. Sent after its first,
    in the same process (with two processes too), it accepts the replayed extension, the
    corrupted self-signature and the same certificate for another peer (the same extension
    each time); alone, it refuses all sixteen."""
    every = load_cases(corpus, transcripts=False)
    state = [c for c in every if c.id.startswith(("invalid.state.", "valid.state."))]
    others = [c for c in every if c.id.startswith("valid.peer-id.")]
    cases = sorted(state + others, key=lambda c: c.id)  # the firsts after their partners
    run = run_target(REMEMBERING, cases, timeout=30, startup=30, stderr_path=None, jobs=jobs)
    got = {r.id: r.outcome for r in run.cases}
    assert len(run.cases) == len(cases)
    caught = {f"invalid.state.{k}.{n}" for k in ("extension-replayed",
                                                  "self-signature-corrupted",
                                                  "same-certificate-other-peer") for n in NAMES}
    assert {i for i, o in got.items() if o == "false_accept"} == caught
    assert all(o == "agree" for i, o in got.items() if i not in caught)

    alone = [c for c in cases if c.id.startswith("invalid.state.")]
    run = run_target(REMEMBERING, alone, timeout=30, startup=30, stderr_path=None, jobs=jobs,
                     every=alone)
    assert {r.outcome for r in run.cases} == {"agree"}
    assert len(run.cases) == 16


def test_a_first_that_crashes_its_adapter_leaves_the_case_answered(tmp_path: Path) -> None:
    """The first is sent just before its case; when it crashes the process, the case goes to a
    new one, and only the case's answer is returned."""
    from fixturegen.harness import driver
    from fixturegen.harness.protocol import Request

    script = tmp_path / "dies_on_first.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    if r['id'] == 'the-first':\n"
        "        sys.exit(3)\n"
        "    print(json.dumps({'id': r['id'], 'verdict': 'reject', 'peer_id': None,\n"
        "                      'error': 'seen'}), flush=True)\n")
    first, case = Request(id="the-first"), Request(id="the-case")
    answers = driver.run([sys.executable, str(script)], [case], timeout=20, startup=20,
                         firsts={"the-case": first})
    assert [(a.id, a.verdict, a.failure) for a in answers] == [("the-case", "reject", None)]
