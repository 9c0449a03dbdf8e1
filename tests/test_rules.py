"""The handshake's own rules (fixturegen.harness.rules): each protocol fault is produced as
declared, shown on what the fixture peer actually sends, read by this project's own parser
(tests/wire.py) or by Python's own TLS stack, never by the peer's report alone; and the harness
plans each fault where the catalogue says, with the outcome it requires."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

import pytest

from fixturegen.harness.adapters import PEER
from fixturegen.harness.handshake import HandshakeCase, Presentation, handshake_cases
from fixturegen.harness.rules import BASE_FIXTURE, PREFIX, PROTOCOL_FAULTS
from tests.conftest import build_adapters
from tests.peers import Peer, ms, read_ms, running
from tests.wire import (
    ClientHello,
    client_hello_from_crypto,
    client_hello_from_records,
    initial_crypto,
)

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "adapters"
TLS12, TLS13 = 0x0303, 0x0304
MUXERS = ("/yamux/1.0.0", "/mplex/6.7.0")
#: What each fault the peer commits as a client puts in its ClientHello: (the versions it
#: offers, its ALPN list or None when it sends no ALPN extension). "" is the honest peer.
CLIENT_HELLO: dict[str, tuple[tuple[int, ...], tuple[str, ...] | None]] = {
    "": ((TLS13,), ("libp2p",)),
    "tls12-only": ((TLS12,), ("libp2p",)),
    "tls12-and-tls13": ((TLS13, TLS12), ("libp2p",)),
    "alpn-absent": ((TLS13,), None),
    "alpn-without-libp2p": ((TLS13,), ("h2",)),
    "alpn-muxers-only": ((TLS13,), MUXERS),
    "alpn-muxers-then-libp2p": ((TLS13,), (*MUXERS, "libp2p")),
    "alpn-libp2p-first": ((TLS13,), ("libp2p", MUXERS[0])),
}


@pytest.fixture(scope="module")
def peer() -> Path:
    """The fixture peer, built from this checkout (its Go build is quick when up to date)."""
    return build_adapters("fixture-peer") / PEER


@pytest.fixture(scope="module")
def base(corpus: Path) -> Presentation:
    """The base fixture's chain and key, as the rule cases present them."""
    case = next(c for c in handshake_cases(corpus, "tcp", "listen", 5.0)
                if c.id == BASE_FIXTURE)
    return case.presentation


def _client_hello_over_tcp(peer: Peer, base: Presentation, protocol: str) -> ClientHello:
    """Listen, let the peer dial with ``protocol``, answer multistream-select, and read its
    first TLS records; then close (the peer's attempt fails, which it reports)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(60)
        ready = peer.request(base, case="capture", transport="tcp", role="client",
                             protocol=protocol)
        assert ready["event"] == "ready", ready
        peer.send({"id": "capture", "address": "{}:{}".format(*server.getsockname())})
        conn, _ = server.accept()
        with conn:
            conn.settimeout(60)
            assert [read_ms(conn), read_ms(conn)] == ["/multistream/1.0.0", "/tls/1.0.0"]
            conn.sendall(ms("/multistream/1.0.0", "/tls/1.0.0"))
            stream = b""
            hello = None
            while hello is None:
                chunk = conn.recv(4096)
                assert chunk, "the peer closed before its ClientHello was whole"
                stream += chunk
                hello = client_hello_from_records(stream)
    done = peer.event()
    assert done["event"] == "done" and done["outcome"] == "failed"
    return hello


def _client_hello_over_quic(peer: Peer, base: Presentation, protocol: str) -> ClientHello:
    """Bind a UDP port, let the peer dial it over QUIC with ``protocol`` and decrypt its
    Initial packets until the ClientHello is whole; then stop the peer's attempt."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        udp.settimeout(60)
        ready = peer.request(base, case="capture", transport="quic", role="client",
                             protocol=protocol)
        assert ready["event"] == "ready", ready
        peer.send({"id": "capture", "address": "{}:{}".format(*udp.getsockname())})
        frames: list[tuple[int, bytes]] = []
        hello = None
        while hello is None:
            frames += initial_crypto(udp.recv(65536))
            hello = client_hello_from_crypto(frames)
        peer.send({"id": "capture", "stop": True, "verdict": "reject"})
    done = peer.event()
    assert done["event"] == "done" and done["outcome"] in ("failed", "complete")
    return hello


def _listen_faults(transport: str) -> list[str]:
    """The faults the fixture peer commits as a client (the message-level peer's are shown in
    tests/test_message_peer.py)."""
    return sorted({f.protocol for f in PROTOCOL_FAULTS if f.peer == "go"
                   and f.carried(transport, "listen")} | {""})  # type: ignore[arg-type]


