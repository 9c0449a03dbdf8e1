"""Checks of a real conformance run (``make conformance`` runs these after the harness).

They read ``$FIXTUREGEN_CONFORMANCE/results.json`` (default ``out/conformance``) and check that
every shipped adapter ran the whole corpus through its library: the pinned version is recorded,
every case was answered, and each library's own error text shows up where only that library
would write it. Divergences are findings and are not checked here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fixturegen.harness.adapters import SHIPPED

pytestmark = pytest.mark.conformance
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    folder = Path(os.environ.get("FIXTUREGEN_CONFORMANCE", ROOT / "out" / "conformance"))
    path = folder / "results.json"
    assert path.exists(), f"no {path}: run 'make conformance'"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def impl(results: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    found = [i for i in results["implementations"]
             if i["name"] == name and i.get("mode", "api") == "api"]
    assert found, f"{name} missing from the run"
    return {c["id"]: c for c in found[0]["cases"]}


def test_every_shipped_adapter_answered_every_case(results: dict[str, Any]) -> None:
    wanted = sum(1 for e in results["catalogue"] if e["kind"] not in ("proof_set", "rule"))
    by_name = {i["name"]: i for i in results["implementations"] if i["mode"] == "api"}
    # an implementation without an API mode (litep2p) has no API entry at all
    assert {a.name for a in SHIPPED if not a.api}.isdisjoint(by_name)
    for adapter in (a for a in SHIPPED if a.api):
        run = by_name[adapter.name]
        assert run["version"] == adapter.version
        assert len(run["cases"]) == wanted
        assert run["counts"]["error"] == 0, f"{adapter.name} broke the protocol"


def test_every_handshake_adapter_ran_both_directions(results: dict[str, Any]) -> None:
    entries = {(i["name"], i["transport"], i["direction"]): i
               for i in results["implementations"] if i["mode"] == "handshake"}
    ran = 0
    for adapter in SHIPPED:
        for transport in adapter.transports:
            for direction, side in (("dial", "server"), ("listen", "client")):
                run = entries[(adapter.name, transport, direction)]
                cases = {c["id"]: c for c in run["cases"]}
                broken = [f"{c['id']}: {c['outcome']} ({c['error']})" for c in run["cases"]
                          if c["outcome"] in ("error", "hang")]
                assert not broken, f"{adapter.name} {transport} {direction}: {broken}"
                # A real handshake ran: the fixture peer finished its side of the valid set.
                assert cases[f"ps.p256.{side}.valid"]["peer"]["outcome"] == "complete", (
                    f"{adapter.name} {transport} {direction}: no handshake completed")
                ran += 1
    assert ran >= 2


#: The rules of the handshake a shipped release breaks (found by the peers' protocol faults,
#: fixturegen.harness.rules): py-libp2p's listener (Python's ssl module) completes a handshake
#: with a dialler whose ALPN list has no protocol it supports, instead of the
#: no_application_protocol alert RFC 7301 section 3.2 requires; go-libp2p (Go's crypto/tls)
#: completes one whose CertificateEntry carries supported_groups, which RFC 8446 section 4.2
#: says must abort the handshake (the message-level peer's fault), in both directions.
RULE_FINDINGS = {
    ("py-libp2p-tls@tcp-listen", "rule.alpn-without-libp2p.client"): "false_accept",
    ("go-libp2p@tcp-dial", "rule.certificate-entry-extension.server"): "false_accept",
    ("go-libp2p@tcp-listen", "rule.certificate-entry-extension.client"): "false_accept",
}


def test_every_handshake_entry_keeps_the_rules_of_the_handshake(results: dict[str, Any]
                                                               ) -> None:
    """Each rule case a transport and direction carries ran for real, and each with a required
    verdict got it, but for the findings listed."""
    catalogue = {e["id"]: e for e in results["catalogue"] if e["kind"] == "rule"}
    assert catalogue
    seen: dict[tuple[str, str], str] = {}
    for entry in results["implementations"]:
        if entry["mode"] != "handshake":
            continue
        label = f"{entry['name']}@{entry['transport']}-{entry['direction']}"
        rules = [c for c in entry["cases"] if c["id"] in catalogue]
        assert rules, f"{label} ran no rule of the handshake"
        for case in rules:
            assert case["peer"] is not None, f"{label} {case['id']}: no handshake ran"
            if catalogue[case["id"]]["expected"] != "acceptable":
                seen[label, case["id"]] = case["outcome"]
    found = {key: outcome for key, outcome in seen.items() if outcome != "agree"}
    assert found == RULE_FINDINGS
    # TLS 1.2 is refused everywhere it can be offered: both directions of every TCP entry
    assert sum(1 for (label, case) in seen if case.startswith("rule.tls12-only.")) == 2 * sum(
        1 for e in results["implementations"]
        if e["mode"] == "handshake" and e["transport"] == "tcp" and e["direction"] == "dial")


# Each library's own words for a case only it describes that way.
FINGERPRINTS = [
    ("rust-libp2p", "invalid.two-certificates", "libp2p-tls requires exactly one certificate"),
    ("rust-libp2p", "invalid.unknown-critical-extension", "UnsupportedCriticalExtension"),
    ("go-libp2p", "invalid.two-certificates", "expected one certificates in the chain"),
    ("go-libp2p", "invalid.extension-missing", "expected certificate to contain the key extension"),
    ("js-libp2p", "invalid.extension-missing", "did not include the libp2p public key extension"),
    ("py-libp2p-tls", "invalid.extension-missing",
     "expected certificate to contain the key extension"),
    ("py-libp2p-quic", "invalid.extension-missing", "Certificate missing libp2p extension"),
]


@pytest.mark.parametrize(("name", "case", "text"), FINGERPRINTS)
def test_library_error_text(results: dict[str, Any], name: str, case: str, text: str) -> None:
    got = impl(results, name)[case]
    assert got["verdict"] == "reject" and text in (got["error"] or "")


def test_valid_cases_yield_the_expected_peer_id(results: dict[str, Any]) -> None:
    expected = {c["id"]: c["expected_peer_id"] for c in results["catalogue"]}
    for adapter in SHIPPED:
        if not adapter.api:  # handshake mode only (litep2p): every API request is a skip
            continue
        cases = impl(results, adapter.name)
        case = cases["matrix.ecdsa_secp256r1_sha256.ed25519.fixed"]
        assert case["verdict"] == "accept" and case["peer_id"] == expected[case["id"]]


def test_only_rust_checks_certificate_verify(results: dict[str, Any]) -> None:
    vectors = [c["id"] for c in results["catalogue"] if c["kind"] == "certificate_verify"]
    assert vectors
    rust = impl(results, "rust-libp2p")
    assert all(rust[v]["verdict"] in ("accept", "reject") for v in vectors)
    assert {rust[v]["outcome"] for v in vectors} & {"agree"}
    for adapter in SHIPPED:
        if adapter.name != "rust-libp2p" and adapter.api:
            cases = impl(results, adapter.name)
            assert {cases[v]["verdict"] for v in vectors} == {"skip"}


def test_the_interop_matrix_covers_every_shipped_adapter(results: dict[str, Any]) -> None:
    made = results["peer_made"]
    assert made is not None, "the interop stage did not run"
    names = {a.name for a in SHIPPED}
    assert {a["maker"] for a in made["attempts"]} == names
    by_maker: dict[str, set[str]] = {}
    for cert in made["certificates"]:
        by_maker.setdefault(cert["maker"], set()).add(cert["host_key_type"])
        assert set(cert["verifiers"]) == names  # every implementation checked it
    # Every implementation makes at least Ed25519 and secp256k1 identities, but litep2p (no
    # API: its adapter reads the certificate a listener presents) has Ed25519 keys only.
    wanted = {a.name: {"ed25519", "secp256k1"} if a.api else {"ed25519"} for a in SHIPPED}
    assert {n: wanted[n] <= by_maker.get(n, set()) for n in names} == {n: True for n in names}
    # What each library cannot make is said in its own words, not a harness failure.
    failed = [a for a in made["attempts"] if a["outcome"] in ("hang", "crash", "error")]
    assert failed == []


def test_every_peer_made_certificate_is_accepted_by_the_reference_verifier(
        results: dict[str, Any]) -> None:
    """A certificate a live implementation made that the reference rejects is a fixturegen bug;
    re-checked here from the kept DER file, with the PeerId its maker announced."""
    from fixturegen.verify.verifier import Verifier

    folder = Path(os.environ.get("FIXTUREGEN_CONFORMANCE", ROOT / "out" / "conformance"))
    verifier = Verifier()
    certificates = results["peer_made"]["certificates"]
    assert len(certificates) >= 2 * len([a for a in SHIPPED if a.api])
    wrong = []
    for cert in certificates:
        verdict = verifier.verify([(folder / cert["path"]).read_bytes()],
                                  expect_peer_id=cert["peer_id"])
        if not verdict.accepted or verdict.peer_id != cert["peer_id"]:
            wrong.append((cert["id"], verdict.error, verdict.detail))
        assert cert["reference"]["verdict"] == "accept"
    assert wrong == []


def test_no_generated_fault_is_masked_for_a_shipped_implementation(
        results: dict[str, Any]) -> None:
    """Each generated fault was tested, in each entry of a shipped implementation, in a
    context the entry accepts without the fault (its valid twin), under every host key type
    the entry verifies; a fault no context reaches there is explained: the entry accepts no
    twin with any of the fault's host key types (harness/reach.py)."""
    families = {e["family"]["id"] for e in results["catalogue"]
                if e["expected"] == "invalid" and (e.get("family") or {}).get("id", "")
                .startswith("invalid.fault.")}
    assert families, "no generated fault in the run's catalogue"
    reach = {r["label"]: r for r in results.get("reachability") or []}
    names = {a.name for a in SHIPPED}
    for adapter in SHIPPED:
        if adapter.api:
            assert {f["fault"] for f in reach[adapter.name]["faults"]} == families, adapter.name
    problems = []
    for label, entry in reach.items():
        if label.split("@")[0] not in names:
            continue
        for fault in entry["faults"]:
            if fault["status"] == "masked" or fault["masked_hosts"]:
                problems.append(f"{label} {fault['fault']}: {fault['status']} under "
                                f"{fault['masked_hosts']}: {fault['reason']}")
            if fault["status"] == "unreachable":
                assert "cannot verify that key type" in (fault["reason"] or ""), fault
    assert problems == []


