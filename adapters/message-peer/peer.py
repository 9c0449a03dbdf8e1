"""The message-level peer: the fixture peer's twin for what Go's crypto/tls will not send.

It speaks the fixture peer's request protocol (one JSON request per line on stdin, JSON events
on stdout: ``ready`` or ``listening``, then ``done``; control lines ``address`` and ``stop``),
over TCP only: multistream-select (``/multistream/1.0.0``, ``/tls/1.0.0``), then TLS 1.3 with
ALPN ``libp2p`` through tlslite-ng, a pure-Python TLS stack whose handshake this program changes
at the message level. It never judges the other side's certificate (tlslite-ng checks the
other side's CertificateVerify against the key its certificate holds, nothing more).

What it sends that crypto/tls cannot:

- a CertificateVerify under a scheme named by the request (``scheme``): a PKCS#1 v1.5 one, an
  Ed448 one, or (fault ``scheme-mismatch``) one announced for another key type than the key
  that signs (between EdDSA schemes: an Ed25519 key under ed448); sent when the other side
  offered the scheme, as the fixture peer does;
- a certificate whose key is Ed448;
- the protocol faults of ``PROTOCOL_FAULTS`` below: a CertificateVerify over SHA-1, and a
  CertificateEntry that carries an extension RFC 8446 does not allow there.

The harness sends it only the cases that need it (``fixturegen/harness/handshake.py``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import queue
import resource
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tlslite.tlsconnection as tlsconnection
from tlslite.api import (
    X509,
    HandshakeSettings,
    TLSConnection,
    X509CertChain,
    parsePEMKey,
)
from tlslite.constants import ExtensionType, SignatureScheme
from tlslite.errors import (
    TLSAbruptCloseError,
    TLSClosedConnectionError,
    TLSError,
    TLSHandshakeFailure,
)
from tlslite.extensions import TLSExtension

MULTISTREAM = "/multistream/1.0.0"
PROTOCOL_TLS = "/tls/1.0.0"
MAX_MESSAGE = 1024
ALPN = bytearray(b"libp2p")
#: The faults of a CertificateVerify this peer can carry (signer.go names the same).
FAULTS = {"": "an honest signature",
          "scheme-mismatch": "announces a scheme that does not fit the key, signs with its own"}
#: The rules of the handshake this peer breaks: name -> (what it does, the roles it breaks it in).
PROTOCOL_FAULTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "": ("every rule kept", ("server", "client")),
    "certificate-verify-sha1": (
        "the CertificateVerify announces ecdsa_sha1 (0x0203) and signs over SHA-1, whatever the "
        "other side offered", ("server", "client")),
    "certificate-entry-extension": (
        "the leaf's CertificateEntry carries a supported_groups extension (RFC 8446 section 4.2 "
        "allows it in ClientHello and EncryptedExtensions only)", ("server", "client")),
}
SHA1_SCHEME = (2, 3)  # ecdsa_sha1: (hash sha1, signature ecdsa)
EDDSA = ((8, 7), (8, 8))  # ed25519, ed448: an EdDSA key signs the same way under either
#: The extension put in the leaf's CertificateEntry by ``certificate-entry-extension``: a
#: supported_groups body listing x25519 (length 2, group 0x001d).
FOREIGN_EXTENSION = TLSExtension(extType=ExtensionType.supported_groups).create(
    bytearray(b"\x00\x02\x00\x1d"))


class CannotPresent(Exception):
    """The request cannot be carried by this peer (its ``done`` is ``cannot_present``)."""


class NotOffered(Exception):
    """The other side offered no scheme this case sends."""


def code(scheme: tuple[int, int]) -> int:
    return scheme[0] << 8 | scheme[1]


def scheme_of(point: int) -> tuple[int, int]:
    return (point >> 8, point & 0xFF)


def scheme_name(scheme: tuple[int, int]) -> str:
    name = SignatureScheme.toRepr(scheme)
    if not name or not hasattr(SignatureScheme, name):
        raise CannotPresent(f"tlslite-ng cannot sign a CertificateVerify of scheme "
                            f"0x{code(scheme):04x}")
    return str(name)


@dataclass
class Plan:
    """What one request's handshake sends, and what it saw of the other side."""

    forced: tuple[int, int] | None  # the CertificateVerify's scheme, whatever fits the key
    need_offer: bool  # the forced scheme is sent only when the other side offered it
    extension: bool  # certificate-entry-extension
    offered: list[int] = field(default_factory=list)
    sent: int | None = None
    requested: bool = False

    def choose(self, offered: list[tuple[int, int]],
               honest: Callable[[], tuple[int, int] | None]) -> tuple[int, int]:
        """The CertificateVerify's scheme, either side's: the forced one (sent only when the
        other side offered it, if ``need_offer``), else tlslite-ng's own pick, ``honest``."""
        self.offered = [code(s) for s in offered]
        if self.forced is None:
            picked = honest()
            if picked is None:
                raise NotOffered("no common scheme")
        elif self.need_offer and self.forced not in offered:
            raise NotOffered(f"0x{code(self.forced):04x} not offered")
        else:
            picked = self.forced
        self.sent = code(picked)
        return picked