def test_every_client_side_fault_has_its_capture_declared() -> None:
    """A fault the peer commits as a client without a row here would go unchecked."""
    assert set(_listen_faults("tcp")) | set(_listen_faults("quic")) == set(CLIENT_HELLO)


@pytest.mark.parametrize(("transport", "protocol"), [
    (t, p) for t in ("tcp", "quic") for p in _listen_faults(t)])
def test_the_client_hello_carries_the_fault(peer: Path, base: Presentation, transport: str,
                                            protocol: str) -> None:
    capture = _client_hello_over_tcp if transport == "tcp" else _client_hello_over_quic
    with running(peer) as p:
        hello = capture(p, base, protocol)
        p.close()
    assert (hello.versions, hello.alpn) == CLIENT_HELLO[protocol]
    assert hello.legacy_version == TLS12  # TLS 1.3 keeps 0x0303 there too (RFC 8446 4.1.2)


def _certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A throwaway client certificate for Python's TLS stack (the peer judges nothing)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "client")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "client.pem", tmp_path / "client.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@dataclass(frozen=True)
class Dialled:
    """What Python's TLS stack saw, dialling the peer: the version and ALPN agreed (None when
    the handshake failed) and the handshake messages it received, by type (OpenSSL's message
    callback: after decryption, so a TLS 1.3 CertificateRequest is seen too)."""

    version: str | None
    alpn: str | None
    received: frozenset[str]


def _dial(peer: Peer, base: Presentation, protocol: str, *, highest: ssl.TLSVersion,
          client: tuple[Path, Path], alpn: tuple[str, ...] = ("libp2p",)) -> Dialled:
    """Dial the peer (as server, with ``protocol``) with Python's TLS stack, offering TLS 1.2 up
    to ``highest`` and the ALPN list ``alpn``, with a certificate to present if asked."""
    listening = peer.request(base, case="dial", transport="tcp", role="server",
                             protocol=protocol)
    assert listening["event"] == "listening", listening
    host, port = listening["address"].rsplit(":", 1)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.minimum_version, context.maximum_version = ssl.TLSVersion.TLSv1_2, highest
    if alpn:
        context.set_alpn_protocols(list(alpn))
    context.load_cert_chain(*client)
    received: set[str] = set()

    def seen(_conn: object, direction: str, _version: object, content: object, kind: object,
             _data: bytes) -> None:
        if direction == "read" and getattr(content, "name", "") == "HANDSHAKE":
            received.add(getattr(kind, "name", str(kind)))

    context._msg_callback = seen  # type: ignore[attr-defined]
    agreed: tuple[str | None, str | None] = (None, None)
    with socket.create_connection((host, int(port)), timeout=60) as raw:
        raw.sendall(ms("/multistream/1.0.0", "/tls/1.0.0"))
        assert [read_ms(raw), read_ms(raw)] == ["/multistream/1.0.0", "/tls/1.0.0"]
        try:
            with context.wrap_socket(raw) as tls:
                agreed = (tls.version(), tls.selected_alpn_protocol())
        except ssl.SSLError:
            pass  # refused: the version offered is not the peer's
    peer.send({"id": "dial", "stop": True, "verdict": "reject"})
    assert peer.event()["event"] == "done"
    return Dialled(*agreed, frozenset(received))


@pytest.fixture(scope="module")
def client_cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _certificate(tmp_path_factory.mktemp("client"))


def test_the_server_side_version_faults_are_what_a_tls_client_meets(
        peer: Path, base: Presentation, client_cert: tuple[Path, Path]) -> None:
    """Python's TLS stack offering 1.2 and 1.3: the honest peer and tls12-and-tls13 agree on
    1.3, tls12-only on 1.2; offering 1.2 at most, only the honest peer refuses."""
    with running(peer) as p:
        top, low = ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2

        def agreed(protocol: str, highest: ssl.TLSVersion) -> tuple[str | None, str | None]:
            d = _dial(p, base, protocol, highest=highest, client=client_cert)
            return d.version, d.alpn

        assert agreed("", top) == ("TLSv1.3", "libp2p")
        assert agreed("tls12-and-tls13", top) == ("TLSv1.3", "libp2p")
        assert agreed("tls12-only", top) == ("TLSv1.2", "libp2p")
        assert agreed("", low) == (None, None)
        assert agreed("tls12-and-tls13", low) == ("TLSv1.2", "libp2p")
        p.close()


