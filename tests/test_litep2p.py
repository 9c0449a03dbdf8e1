"""litep2p (Parity) in handshake mode: its QUIC transport against the fixture peer, both ways.

litep2p 0.16.0 has no API mode (its certificate module is crate-private) and no TLS over TCP
(Noise): its adapter answers certificate requests with a skip, runs only QUIC handshakes, and
answers a generate (Ed25519 only) with the certificate a litep2p listener presents. Built by
make adapters (needs protoc); skipped when it is not built."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixturegen.harness.adapters import BY_NAME, PEER
from fixturegen.harness.handshake import HandshakeCase, handshake_cases
from fixturegen.harness.session import Target, run_handshake

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"
LITEP2P = BY_NAME["litep2p"]
VALID = "matrix.ecdsa_secp256r1_sha256.ed25519.fixed"  # an Ed25519 host key, as litep2p wants
INVALID = "invalid.extension-missing"


def test_the_entry_says_quic_only_and_no_api() -> None:
    assert LITEP2P.transports == ("quic",)
    assert "crate-private" in LITEP2P.verifier and "Noise" in LITEP2P.handshake


@pytest.mark.parametrize("direction", ["dial", "listen"])
def test_real_litep2p_quic_handshakes(corpus: Path, fixtures: dict[str, dict[str, object]],
                                      direction: str, tmp_path: Path) -> None:
    if not LITEP2P.built(ADAPTERS) or not (ADAPTERS / PEER).is_file():
        pytest.skip("litep2p or the fixture peer is not built: run 'make adapters'")
    target = Target(LITEP2P.name, LITEP2P.package, LITEP2P.version, LITEP2P.verifier,
                    tuple(LITEP2P.argv(ADAPTERS)), LITEP2P.handshake, LITEP2P.transports)
    by_id: dict[str, HandshakeCase] = {
        c.id: c for c in handshake_cases(corpus, "quic", direction, 10.0)}  # type: ignore[arg-type]
    cases = [by_id[VALID], by_id[INVALID]]
    entry = run_handshake(target, [str(ADAPTERS / PEER)], cases, "quic",
                          direction, timeout=20.0, startup=60.0,  # type: ignore[arg-type]
                          stderr_path=tmp_path / "stderr.log")
    got = {c.id: c for c in entry.cases}
    valid = got[VALID]
    assert valid.verdict == "accept", valid.error
    assert valid.peer is not None and valid.peer.outcome == "complete"
    expected = fixtures[VALID]["expected"]
    assert isinstance(expected, dict) and valid.peer_id == expected["peer_id"]
    assert got[INVALID].verdict == "reject" and got[INVALID].error


def test_generate_reads_the_certificate_a_litep2p_listener_presents() -> None:
    """No API, but a generate request is answered with the certificate a litep2p QUIC
    listener presents: the reference verifier accepts it, with the PeerId litep2p announced."""
    if not LITEP2P.built(ADAPTERS):
        pytest.skip("litep2p is not built: run 'make adapters'")
    import base64
    import json
    import subprocess

    from fixturegen.verify.verifier import Verifier

    lines = [json.dumps({"id": "g", "kind": "generate", "host_key_type": "ed25519"}),
             json.dumps({"id": "s", "kind": "generate", "host_key_type": "secp256k1"}),
             json.dumps({"id": "c", "kind": "certificate", "certificates": []})]
    done = subprocess.run(LITEP2P.argv(ADAPTERS), input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=60, check=True)
    made, secp, cert = (json.loads(x) for x in done.stdout.splitlines())
    assert made["verdict"] == "accept" and len(made["certificates"]) == 1
    verdict = Verifier().verify([base64.b64decode(made["certificates"][0])],
                                expect_peer_id=made["peer_id"])
    assert verdict.accepted and verdict.peer_id == made["peer_id"]
    assert secp["verdict"] == "skip" and "Ed25519" in secp["error"]
    assert cert["verdict"] == "skip" and "crate-private" in cert["error"]


@pytest.mark.slow
def test_the_interop_stage_fills_litep2p_column_by_handshake(tmp_path: Path) -> None:
    """No API, so the interop stage asks litep2p in a real QUIC handshake: it dials the
    fixture peer presenting each certificate go-libp2p made (with its key), expecting the
    maker's PeerId. It takes go-libp2p's Ed25519 identities and refuses the others (its
    PublicKey is Ed25519 only); its own certificates come without a key and stay skip."""
    go = BY_NAME["go-libp2p"]
    if not (LITEP2P.built(ADAPTERS) and go.built(ADAPTERS) and (ADAPTERS / PEER).is_file()):
        pytest.skip("litep2p, go-libp2p or the fixture peer is not built: run 'make adapters'")
    import json
    import subprocess
    import sys

    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, "-m", "fixturegen", "generate", "--out", str(corpus),
                    "--only", VALID], check=True, capture_output=True, timeout=120)
    out = tmp_path / "reports"
    run = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--impl",
                          "go-libp2p", "--impl", "litep2p", "--mode", "handshake",
                          "--no-transcripts", "--corpus", str(corpus), "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr
    made = json.loads((out / "results.json").read_text())["peer_made"]["certificates"]
    cells = {c["id"]: c["verifiers"]["litep2p"] for c in made}
    by_go = {i: c for i, c in cells.items() if i.startswith("go-libp2p.")}
    assert len(by_go) == 8
    for i, cell in by_go.items():
        if ".ed25519." in i:
            assert (cell["verdict"], cell["outcome"], cell["error"]) == ("accept", "agree", None)
            assert cell["peer_id"] == next(c["peer_id"] for c in made if c["id"] == i)
        else:
            assert cell["verdict"] == "reject" and cell["outcome"] == "false_reject"
            assert cell["error"].startswith("quic dial handshake: ")
    own = [c for i, c in cells.items() if i.startswith("litep2p.")]
    assert own and all(c["verdict"] == "skip" for c in own)
