"""The interop stage: what each implementation makes, checked by the reference and by all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fixturegen.harness.interop import run_interop
from fixturegen.harness.protocol import Reply
from fixturegen.harness.report import Blame, interop_matrix, markdown
from fixturegen.harness.session import Target

ROOT = Path(__file__).resolve().parents[1]
MAKER = str(ROOT / "tests/adapters/maker.py")


def target(name: str, *args: str) -> Target:
    return Target(name, "test", "0", "test adapter", (sys.executable, MAKER, *args))


@pytest.mark.slow
def test_every_kind_of_generate_answer_becomes_an_attempt_outcome(corpus: Path,
                                                                  tmp_path: Path) -> None:
    made = run_interop([target("good", str(corpus)), target("picky", str(corpus), "reject")],
                       tmp_path, timeout=3.0, startup=30.0, per_type=1)
    outcomes = {(a.maker, a.host_key_type): (a.outcome, a.error) for a in made.attempts}
    assert outcomes[("good", "ed25519")] == ("made", None)
    assert outcomes[("good", "secp256k1")][0] == "error"
    assert "not DER" in (outcomes[("good", "secp256k1")][1] or "")
    assert outcomes[("good", "ecdsa")][0] == "hang"
    assert outcomes[("good", "rsa")] == ("skip", "not this kind")
    assert [c.id for c in made.certificates] == ["good.ed25519.1", "picky.ed25519.1"]
    cert = made.certificates[0]
    # The reference verifier accepts the (real) certificate with the maker's PeerId...
    assert cert.reference.verdict == "accept" and cert.reference.peer_id == cert.peer_id
    # ... and each implementation's cell is an outcome against the maker's claim.
    assert {n: c.outcome for n, c in cert.verifiers.items()} == {
        "good": "agree", "picky": "false_reject"}
    assert cert.verifiers["picky"].error == "refused by the test adapter"
    fixture = corpus / "certs/matrix.ed25519.ed25519.fixed.der"
    assert (tmp_path / cert.path).read_bytes() == fixture.read_bytes()


@pytest.mark.slow
def test_the_matrix_and_the_summary(corpus: Path, tmp_path: Path) -> None:
    from fixturegen.harness.results import ResultsFile

    made = run_interop([target("good", str(corpus)), target("picky", str(corpus), "reject")],
                       tmp_path, timeout=3.0, startup=30.0, per_type=2)
    results = ResultsFile(schema_version=1, generator="test", corpus=str(corpus), seed=None,
                          catalogue=[], implementations=[], peer_made=made)
    columns, rows = interop_matrix(results)
    assert columns == ["reference"]  # no corpus run here: the reference is the only column
    assert [(r.maker, r.types, r.cells) for r in rows] == [
        ("good", ["ed25519"], [(2, 2)]), ("picky", ["ed25519"], [(2, 2)])]
    text = markdown(results)
    assert "| good | ed25519 | 2/2 |" in text
    # Markdown text is escaped (false\_reject renders as false_reject).
    assert ("- picky ed25519 by **picky**: false\\_reject, the verifier's fault: refused by "
            "the test adapter") in text
    assert "- good ecdsa: **hang**" in text
    # The results file round-trips through its schema (other tools read peer_made).
    from fixturegen.harness.results import load_results
    (tmp_path / "results.json").write_text(json.dumps(results.model_dump(mode="json")))
    assert load_results(tmp_path / "results.json").peer_made == made


def test_the_reply_model_carries_a_chain() -> None:
    reply = Reply.model_validate({"id": "g", "verdict": "accept", "peer_id": "p",
                                  "certificates": ["AA=="], "certificate_key": "k"})
    assert reply.certificates == ["AA=="] and reply.certificate_key == "k"


@pytest.mark.slow
def test_sender_flags_are_kept_shown_and_blame_the_maker(corpus: Path, tmp_path: Path) -> None:
    """A maker whose certificate carries a critical basicConstraints: the reference accepts it,
    but judges it as a sender; a receiver's refusal of it is the maker's fault, a refusal of a
    certificate without a sender flag the verifier's, and the reference's own refusal of a
    certificate with one is not a fixturegen bug."""
    from fixturegen.harness.pagedata import page_data
    from fixturegen.harness.results import ResultsFile, load_results

    sloppy = target("sloppy", str(corpus), "accept", "acceptable.critical-basic-constraints")
    broken = target("broken", str(corpus), "accept", "invalid.unknown-critical-extension")
    made = run_interop([target("good", str(corpus)), sloppy, broken,
                        target("picky", str(corpus), "reject")],
                       tmp_path, timeout=3.0, startup=30.0, per_type=1)
    by_maker = {c.maker: c for c in made.certificates}
    assert [(n.flag.value, n.detail) for n in by_maker["sloppy"].sender_flags] == [
        ("critical-extension", "2.5.29.19 (basicConstraints)")]
    assert by_maker["sloppy"].reference.verdict == "accept"
    assert by_maker["good"].sender_flags == [] and by_maker["picky"].sender_flags == []
    assert by_maker["broken"].reference.error == "unknown_critical_extension"
    results = ResultsFile(schema_version=2, generator="test", corpus=str(corpus), seed=None,
                          catalogue=[], implementations=[], peer_made=made)
    text = markdown(results)
    assert "- sloppy: `critical-extension` on 1 of 1: 2.5.29.19 (basicConstraints)" in text
    assert "- good: none on its 1 certificate(s)" in text
    # picky refuses everything: the maker's fault where the certificate gives it the right
    assert ("- sloppy ed25519 by **picky**: false\\_reject, the maker's fault "
            "(critical-extension): refused by the test adapter") in text
    assert ("- good ed25519 by **picky**: false\\_reject, the verifier's fault: refused by the "
            "test adapter") in text
    assert "- broken ed25519 by **reference**: reject, the maker's fault (critical-extension): " \
           "unknown\\_critical\\_extension" in text
    assert "fixturegen bug" not in text
    page = page_data(results)
    assert ("sloppy", "critical-extension", 1, 1, "2.5.29.19 (basicConstraints)") in \
        page.sender_rows
    assert ("good", "", 0, 1, "") in page.sender_rows
    from fixturegen.harness.pagedata import html
    page_html = html(page)
    assert ('<li class="R">sloppy: <code>critical-extension</code> on 1 of 1: '
            '<span class="said">2.5.29.19 (basicConstraints)</span></li>') in page_html
    assert "<li>good: none on its 1 certificate(s)</li>" in page_html
    assert "false_reject, the maker&#39;s fault (critical-extension)" in page_html
    from tools.docpages import results_pages  # the site's Results pages, from the same data
    site = results_pages(page)["handshakes.md"]
    assert "- sloppy: `critical-extension` on 1 of 1: 2.5.29.19 (basicConstraints)" in site
    assert "- good: none on its 1 certificate(s)" in site
    # results.json keeps them through its schema
    (tmp_path / "results.json").write_text(json.dumps(results.model_dump(mode="json")))
    assert load_results(tmp_path / "results.json").peer_made == made


def test_a_reference_refusal_without_a_sender_flag_is_a_fixturegen_bug(corpus: Path,
                                                                       tmp_path: Path) -> None:
    from fixturegen.harness.results import ResultsFile

    made = run_interop([target("odd", str(corpus), "accept", "invalid.extension-missing")],
                       tmp_path, timeout=3.0, startup=30.0, per_type=1)
    (cert,) = made.certificates
    assert cert.reference.error == "extension_missing" and cert.sender_flags == []
    results = ResultsFile(schema_version=2, generator="test", corpus=str(corpus), seed=None,
                          catalogue=[], implementations=[], peer_made=made)
    assert "- odd ed25519 by **reference**: fixturegen bug: extension\\_missing" in \
        markdown(results)


def test_a_refusal_is_the_makers_only_where_a_sender_flag_can_explain_it() -> None:
    """A receiver whose API check accepted the corpus's cases of a property (empty names, the
    critical basicConstraints/keyUsage/subjectAltName) did not refuse a peer-made certificate
    for it: its refusal is its own fault. The reference's refusal is the maker's when its error
    code is one the sender flag explains."""
    from fixturegen.harness.report import blame, tolerated
    from fixturegen.harness.results import (
        CaseResult,
        CellResult,
        Implementation,
        PeerMadeCertificate,
        PeerVerdict,
        ResultsFile,
        SenderNote,
    )
    from fixturegen.verify.codes import SenderFlag

    def entry(name: str, verdict: str) -> Implementation:
        ids = ["acceptable.empty-subject-and-issuer", "acceptable.critical-basic-constraints",
               "acceptable.critical-key-usage", "acceptable.critical-subject-alt-name"]
        return Implementation(name=name, package="p", version="1", verifier="v", command=[],
                              seconds=0.0, counts={}, cases=[CaseResult(
                                  id=i, verdict=verdict, peer_id=None, error=None,  # type: ignore[arg-type]
                                  outcome="acceptable", seconds=0.0) for i in ids])

    results = ResultsFile(schema_version=2, generator="t", corpus="c", seed=None, catalogue=[],
                          implementations=[entry("lenient", "accept"), entry("strict", "reject")])
    assert tolerated(results, "lenient") == {SenderFlag.EMPTY_ISSUER, SenderFlag.EMPTY_SUBJECT,
                                             SenderFlag.CRITICAL_EXTENSION}
    assert tolerated(results, "strict") == frozenset()
    assert tolerated(results, "absent") == frozenset()

    def cert(*notes: tuple[SenderFlag, str], error: str | None = None) -> PeerMadeCertificate:
        return PeerMadeCertificate(
            id="m.ed25519.1", maker="m", host_key_type="ed25519", path="p", peer_id="P",
            reference=PeerVerdict(verdict="reject" if error else "accept", error=error,
                                  peer_id=None),
            verifiers={}, sender_flags=[SenderNote(flag=f, detail=d) for f, d in notes])

    refused = CellResult(verdict="reject", error="no", peer_id=None, outcome="false_reject")
    empty = cert((SenderFlag.EMPTY_ISSUER, "issuer SEQUENCE {}"))
    known = cert((SenderFlag.CRITICAL_EXTENSION, "2.5.29.19 (basicConstraints)"))
    unknown = cert((SenderFlag.CRITICAL_EXTENSION, "2.5.29.19 (basicConstraints); 1.2.3.4"))
    lenient, strict = tolerated(results, "lenient"), tolerated(results, "strict")
    assert blame(empty, refused, lenient) == Blame("verifier", ())
    assert blame(empty, refused, strict) == Blame("maker", ("empty-issuer",))
    assert blame(known, refused, lenient) == Blame("verifier", ())
    assert blame(unknown, refused, lenient) == Blame("maker", ("critical-extension",))
    assert blame(empty, CellResult(verdict="accept", error=None, peer_id="P",
                                   outcome="agree"), strict) is None
    # the reference verifier: an empty issuer does not explain extension_missing
    missing = cert((SenderFlag.EMPTY_ISSUER, "issuer SEQUENCE {}"), error="extension_missing")
    assert blame(missing, missing.reference) == Blame("verifier", ())
    assert blame(missing, missing.reference).text("reject", "reference") == "fixturegen bug"  # type: ignore[union-attr]
    critical = cert((SenderFlag.CRITICAL_EXTENSION, "1.2.3.4"),
                    error="unknown_critical_extension")
    assert blame(critical, critical.reference) == Blame("maker", ("critical-extension",))
