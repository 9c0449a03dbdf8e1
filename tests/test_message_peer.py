"""The message-level peer (adapters/message-peer, tlslite-ng): what it sends is what the case
declares, read by Python's own TLS stack (OpenSSL's message callback hands over each handshake
message after decryption) and parsed here, never taken from the peer's report alone; and the
harness sends it exactly the cases crypto/tls cannot send."""

from __future__ import annotations

import base64
import datetime
import json
import socket
import ssl
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, rsa
from cryptography.x509.oid import NameOID

from fixturegen.harness.adapters import BY_NAME, PEER
from fixturegen.harness.driver import Answer
from fixturegen.harness.handshake import (
    MESSAGE_PEER,
    MESSAGE_PEER_BUILT,
    MESSAGE_PEER_MISSING,
    MESSAGE_SCHEMES,
    FixturePeer,
    HandshakeCase,
    Presentation,
    handshake_cases,
    message_peer_argv,
)
from fixturegen.harness.rules import PROTOCOL_FAULTS
from fixturegen.harness.session import Target, run_handshake
from tests.conftest import build_adapters
from tests.peers import Peer, ms, read_ms, running

CERTIFICATE, CERTIFICATE_VERIFY = 11, 15
SUPPORTED_GROUPS = 10
#: What the leaf's CertificateEntry carries under certificate-entry-extension: supported_groups
#: listing x25519.
FOREIGN = [(SUPPORTED_GROUPS, b"\x00\x02\x00\x1d")]


@pytest.fixture(scope="module")
def message_peer() -> list[str]:
    adapters = build_adapters("message-peer")
    return [str(adapters / part) for part in MESSAGE_PEER]


@pytest.fixture(scope="module")
def dial_plan(corpus: Path) -> dict[str, HandshakeCase]:
    return {c.id: c for c in handshake_cases(corpus, "tcp", "dial", 5.0)}


@dataclass
class Seen:
    """What Python's TLS stack received: each handshake message's body by type, and how the
    handshake ended (None: it completed)."""

    messages: dict[int, bytes] = field(default_factory=dict)
    error: str | None = None


def _watch(context: ssl.SSLContext, seen: Seen) -> None:
    def callback(_conn: object, direction: str, _version: object, content: object,
                 kind: object, data: bytes) -> None:
        if direction != "read" or getattr(content, "name", "") != "HANDSHAKE" or len(data) < 4:
            return
        length = int.from_bytes(data[1:4], "big")
        if len(data) == 4 + length:  # the message with its header: type, 24-bit length
            seen.messages[data[0]] = bytes(data[4:])

    context._msg_callback = callback  # type: ignore[attr-defined]


def _scheme(verify: bytes) -> tuple[int, int]:
    """A CertificateVerify body's scheme and signature length."""
    scheme, length = struct.unpack(">HH", verify[:4])
    assert len(verify) == 4 + length
    return scheme, length


def _entries(certificate: bytes) -> list[tuple[bytes, list[tuple[int, bytes]]]]:
    """A TLS 1.3 Certificate body's entries: each certificate and its extensions."""
    context_length = certificate[0]
    at = 1 + context_length
    end = at + 3 + int.from_bytes(certificate[at:at + 3], "big")
    at += 3
    out = []
    while at < end:
        n = int.from_bytes(certificate[at:at + 3], "big")
        der = certificate[at + 3:at + 3 + n]
        at += 3 + n
        ext_end = at + 2 + int.from_bytes(certificate[at:at + 2], "big")
        at += 2
        extensions = []
        while at < ext_end:
            kind, size = struct.unpack(">HH", certificate[at:at + 4])
            extensions.append((kind, certificate[at + 4:at + 4 + size]))
            at += 4 + size
        out.append((der, extensions))
    assert at == end == len(certificate)
    return out


