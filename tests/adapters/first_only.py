"""A test adapter that masks faults the way real verifiers do: it reads only the first
extension of a certificate (as js-libp2p does), and it supports no RSA host key (its
libp2p extension holds the start of an RSA PublicKey protobuf, ``08 00 12``); any other
certificate it gives to fixturegen's reference verifier. A real process on the harness
protocol; CertificateVerify requests it skips."""

import base64
import json
import sys

from cryptography import x509

from fixturegen.verify.verifier import Verifier

LIBP2P = x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")
RSA_HOST_KEY = b"\x08\x00\x12"


def answer(verifier: Verifier, request: dict) -> dict:
    reply = {"id": request["id"], "verdict": "reject", "peer_id": None, "error": None}
    if request.get("kind", "certificate") != "certificate":
        return {**reply, "verdict": "skip", "error": "certificates only"}
    chain = [base64.b64decode(c) for c in request["certificates"]]
    try:
        extensions = x509.load_der_x509_certificate(chain[0]).extensions
        first = extensions[0] if len(extensions) else None
    except ValueError as exc:
        return {**reply, "error": f"unreadable certificate: {exc}"}
    if first is None or first.oid != LIBP2P:
        return {**reply, "error": "no libp2p extension (only the first extension is read)"}
    if RSA_HOST_KEY in first.value.value:
        return {**reply, "error": "RSA host keys are not supported"}
    verdict = verifier.verify(chain, expect_peer_id=request.get("expect_peer_id"))
    if verdict.accepted:
        return {**reply, "verdict": "accept", "peer_id": verdict.peer_id}
    return {**reply, "error": f"{verdict.error}: {verdict.detail}"}


verifier = Verifier()
for line in sys.stdin:
    sys.stdout.write(json.dumps(answer(verifier, json.loads(line))) + "\n")
    sys.stdout.flush()