#: World facts (a pinned run, 2026-12-06): the sender flags of each maker's own certificates.
SENDER_FLAGS = {
    "rust-libp2p": {"empty-issuer", "empty-subject"},
    "go-libp2p": set(),
    "js-libp2p": {"empty-issuer", "empty-subject"},
    "py-libp2p-tls": set(),
    "py-libp2p-quic": set(),
    "litep2p": {"empty-issuer", "empty-subject"},
}


def test_the_sender_flags_are_the_judgement_of_the_kept_certificates(
        results: dict[str, Any]) -> None:
    """results.json's sender flags are the sender's judgement of the DER files kept in
    peer-made/ (the validity window left out: it is judged at the time of the run), and each
    maker's are the ones it makes today."""
    from fixturegen.verify.codes import SenderFlag
    from fixturegen.verify.sender import judge

    folder = Path(os.environ.get("FIXTUREGEN_CONFORMANCE", ROOT / "out" / "conformance"))
    by_maker: dict[str, set[str]] = {}
    for cert in results["peer_made"]["certificates"]:
        leaf = folder / cert["path"]
        chain = [leaf.read_bytes()]
        n = 2
        while (extra := leaf.with_name(f"{cert['id']}.{n}.der")).exists():
            chain.append(extra.read_bytes())
            n += 1
        recorded = [(f["flag"], f["detail"]) for f in cert["sender_flags"]
                    if f["flag"] != SenderFlag.NOT_VALID_AT_RECEIPT]
        assert recorded == [(f.flag.value, f.detail) for f in judge(chain)
                            if f.flag is not SenderFlag.NOT_VALID_AT_RECEIPT], cert["id"]
        by_maker.setdefault(cert["maker"], set()).update(flag for flag, _ in recorded)
    stated = {maker: by_maker.get(maker, set()) for maker in SENDER_FLAGS}
    assert stated == SENDER_FLAGS