class Connection(TLSConnection):  # type: ignore[misc]
    """tlslite-ng's connection with the message-level changes of one ``Plan``."""

    plan: Plan

    def _pickServerKeyExchangeSig(self, settings: Any, clientHello: Any,
                                  certList: Any = None, private_key: Any = None,
                                  version: tuple[int, int] = (3, 3), check_alt: bool = True
                                  ) -> Any:
        ext = clientHello.getExtension(ExtensionType.signature_algorithms)

        def honest() -> tuple[int, int] | None:
            try:
                name, _, _ = TLSConnection._pickServerKeyExchangeSig(
                    settings, clientHello, certList, private_key, version, check_alt)
            except TLSHandshakeFailure:
                return None
            return tuple(getattr(SignatureScheme, name))  # type: ignore[return-value]

        chosen = self.plan.choose(list(ext.sigalgs or []) if ext is not None else [], honest)
        return scheme_name(chosen), certList, private_key

    def _create_cert_msg(self, peer: str, request_msg: Any, *args: Any, **kwargs: Any) -> Any:
        if peer == "client":
            self.plan.requested = True  # tlslite-ng makes it to answer a CertificateRequest
        msg = super()._create_cert_msg(peer, request_msg, *args, **kwargs)
        if self.plan.extension and getattr(msg, "certificate_list", None):
            msg.certificate_list[0].extensions = [FOREIGN_EXTENSION]
        return msg


_first_matching = tlsconnection.getFirstMatching
_client_plan: list[Plan] = []  # the running client request's plan (one request at a time)


def _client_scheme(values: Any, matches: Any) -> Any:
    """tlslite-ng's pick of the client's CertificateVerify scheme (its only other uses are
    versions and groups, which go through unchanged)."""
    plan = _client_plan[-1] if _client_plan else None
    if plan is None or not values or not isinstance(values[0], tuple) or matches is None or (
            not all(isinstance(m, tuple) for m in matches)):
        return _first_matching(values, matches)
    return plan.choose(list(matches), lambda: _first_matching(values, matches))


tlsconnection.getFirstMatching = _client_scheme


@dataclass
class Request:
    id: str
    transport: str
    role: str
    certificates: list[str]
    key: str | None
    scheme: int | None
    fault: str
    protocol: str
    timeout: float


def parse_request(raw: dict[str, Any]) -> Request:
    return Request(str(raw.get("id", "")), str(raw.get("transport", "")),
                   str(raw.get("role", "")), list(raw.get("certificates") or []),
                   raw.get("key"), raw.get("scheme"), str(raw.get("fault") or ""),
                   str(raw.get("protocol") or ""),
                   max(float(raw.get("timeout_ms") or 10000) / 1000, 0.1))


class Controls:
    """The control lines of the running request: the address to dial and stop."""

    def __init__(self) -> None:
        self.address: queue.Queue[str] = queue.Queue()
        self.stopped = threading.Event()
        self.sock: socket.socket | None = None
        self.handshaken = threading.Event()
        self.lock = threading.Lock()

    def stop(self) -> None:
        self.stopped.set()
        if self.handshaken.is_set():
            self.cut()
        else:  # what is left to read (an alert) is in the socket now or very soon
            threading.Timer(0.05, self.cut).start()

    def cut(self) -> None:
        with self.lock:
            if self.sock is not None:
                with contextlib.suppress(OSError):
                    self.sock.shutdown(socket.SHUT_RDWR)


def write_messages(sock: socket.socket, *messages: str) -> None:
    out = bytearray()
    for m in messages:
        body = m.encode() + b"\n"
        n = len(body)
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)
        out += body
    sock.sendall(bytes(out))


def read_message(sock: socket.socket) -> str:
    """One multistream message, read byte by byte: the ClientHello behind it stays unread."""
    length, shift = 0, 0
    while True:
        b = sock.recv(1)
        if not b:
            raise EOFError("the connection closed during multistream-select")
        length |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("message length varint too long")
    if length == 0 or length > MAX_MESSAGE:
        raise ValueError(f"message of {length} bytes")
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            raise EOFError("the connection closed during multistream-select")
        body += chunk
    if not body.endswith(b"\n"):
        raise ValueError(f"message {body!r} has no trailing newline")
    return body[:-1].decode(errors="replace")


