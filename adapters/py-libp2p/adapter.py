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

A ``generate`` request makes a certificate for a fresh host key with the mode's own maker:
``libp2p.security.tls.certificate.generate_certificate`` with ``create_cert_template()`` (what
``TLSTransport.__init__`` does), or the QUIC transport's ``CertificateGenerator`` (what
``QUICTLSConfigManager`` does).

One JSON request per line on stdin, one JSON result per line on stdout; the protocol is in
fixturegen's README. Neither verifier checks a TLS CertificateVerify, so those requests are
answered ``skip``. In ``tls`` mode a ``handshake`` request runs the real TCP upgrade
(``handshake.py``); in ``quic`` mode, over the QUIC transport (``quic.py``).
"""

from __future__ import annotations

import base64
import json
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from cryptography import x509
from libp2p.peer.id import ID
from peer_text import parse_peer_id

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


Maker = Callable[[Any], tuple[list[bytes], str | None]]


def host_key(kind: object) -> Any:
    """A fresh py-libp2p key pair of a fixturegen host key type (None if it has none)."""
    from libp2p.crypto import ecc, ed25519, rsa, secp256k1

    makers: dict[object, Callable[[], Any]] = {
        "ed25519": ed25519.create_new_key_pair, "secp256k1": secp256k1.create_new_key_pair,
        "ecdsa": lambda: ecc.create_new_key_pair("P-256"),
        "rsa": lambda: rsa.create_new_key_pair(2048)}
    make = makers.get(kind)
    return make() if make is not None else None


def tls_maker() -> Maker:
    from cryptography.hazmat.primitives import serialization
    from libp2p.security.tls.certificate import create_cert_template, generate_certificate

    def make(private_key: Any) -> tuple[list[bytes], str | None]:
        cert_pem, key_pem = generate_certificate(private_key, create_cert_template())
        cert = x509.load_pem_x509_certificate(cert_pem.encode())
        return [cert.public_bytes(serialization.Encoding.DER)], key_pem

    return make


def quic_maker() -> Maker:
    from libp2p.transport.quic.security import CertificateGenerator

    generator = CertificateGenerator()

    def make(private_key: Any) -> tuple[list[bytes], str | None]:
        config = generator.generate_certificate(private_key, ID.from_pubkey(
            private_key.get_public_key()))
        return [config.get_certificate_der()], config.get_private_key_pem().decode()

    return make


def generate(make: Maker, request: dict[str, Any]) -> Verdict:
    case = str(request.get("id", ""))
    pair = host_key(request.get("host_key_type"))
    if pair is None:
        return {"id": case, "verdict": "skip", "peer_id": None,
                "error": f"adapter: unknown host key type {request.get('host_key_type')!r}"}
    try:
        chain, key = make(pair.private_key)
        peer_id = ID.from_pubkey(pair.public_key)
    except Exception as exc:
        return {"id": case, "verdict": "reject", "peer_id": None,
                "error": f"{type(exc).__name__}: {exc}"}
    return {"id": case, "verdict": "accept", "peer_id": peer_id.to_base58(), "error": None,
            "certificates": [base64.b64encode(c).decode() for c in chain],
            "certificate_key": key}


def answer(verify: Callable[[bytes, ID | None], ID], request: dict[str, Any],
           make: Maker | None = None) -> Verdict:
    case = str(request.get("id", ""))
    if request.get("kind") == "generate" and make is not None:
        return generate(make, request)
    if request.get("kind", "certificate") != "certificate":
        return {"id": case, "verdict": "skip", "peer_id": None,
                "error": "py-libp2p's verifier does not check a CertificateVerify"}
    try:
        leaf = base64.b64decode(request["certificates"][0], validate=True)
        wanted = request.get("expect_peer_id")
        expected = parse_peer_id(wanted) if wanted else None
    except Exception as exc:
        return {"id": case, "verdict": "reject", "peer_id": None,
                "error": f"adapter: bad request: {exc}"}
    try:
        peer_id = verify(leaf, expected)
    except Exception as exc:
        return {"id": case, "verdict": "reject", "peer_id": None,
                "error": f"{type(exc).__name__}: {exc}"}
    return {"id": case, "verdict": "accept", "peer_id": peer_id.to_base58(), "error": None}


WHAT = {"tls": "TLS security transport (libp2p.security.tls, in py-libp2p from 0.4.0)",
        "quic": "QUIC transport (libp2p.transport.quic, in py-libp2p from 0.3.0)"}


def keep_stdout() -> None:
    """Standard output carries the replies alone. py-libp2p 0.3.0's QUIC listener module calls
    ``logging.basicConfig(level=DEBUG, handlers=[StreamHandler(sys.stdout)])`` when imported:
    such a handler of the root logger is dropped (warnings still reach stderr)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "stream", None) is sys.stdout:
            root.removeHandler(handler)


def installed() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libp2p")
    except PackageNotFoundError:
        return "(version unknown)"


def announce(line: dict[str, str]) -> None:
    """A handshake's line before its reply (where it listens)."""
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def main() -> int:
    modes = {"tls": tls_verifier, "quic": quic_verifier}
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        print("usage: adapter.py tls|quic", file=sys.stderr)
        return 2
    missing = None
    up = None
    try:
        verify = modes[sys.argv[1]]()
        make = {"tls": tls_maker, "quic": quic_maker}[sys.argv[1]]()
        if sys.argv[1] == "tls":
            from handshake import upgrader

            up = upgrader()
    except ImportError as exc:  # an older py-libp2p, without this mode's transport
        missing = (f"adapter: py-libp2p {installed()} has no {WHAT[sys.argv[1]]} "
                   f"({type(exc).__name__}: {exc})")
    keep_stdout()
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:  # one reader, so that a listening handshake can see a cancel line
        for text in sys.stdin:
            lines.put(text)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    while (line := lines.get()) is not None:
        if not line.strip() or '"cancel"' in line:
            continue  # a cancel that came after its answer
        started = time.process_time()
        request: Any = None
        reply: Verdict
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                reply = {"id": "", "verdict": "skip", "peer_id": None,
                         "error": "adapter: not an object"}
            elif missing is not None:
                reply = {"id": str(request.get("id", "")), "verdict": "skip", "peer_id": None,
                         "error": missing}
            elif request.get("kind") == "handshake" and up is not None:
                from handshake import handshake

                reply = handshake(request, up, announce)
            elif request.get("kind") == "handshake":
                from quic import handshake as quic_handshake

                keep_stdout()
                reply = quic_handshake(request, announce, lines)
            else:
                reply = answer(verify, request, make)
        except json.JSONDecodeError as exc:
            reply = {"id": "", "verdict": "skip", "peer_id": None,
                     "error": f"adapter: unreadable request: {exc}"}
        if isinstance(request, dict) and request.get("kind", "certificate") in (
                "handshake", "certificate", "certificate_verify"):
            reply["cpu_seconds"] = round(time.process_time() - started, 6)  # user+system
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