def test_the_server_side_alpn_and_client_auth_faults_are_what_a_tls_client_meets(
        peer: Path, base: Presentation, client_cert: tuple[Path, Path]) -> None:
    """alpn-absent selects no protocol though libp2p was offered; no-certificate-request sends
    no CertificateRequest, where the honest peer sends one."""
    top = ssl.TLSVersion.TLSv1_3
    with running(peer) as p:
        honest = _dial(p, base, "", highest=top, client=client_cert)
        assert (honest.version, honest.alpn) == ("TLSv1.3", "libp2p")
        assert {"CERTIFICATE_REQUEST", "CERTIFICATE", "FINISHED"} <= honest.received
        absent = _dial(p, base, "alpn-absent", highest=top, client=client_cert)
        assert (absent.version, absent.alpn) == ("TLSv1.3", None)
        unasked = _dial(p, base, "no-certificate-request", highest=top, client=client_cert)
        assert (unasked.version, unasked.alpn) == ("TLSv1.3", "libp2p")
        assert "CERTIFICATE_REQUEST" not in unasked.received
        assert {"CERTIFICATE", "FINISHED"} <= unasked.received
        p.close()


def test_the_strict_listener_holds_the_dialler_to_the_alpn_rule(
        peer: Path, base: Presentation, client_cert: tuple[Path, Path]) -> None:
    """It completes with a dialler that offers libp2p last (alone or after muxer ids), and
    refuses one that offers no ALPN, another protocol, or libp2p before a muxer id; the honest
    peer takes them all."""
    top = ssl.TLSVersion.TLSv1_3
    with running(peer) as p:
        def agreed(protocol: str, alpn: tuple[str, ...]) -> str | None:
            return _dial(p, base, protocol, highest=top, client=client_cert, alpn=alpn).version

        good = [("libp2p",), (*MUXERS, "libp2p")]
        bad = [(), ("h2",), ("libp2p", MUXERS[0]), MUXERS]
        assert [agreed("strict-listener", a) for a in good] == ["TLSv1.3"] * 2
        assert [agreed("strict-listener", a) for a in bad] == [None] * 4
        assert [agreed("", a) for a in [(), ("libp2p", MUXERS[0])]] == ["TLSv1.3"] * 2
        p.close()


def test_a_fault_the_peer_cannot_commit_is_refused_not_ignored(peer: Path,
                                                               base: Presentation) -> None:
    with running(peer) as p:
        over_quic = p.request(base, case="x", transport="quic", role="client",
                              protocol="tls12-only")
        assert over_quic["outcome"] == "cannot_present"
        assert "cannot be produced as client over quic" in over_quic["error"]
        unknown = p.request(base, case="y", transport="tcp", role="server", protocol="tls11")
        assert unknown["outcome"] == "cannot_present"
        assert unknown["error"] == 'fixture-peer: unknown protocol fault "tls11"'
        p.close()


@pytest.mark.parametrize("transport", ["tcp", "quic"])
@pytest.mark.parametrize("direction", ["dial", "listen"])
def test_the_harness_plans_each_fault_where_the_catalogue_says(
        corpus: Path, transport: str, direction: str) -> None:
    cases: list[HandshakeCase] = [
        c for c in handshake_cases(corpus, transport, direction, 5.0)  # type: ignore[arg-type]
        if c.id.startswith(PREFIX)]
    side = "server" if direction == "dial" else "client"
    expected = {f.id(direction): f for f in PROTOCOL_FAULTS  # type: ignore[arg-type]
                if f.carried(transport, direction)}  # type: ignore[arg-type]
    assert [c.id for c in cases] == list(expected)
    assert cases, "every transport and direction carries some rule"
    for c in cases:
        fault = expected[c.id]
        assert c.id.endswith("." + side) and c.skip is None
        assert c.presentation.protocol == fault.protocol and c.presentation.fault == ""
        assert c.presentation.peer == fault.peer
        assert c.case.expected.result == fault.result and c.case.rule == fault.rule
        assert c.presentation.certificates and c.presentation.key
        # a dialler is told whom it dials: the base fixture's PeerId
        assert (c.case.request.expect_peer_id is not None) == (direction == "dial")


def test_a_corpus_without_the_base_fixture_carries_no_rule(
        corpus: Path, tmp_path: Path) -> None:
    trimmed = tmp_path / "corpus"
    shutil.copytree(corpus, trimmed)
    manifest = json.loads((trimmed / "manifest.json").read_text())
    manifest["fixtures"] = [f for f in manifest["fixtures"] if f["id"] != BASE_FIXTURE]
    (trimmed / "manifest.json").write_text(json.dumps(manifest))
    (trimmed / "transcripts.json").unlink()  # its proof sets name the base fixture too
    cases = handshake_cases(trimmed, "tcp", "listen", 5.0)
    assert cases and not [c.id for c in cases if c.id.startswith(PREFIX)]
    # the same corpus with it carries them
    assert [c for c in handshake_cases(corpus, "tcp", "listen", 5.0) if c.id.startswith(PREFIX)]