def initiate(sock: socket.socket) -> None:
    write_messages(sock, MULTISTREAM, PROTOCOL_TLS)
    if (h := read_message(sock)) != MULTISTREAM:
        raise ValueError(f"expected {MULTISTREAM!r}, got {h!r}")
    if (p := read_message(sock)) != PROTOCOL_TLS:
        raise ValueError(f"the implementation refused {PROTOCOL_TLS}: {p!r}")


def respond(sock: socket.socket) -> None:
    if (h := read_message(sock)) != MULTISTREAM:
        raise ValueError(f"expected {MULTISTREAM!r}, got {h!r}")
    write_messages(sock, MULTISTREAM)
    for _ in range(16):
        if read_message(sock) == PROTOCOL_TLS:
            write_messages(sock, PROTOCOL_TLS)
            return
        write_messages(sock, "na")
    raise ValueError("no /tls/1.0.0 proposal in 16 messages")


def settings() -> HandshakeSettings:
    s = HandshakeSettings()
    s.minVersion = s.maxVersion = (3, 4)
    s.certificate_compression_send = []  # its Certificate goes out as the case has it
    s.use_heartbeat_extension = False
    s.record_size_limit = None
    return s


def plan_of(req: Request) -> Plan:
    if req.transport != "tcp":
        raise CannotPresent(f"the message-level peer speaks TLS over TCP only, not "
                            f"{req.transport!r}")
    if req.role not in ("server", "client"):
        raise CannotPresent(f"role {req.role!r} is neither server nor client")
    if req.fault not in FAULTS:
        raise CannotPresent(f"the message-level peer cannot send fault {req.fault!r}")
    rule = PROTOCOL_FAULTS.get(req.protocol)
    if rule is None or req.role not in rule[1]:
        raise CannotPresent(f"protocol fault {req.protocol!r} cannot be produced as {req.role}")
    if not req.certificates or not req.key:
        raise CannotPresent("the message-level peer needs a certificate and its key")
    forced = scheme_of(req.scheme) if req.scheme is not None else None
    if req.protocol == "certificate-verify-sha1":
        return Plan(SHA1_SCHEME, False, False)
    if req.fault == "scheme-mismatch" and forced is None:
        raise CannotPresent("scheme-mismatch needs the scheme to announce")
    if forced is not None:
        scheme_name(forced)
    return Plan(forced, True, req.protocol == "certificate-entry-extension")


def load(req: Request) -> tuple[X509CertChain, Any]:
    chain = []
    for text in req.certificates:
        try:
            x = X509()
            x.parseBinary(bytearray(base64.b64decode(text, validate=True)))
        except Exception as exc:  # tlslite-ng's parser raises many kinds
            raise CannotPresent(f"tlslite-ng cannot read the certificate: {exc}") from exc
        chain.append(x)
    try:
        key = parsePEMKey(req.key, private=True)
    except Exception as exc:
        raise CannotPresent(f"tlslite-ng cannot sign with this key: {exc}") from exc
    return X509CertChain(chain), key


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def handshake(req: Request, controls: Controls, emit: Callable[[dict[str, Any]], None]
              ) -> dict[str, Any]:
    done: dict[str, Any] = {"id": req.id, "event": "done", "error": None, "seconds": 0.0,
                            "cpu_seconds": 0.0}
    try:
        plan = plan_of(req)
        chain, key = load(req)
    except CannotPresent as exc:
        return done | {"outcome": "cannot_present", "error": f"message-peer: {exc}"}
    if req.fault == "scheme-mismatch" and not (
            plan.forced in EDDSA and chain.x509List[0].certAlg in ("Ed25519", "Ed448")):
        return done | {"outcome": "cannot_present", "error": "message-peer: scheme-mismatch is "
                       "sent here between EdDSA schemes only (the fixture peer sends the rest)"}
    # The request's timeout is already the harness's three quarters of --timeout (as the
    # fixture peer's): the attempt gives up there.
    deadline = time.monotonic() + req.timeout
    listener: socket.socket | None = None
    try:
        if req.role == "server":
            listener = socket.create_server(("127.0.0.1", 0))
            emit({"id": req.id, "event": "listening",
                  "address": f"127.0.0.1:{listener.getsockname()[1]}"})
            listener.settimeout(max(0.01, deadline - time.monotonic()))
            sock, _ = listener.accept()
        else:
            emit({"id": req.id, "event": "ready"})
            try:
                address = controls.address.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError("no address before the deadline") from None
            if not address:
                raise ConnectionError("the implementation did not listen (no address given)")
            host, _, port = address.rpartition(":")
            sock = socket.create_connection((host.strip("[]"), int(port)),
                                            timeout=max(0.01, deadline - time.monotonic()))
    except (OSError, ConnectionError, TimeoutError, ValueError) as exc:
        return done | {"outcome": "failed", "error": f"message-peer: {exc}"}
    finally:
        if listener is not None:
            listener.close()
    with controls.lock:
        controls.sock = sock
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), controls.cut)
    timer.start()
    try:
        return _run(req, plan, chain, key, sock, controls, done)
    finally:
        timer.cancel()
        with controls.lock:
            controls.sock = None
        sock.close()


