"""The interop stage: what each implementation makes, checked by the reference and by all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fixturegen.harness.interop import run_interop
from fixturegen.harness.protocol import Reply
from fixturegen.harness.report import interop_matrix, markdown
from fixturegen.harness.session import Target

ROOT = Path(__file__).resolve().parents[1]
MAKER = str(ROOT / "tests/adapters/maker.py")


def target(name: str, *args: str) -> Target:
    return Target(name, "test", "0", "test adapter", (sys.executable, MAKER, *args))


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
    assert "- picky ed25519 by **picky**: false\\_reject: refused by the test adapter" in text
    assert "- good ecdsa: **hang**" in text
    # The results file round-trips through its schema (other tools read peer_made).
    from fixturegen.harness.results import load_results
    (tmp_path / "results.json").write_text(json.dumps(results.model_dump(mode="json")))
    assert load_results(tmp_path / "results.json").peer_made == made


def test_the_reply_model_carries_a_chain() -> None:
    reply = Reply.model_validate({"id": "g", "verdict": "accept", "peer_id": "p",
                                  "certificates": ["AA=="], "certificate_key": "k"})
    assert reply.certificates == ["AA=="] and reply.certificate_key == "k"