def _dial(peer: Peer, presentation: Presentation) -> Seen:
    """The peer as TLS server with ``presentation``; Python's TLS stack dials it."""
    listening = peer.request(presentation, case="dial", transport="tcp", role="server",
                             protocol=presentation.protocol, scheme=presentation.scheme,
                             fault=presentation.fault)
    assert listening["event"] == "listening", listening
    host, port = listening["address"].rsplit(":", 1)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.set_alpn_protocols(["libp2p"])
    seen = Seen()
    _watch(context, seen)
    with socket.create_connection((host, int(port)), timeout=60) as raw:
        raw.sendall(ms("/multistream/1.0.0", "/tls/1.0.0"))
        assert [read_ms(raw), read_ms(raw)] == ["/multistream/1.0.0", "/tls/1.0.0"]
        try:
            with context.wrap_socket(raw):
                pass
        except ssl.SSLError as exc:
            seen.error = exc.reason
    peer.send({"id": "dial", "stop": True, "verdict": "reject"})
    assert peer.event()["event"] == "done"
    return seen


def _leaf(presentation: Presentation) -> bytes:
    return base64.b64decode(presentation.certificates[0])


@pytest.mark.parametrize(("case", "scheme", "signature_length", "refused"), [
    # A valid RSASSA-PKCS1-v1_5 signature (2048-bit key): OpenSSL refuses the scheme in TLS 1.3.
    ("cv-invalid.rsa-pss.server.pkcs1", 0x0401, 256, "WRONG_SIGNATURE_TYPE"),
    ("rule.certificate-verify-sha1.server", 0x0203, None, "WRONG_SIGNATURE_TYPE"),
    # Ed448 honest (114-byte signatures): completes.
    ("cv.matrix.ed448.ed25519.fixed.server", 0x0808, 114, None),
    ("matrix.ed448.ed25519.fixed", 0x0808, 114, None),
    # ed448 announced, an Ed25519 key's 64-byte signature: OpenSSL refuses the scheme for the key.
    ("cv-invalid.ed25519.server.scheme-mismatch", 0x0808, 64, "WRONG_SIGNATURE_TYPE"),
])
def test_the_certificate_verify_is_what_the_case_declares(
        message_peer: list[str], dial_plan: dict[str, HandshakeCase], case: str, scheme: int,
        signature_length: int | None, refused: str | None) -> None:
    presentation = dial_plan[case].presentation
    assert presentation.peer == "message"
    with running(message_peer) as p:
        seen = _dial(p, presentation)
        p.close()
    sent, length = _scheme(seen.messages[CERTIFICATE_VERIFY])
    assert sent == scheme
    if signature_length is not None:
        assert length == signature_length
    else:  # an ECDSA signature by the P-256 key: a DER SEQUENCE of two integers
        assert 8 <= length <= 72 and seen.messages[CERTIFICATE_VERIFY][4] == 0x30
    # the case's certificate, byte for byte, with no extension in its entry
    assert _entries(seen.messages[CERTIFICATE]) == [(_leaf(presentation), [])]
    assert seen.error == refused


def test_the_certificate_entry_carries_the_foreign_extension(
        message_peer: list[str], dial_plan: dict[str, HandshakeCase]) -> None:
    """The leaf's entry carries supported_groups, which OpenSSL refuses there: it stops at
    the Certificate and reads no CertificateVerify."""
    presentation = dial_plan["rule.certificate-entry-extension.server"].presentation
    assert presentation.peer == "message"
    with running(message_peer) as p:
        seen = _dial(p, presentation)
        p.close()
    assert _entries(seen.messages[CERTIFICATE]) == [(_leaf(presentation), FOREIGN)]
    assert CERTIFICATE_VERIFY not in seen.messages
    assert seen.error == "BAD_EXTENSION"