def _run(req: Request, plan: Plan, chain: X509CertChain, key: Any, sock: socket.socket,
         controls: Controls, done: dict[str, Any]) -> dict[str, Any]:
    sock.settimeout(req.timeout)
    try:
        if req.role == "server":
            respond(sock)
        else:
            initiate(sock)
    except (OSError, ValueError, EOFError) as exc:
        return done | {"outcome": "failed", "error": f"multistream-select: {exc}"}
    conn = Connection(sock)
    conn.plan = plan
    start, cpu = time.monotonic(), cpu_seconds()
    if req.role == "client":
        _client_plan.append(plan)
    try:
        if req.role == "server":
            conn.handshakeServer(certChain=chain, privateKey=key, reqCert=True,
                                 settings=settings(), alpn=[ALPN])
        else:
            conn.handshakeClientCert(certChain=chain, privateKey=key, settings=settings(),
                                     alpn=[ALPN])
        failure: BaseException | None = None
    except NotOffered as exc:
        failure = exc
    except (TLSError, OSError, ValueError, AssertionError, EOFError) as exc:
        failure = exc
    finally:
        if req.role == "client":
            _client_plan.pop()
        done["seconds"] = time.monotonic() - start
        done["cpu_seconds"] = cpu_seconds() - cpu
        controls.handshaken.set()
        if controls.stopped.is_set():
            controls.cut()
    if plan.offered:
        done["offered"] = plan.offered
    if plan.sent is not None:
        done["sent"] = plan.sent
    peer = conn.session.clientCertChain if req.role == "server" and conn.session else (
        conn.session.serverCertChain if conn.session else None)
    if peer is not None and peer.getNumCerts():
        done["peer_certificates"] = [base64.b64encode(bytes(x.bytes)).decode()
                                     for x in peer.x509List][:8]
    if isinstance(failure, NotOffered):
        offered = ", ".join(f"0x{o:04x}" for o in plan.offered)
        return done | {"outcome": "not_offered", "error": "the implementation offers no scheme "
                       f"this case sends (it offered [{offered}])"}
    if failure is not None:
        return done | {"outcome": "failed", "error": _said(failure)}
    done["version"] = 772
    done["alpn"] = bytes(conn.session.appProto or b"").decode(errors="replace")
    if req.role == "client":
        done["certificate_requested"] = plan.requested
    done["outcome"] = "complete"
    # Wait until the implementation closes or alerts: its verdict on our certificate may come
    # after our Finished.
    try:
        while conn.read(max=4096):
            pass
    except (TLSAbruptCloseError, TLSClosedConnectionError, TimeoutError):
        pass  # the expected end: the implementation closed, or the wait is over
    except (TLSError, OSError, ValueError, AssertionError) as exc:
        if not controls.stopped.is_set():
            done["error"] = _said(exc)
    return done


def _said(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"message-peer: {type(exc).__name__}: {text}"[:500]


def main() -> None:
    lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
    current: list[tuple[str, Controls]] = []
    out_lock = threading.Lock()

    def emit(event: dict[str, Any]) -> None:
        with out_lock:
            sys.stdout.write(json.dumps(event) + "\n")
            sys.stdout.flush()

    def read() -> None:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                raw = json.loads(line)
            except ValueError as exc:
                raw = {"_unreadable": str(exc)}
            if not isinstance(raw, dict):
                raw = {"_unreadable": "not an object"}
            if raw.get("stop") or (raw.get("address") is not None and "transport" not in raw):
                running = current[-1] if current else None
                if running is not None and running[0] == raw.get("id"):
                    if raw.get("stop"):
                        running[1].stop()
                    else:
                        running[1].address.put(str(raw.get("address") or ""))
                continue  # a control line for a request already done
            lines.put(raw)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    while (raw := lines.get()) is not None:
        if "_unreadable" in raw:
            emit({"event": "done", "outcome": "cannot_present", "error":
                  f"message-peer: unreadable request: {raw['_unreadable']}"})
            continue
        req = parse_request(raw)
        controls = Controls()
        current.append((req.id, controls))
        try:
            emit(handshake(req, controls, emit))
        finally:
            current.pop()


if __name__ == "__main__":
    main()
