"""fixturegen harness adapter for py-libp2p (the PyPI package ``libp2p``).

``adapter.py tls``  runs ``libp2p.security.tls.certificate.verify_certificate_chain``, as the TLS
security transport does in a handshake: it loads the peer's leaf certificate (Python's ssl only
hands over the leaf: ``getpeercert(binary_form=True)``), calls the verifier with ``[leaf]``
(``TLSTransport._extract_public_key_from_cert``), derives the PeerId with ``ID.from_pubkey`` and
compares it with the one dialled (``secure_outbound``).

``adapter.py quic`` runs the QUIC transport's verifier,
``libp2p.transport.quic.security.PeerAuthenticator.verify_peer_certificate`` (what
``QUICTLSConfigManager.verify_peer_identity`` calls), on aioquic's leaf certificate with the
expected PeerId, as ``QUICConnection._verify_peer_identity_with_security`` does.

One JSON request per line on stdin, one JSON result per line on stdout; the protocol is in
fixturegen's README. Neither verifier checks a TLS CertificateVerify, so those requests are
answered ``skip``.
"""

from __future__ import annotations

import base64
import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from cryptography import x509
from libp2p.peer.id import ID

logging.disable(logging.CRITICAL)

Verdict = dict[str, Any]


def tls_verifier() -> Callable[[bytes, ID | None], ID]:
    from libp2p.security.tls.certificate import verify_certificate_chain

    def verify(leaf: bytes, expected: ID | None) -> ID:
        cert = x509.load_der_x509_certificate(leaf)
        peer_id = ID.from_pubkey(verify_certificate_chain([cert]))
        if expected is not None and peer_id != expected:
            raise ValueError(f"Peer ID mismatch: expected {expected} got {peer_id}")
        return peer_id

    return verify


def quic_verifier() -> Callable[[bytes, ID | None], ID]:
    from libp2p.transport.quic.security import PeerAuthenticator

    authenticator = PeerAuthenticator()

    def verify(leaf: bytes, expected: ID | None) -> ID:
        cert = x509.load_der_x509_certificate(leaf)
        peer_id = authenticator.verify_peer_certificate(cert, expected)
        if expected is not None and peer_id != expected:
            raise ValueError(f"Peer ID mismatch: expected {expected}, got {peer_id}")
        return peer_id

    return verify


def answer(verify: Callable[[bytes, ID | None], ID], request: dict[str, Any]) -> Verdict:
    case = str(request.get("id", ""))
    if request.get("kind", "certificate") != "certificate":
        return {"id": case, "verdict": "skip", "peer_id": None,
                "error": "py-libp2p's verifier does not check a CertificateVerify"}
    try:
        leaf = base64.b64decode(request["certificates"][0], validate=True)
        wanted = request.get("expect_peer_id")
        expected = ID.from_base58(wanted) if wanted else None
    except Exception as exc:
        return {"id": case, "verdict": "reject", "peer_id": None,
                "error": f"adapter: bad request: {exc}"}
    try:
        peer_id = verify(leaf, expected)
    except Exception as exc:
        return {"id": case, "verdict": "reject", "peer_id": None,
                "error": f"{type(exc).__name__}: {exc}"}
    return {"id": case, "verdict": "accept", "peer_id": peer_id.to_base58(), "error": None}


def main() -> int:
    modes = {"tls": tls_verifier, "quic": quic_verifier}
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        print("usage: adapter.py tls|quic", file=sys.stderr)
        return 2
    verify = modes[sys.argv[1]]()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            reply = answer(verify, request) if isinstance(request, dict) else {
                "id": "", "verdict": "skip", "peer_id": None, "error": "adapter: not an object"}
        except json.JSONDecodeError as exc:
            reply = {"id": "", "verdict": "skip", "peer_id": None,
                     "error": f"adapter: unreadable request: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