def _throwaway(kind: str, folder: Path, name: str) -> tuple[Path, str, bytes]:
    """A self-signed certificate of the key type (PEM file), its PKCS#8 key and its DER: what
    the message peer presents as client, to a Python server that trusts exactly it."""
    key: Any = {"p256": lambda: ec.generate_private_key(ec.SECP256R1()),
                "rsa": lambda: rsa.generate_private_key(65537, 2048),
                "ed448": ed448.Ed448PrivateKey.generate}[kind]()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"message-peer {name}")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, None if kind == "ed448" else hashes.SHA256()))
    path = folder / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    return path, pem, cert.public_bytes(serialization.Encoding.DER)


@dataclass(frozen=True)
class Throwaway:
    certificates: tuple[str, ...]
    key: str | None


def _listen(peer: Peer, tmp_path: Path, kind: str, **request: Any) -> tuple[Seen, bytes]:
    """A Python TLS server that requires a client certificate (trusting only the throwaway
    one); the message peer dials it as client with ``request``'s fault."""
    trusted, pem, der = _throwaway(kind, tmp_path, "client")
    server_cert, server_pem, _ = _throwaway("p256", tmp_path, "server")
    key_file = tmp_path / "server.key"
    key_file.write_text(server_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(server_cert, key_file)
    context.load_verify_locations(cafile=trusted)
    context.verify_mode = ssl.CERT_REQUIRED
    context.set_alpn_protocols(["libp2p"])
    seen = Seen()
    _watch(context, seen)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(60)
            assert [read_ms(conn), read_ms(conn)] == ["/multistream/1.0.0", "/tls/1.0.0"]
            conn.sendall(ms("/multistream/1.0.0", "/tls/1.0.0"))
            try:
                with context.wrap_socket(conn, server_side=True):
                    pass
            except ssl.SSLError as exc:
                seen.error = exc.reason

    server = threading.Thread(target=serve)
    server.start()
    ready = peer.request(Throwaway((base64.b64encode(der).decode(),), pem), case="listen",
                         transport="tcp", role="client", **request)
    assert ready["event"] == "ready", ready
    peer.send({"id": "listen", "address": f"127.0.0.1:{listener.getsockname()[1]}"})
    server.join(90)
    listener.close()
    done = peer.event()
    assert done["event"] == "done"
    return seen, der


@pytest.mark.parametrize(("kind", "request_fields", "scheme", "extensions", "refused"), [
    ("rsa", {"protocol": "", "scheme": 0x0401}, 0x0401, [], "WRONG_SIGNATURE_TYPE"),
    ("p256", {"protocol": "certificate-verify-sha1"}, 0x0203, [], "WRONG_SIGNATURE_TYPE"),
    ("p256", {"protocol": "certificate-entry-extension"}, 0x0403, FOREIGN, "BAD_EXTENSION"),
    ("ed448", {"protocol": ""}, 0x0808, [], None),
])
def test_as_client_it_sends_what_the_case_declares(
        message_peer: list[str], tmp_path: Path, kind: str, request_fields: dict[str, Any],
        scheme: int, extensions: list[tuple[int, bytes]], refused: str | None) -> None:
    with running(message_peer) as p:
        seen, der = _listen(p, tmp_path, kind, **request_fields)
        p.close()
    assert _entries(seen.messages[CERTIFICATE]) == [(der, extensions)]
    if extensions:  # OpenSSL stops at the Certificate: no CertificateVerify is read
        assert CERTIFICATE_VERIFY not in seen.messages
    else:
        assert _scheme(seen.messages[CERTIFICATE_VERIFY])[0] == scheme
    assert seen.error == refused


def test_the_harness_sends_the_message_peer_only_what_crypto_tls_cannot(
        corpus: Path) -> None:
    """Over TCP: every case with a PKCS#1 v1.5 or Ed448 CertificateVerify, an Ed448 key or a
    message-level rule goes to the message peer, and nothing else does; over QUIC they are
    skip, with the reason."""
    message_rules = {f.name for f in PROTOCOL_FAULTS if f.peer == "message"}
    manifest = json.loads((corpus / "manifest.json").read_text())
    ed448_leaves = {base64.b64encode((corpus / fx["chain"][0]).read_bytes()).decode()
                    for fx in manifest["fixtures"]
                    if (fx.get("certificate") or {}).get("key", {}).get("type") == "ed448"}
    assert len(ed448_leaves) >= 9
    assert message_rules == {"certificate-verify-sha1", "certificate-entry-extension"}
    for direction in ("dial", "listen"):
        tcp = handshake_cases(corpus, "tcp", direction, 5.0)  # type: ignore[arg-type]
        quic = {c.id: c for c in handshake_cases(corpus, "quic", direction, 5.0)}  # type: ignore[arg-type]
        routed = [c for c in tcp if c.presentation.peer == "message"]
        assert len(routed) >= 20
        for c in tcp:
            p = c.presentation
            leaf = p.certificates[0] if p.certificates else None
            needs = (p.scheme in MESSAGE_SCHEMES or leaf in ed448_leaves
                     or (c.id.startswith("rule.") and c.id.split(".")[1] in message_rules))
            assert (p.peer == "message") == needs, c.id
            if needs and c.id in quic:
                assert quic[c.id].skip is not None and "TCP only" in quic[c.id].skip
        assert not [c for c in quic.values() if c.id.startswith("rule.certificate-")]


def test_without_the_message_peer_built_its_cases_are_skip_with_the_reason(
        tmp_path: Path) -> None:
    peer = tmp_path / "fixture-peer" / "fixture-peer"
    peer.parent.mkdir()
    peer.write_text("")
    for part in MESSAGE_PEER:  # a venv whose install did not finish
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / part).write_text("")
    assert message_peer_argv([str(peer)]) is None
    (tmp_path / MESSAGE_PEER_BUILT).write_text("")
    assert message_peer_argv([str(peer)]) == [str(tmp_path / part) for part in MESSAGE_PEER]



def test_a_case_for_the_message_peer_is_skip_when_it_is_not_built(
        dial_plan: dict[str, HandshakeCase]) -> None:
    """Without the message peer, its cases are skip with the reason, and no peer starts (the
    fixture peer's command here does not exist)."""
    case = dial_plan["rule.certificate-verify-sha1.server"]
    peer = FixturePeer(["/nonexistent/fixture-peer"], [case], "tcp", "dial", 5.0, None)
    answer = peer.before(case.case.request)
    assert isinstance(answer, Answer)
    assert (answer.verdict, answer.error) == ("skip", MESSAGE_PEER_MISSING)
    assert peer.procs == {"go": None, "message": None}


MESSAGE_CASES = ("cv-invalid.rsa-pss.{side}.pkcs1", "rule.certificate-verify-sha1.{side}",
                 "rule.certificate-entry-extension.{side}", "matrix.ed448.ed25519.fixed")


@pytest.mark.parametrize(("name", "direction"), [
    ("go-libp2p", "dial"), ("go-libp2p", "listen"), ("js-libp2p", "dial")])
def test_real_handshakes_through_the_message_peer(corpus: Path, tmp_path: Path, name: str,
                                                  direction: str) -> None:
    """Real libraries meet what crypto/tls cannot send. go-libp2p (Go's crypto/tls) refuses a
    SHA-1 CertificateVerify, offers neither PKCS#1 v1.5 nor Ed448 (skip, naming what it
    offered), and completes a handshake whose CertificateEntry carries supported_groups: a
    false accept, pinned (crypto/tls skips the extensions it does not parse there).
    js-libp2p (Node's OpenSSL) refuses the PKCS#1 v1.5 signature and the extension, and
    accepts Ed448."""
    adapter = BY_NAME[name]
    adapters = build_adapters("fixture-peer", "message-peer")
    if not adapter.built(adapters):
        pytest.skip(f"{name} is not built: run 'make adapters'")
    target = Target(adapter.name, adapter.package, adapter.version, adapter.verifier,
                    tuple(adapter.argv(adapters)), adapter.handshake, adapter.transports)
    side = "server" if direction == "dial" else "client"
    ids = [c.format(side=side) for c in MESSAGE_CASES]
    plan = {c.id: c for c in handshake_cases(corpus, "tcp", direction, 10.0)}  # type: ignore[arg-type]
    entry = run_handshake(target, [str(adapters / PEER)], [plan[i] for i in ids], "tcp",
                          direction, timeout=20.0, startup=60.0,  # type: ignore[arg-type]
                          stderr_path=tmp_path / "stderr.log")
    got = {c.id: c for c in entry.cases}
    pkcs1, sha1, extension, ed448_key = (got[i] for i in ids)
    assert (sha1.verdict, sha1.outcome) == ("reject", "agree")
    assert sha1.peer is not None and sha1.peer.scheme == 0x0203
    if name == "go-libp2p":
        assert "invalid signature algorithm" in (sha1.error or "")
        assert (extension.verdict, extension.outcome) == ("accept", "false_accept")
        for skipped in (pkcs1, ed448_key):
            assert skipped.outcome == "skip" and "offered [0x" in (skipped.error or "")
    else:
        assert (pkcs1.verdict, pkcs1.outcome) == ("reject", "agree")
        assert "wrong signature type" in (pkcs1.error or "")
        assert (extension.verdict, extension.outcome) == ("reject", "agree")
        assert "bad extension" in (extension.error or "")
        assert (ed448_key.verdict, ed448_key.outcome) == ("accept", "acceptable")
        assert ed448_key.peer is not None and ed448_key.peer.scheme == 0x0808


def test_a_bad_request_gets_one_line_and_the_peer_goes_on(
        message_peer: list[str], dial_plan: dict[str, HandshakeCase]) -> None:
    """Each bad request is answered with ``cannot_present`` and one line saying why (an
    unreadable line, QUIC, an unknown fault or rule, no key); a client whose address never
    comes gives up at its deadline; a stop for a request already done is ignored; the next
    good request still runs."""
    base = dial_plan["rule.certificate-verify-sha1.server"].presentation
    with running(message_peer) as p:
        p.send({"id": "gone", "stop": True, "verdict": "reject"})
        assert p.proc.stdin is not None
        p.proc.stdin.write("{not json\n")
        p.proc.stdin.flush()
        unreadable = p.event()
        assert unreadable["outcome"] == "cannot_present"
        assert unreadable["error"].startswith("message-peer: unreadable request")
        said = {
            "quic": p.request(base, case="q", transport="quic", role="server", protocol=""),
            "fault": p.request(base, case="f", transport="tcp", role="server", protocol="",
                               fault="signature-corrupted"),
            "rule": p.request(base, case="r", transport="tcp", role="server",
                              protocol="tls12-only"),
            "key": p.request(Throwaway(base.certificates, None), case="k", transport="tcp",
                             role="server", protocol=""),
        }
        assert {k: e["outcome"] for k, e in said.items()} == dict.fromkeys(said,
                                                                           "cannot_present")
        assert "TCP only" in said["quic"]["error"]
        assert "cannot send fault 'signature-corrupted'" in said["fault"]["error"]
        assert "'tls12-only' cannot be produced as server" in said["rule"]["error"]
        assert "needs a certificate and its key" in said["key"]["error"]
        ready = p.request(base, case="late", transport="tcp", role="client", protocol="",
                          timeout_ms=400)
        assert ready["event"] == "ready"
        gave_up = p.event()  # no address line is ever sent
        assert (gave_up["id"], gave_up["outcome"]) == ("late", "failed")
        assert "no address before the deadline" in gave_up["error"]
        honest = _dial(p, base)
        assert _scheme(honest.messages[CERTIFICATE_VERIFY])[0] == 0x0203
        p.close()
    assert p.proc.returncode == 0
