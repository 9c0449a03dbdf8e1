"""The handshake's own rules: faults the fixture peer commits on purpose, one rule at a time.

The certificate cases break the certificate; these break the handshake around a valid one (the
corpus's ``matrix.ecdsa_secp256r1_sha256.ed25519.fixed``, presented and signed honestly unless
the rule is about the signature), each through the fixture peer's ``tls.Config``
(``adapters/fixture-peer/rules.go``, which names the same faults) or, where crypto/tls cannot
commit it, the message-level peer's (``adapters/message-peer/peer.py``). Each says which rule it
breaks, what the implementation must conclude, and in which directions and over which
transports it can be produced:

- ``dial``: the implementation dials, the fixture peer is the TLS server;
- ``listen``: the implementation listens, the fixture peer is the TLS client.

A fault is produced where the peer's TLS role can commit it: a server cannot offer ALPN
protocols (it selects one of the client's), so the ALPN lists are ``listen`` faults; a client
cannot decline to ask for a certificate, so ``no-certificate-request`` is a ``dial`` fault.
``strict-listener`` breaks no rule: it is the listener that enforces one, the dialler's ALPN
list, which an honest peer never checks.
QUIC carries TLS 1.3 only (RFC 9001 section 4.2: quic-go refuses anything else), so the version
faults are TCP faults.

Most are committed by the fixture peer through its ``tls.Config``; the faults marked
``peer="message"`` need a change at the message level that crypto/tls does not allow, and the
message-level peer (``adapters/message-peer``, tlslite-ng, TCP only) commits them.

``acceptable`` marks a fault whose outcome the spec leaves to the implementation: the result
reports what it did, and either verdict agrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["dial", "listen"]
#: Which program commits the fault: ``go``, the fixture peer (Go's crypto/tls and quic-go,
#: through their configuration); ``message``, the message-level peer (tlslite-ng over TCP,
#: ``adapters/message-peer``), for what crypto/tls will not send.
PeerKind = Literal["go", "message"]
Transport = Literal["tcp", "quic"]
Result = Literal["valid", "invalid", "acceptable"]
Importance = Literal["critical", "high", "medium", "low"]

#: The certificate every rule case presents (valid: an Ed25519 host key, a P-256 certificate
#: key, which every shipped implementation accepts).
BASE_FIXTURE = "matrix.ecdsa_secp256r1_sha256.ed25519.fixed"
BOTH: tuple[Direction, ...] = ("dial", "listen")
ANY: tuple[Transport, ...] = ("tcp", "quic")

TLS13_ONLY = ("tls.md: Handshake Protocol: the libp2p handshake uses TLS 1.3 (and higher); "
              "endpoints MUST NOT negotiate lower TLS versions")
ALPN_LAST = ("connections/inlined-muxer-negotiation.md: the client lists muxer ids in ALPN, "
             "\"libp2p\" MUST always be the last item; a node without the optimisation offers "
             "\"libp2p\" alone")
ALPN_NONE = ("RFC 7301 section 3.2: a server that supports none of the client's protocols "
             "answers no_application_protocol")
QUIC_ALPN = ("RFC 9001 section 8.1: QUIC endpoints MUST close the connection with "
             "no_application_protocol when no application protocol is negotiated")
SHA1_FORBIDDEN = ("RFC 8446 section 4.2.3: the legacy SHA-1 schemes are not defined for signed "
                  "TLS handshake messages; section 4.4.3: the CertificateVerify's algorithm "
                  "MUST be one the other side offered")
CERTIFICATE_ENTRY = ("RFC 8446 section 4.2: an extension recognised in a message it is not "
                     "specified for MUST abort the handshake (illegal_parameter); section "
                     "4.4.2: a CertificateEntry carries only extensions its receiver asked for")
CLIENT_AUTH = ("tls.md: Handshake Protocol: servers MUST require client authentication during "
               "the TLS handshake")


#: Every rule case's id starts so: ``rule.NAME.SIDE``, SIDE the fixture peer's TLS role
#: (``server`` when the implementation dials, ``client`` when it listens).
PREFIX = "rule."
SIDE: dict[Direction, str] = {"dial": "server", "listen": "client"}


@dataclass(frozen=True)
class ProtocolFault:
    """One rule of the handshake broken by the fixture peer.

    ``name`` names the case; ``protocol`` is the fault's name in the fixture peer's request
    (two cases may share one, when the outcome required differs by transport)."""

    name: str
    protocol: str
    directions: tuple[Direction, ...]
    transports: tuple[Transport, ...]
    result: Result
    rule: str
    description: str
    #: How much a wrong verdict matters (as the certificate cases' importance): a downgrade
    #: is high, an ALPN a peer gets wrong costs a round trip or a confused muxer at most.
    importance: Importance | None = None
    peer: PeerKind = "go"

    def id(self, direction: Direction) -> str:
        return f"{PREFIX}{self.name}.{SIDE[direction]}"

    def carried(self, transport: Transport, direction: Direction) -> bool:
        return transport in self.transports and direction in self.directions


PROTOCOL_FAULTS: tuple[ProtocolFault, ...] = (
    ProtocolFault(
        "tls12-only", "tls12-only", BOTH, ("tcp",), "invalid", TLS13_ONLY,
        "The fixture peer speaks TLS 1.2 and nothing else: as client its ClientHello offers "
        "TLS 1.2 only (its supported_versions lists 0x0303 alone); as server it answers a "
        "dialler that offers TLS 1.2 with a TLS 1.2 handshake and one that offers only TLS 1.3 "
        "with a protocol_version alert. The implementation must not complete the handshake.",
        "high"),
    ProtocolFault(
        "tls12-and-tls13", "tls12-and-tls13", BOTH, ("tcp",), "valid", TLS13_ONLY,
        "The fixture peer offers (or accepts) TLS 1.2 beside TLS 1.3. The implementation must "
        "negotiate TLS 1.3 and accept; the peer's result records the version agreed."),
    ProtocolFault(
        "alpn-absent", "alpn-absent", BOTH, ("tcp",), "acceptable", ALPN_LAST,
        "No ALPN over TCP: the fixture peer as client offers no protocol; as server it selects "
        "none, whatever was offered. No libp2p rule says what the implementation does then (a "
        "peer without ALPN negotiates its muxer by multistream-select), so either verdict "
        "agrees."),
    ProtocolFault(
        "alpn-absent-quic", "alpn-absent", BOTH, ("quic",), "invalid", QUIC_ALPN,
        "No ALPN over QUIC: the fixture peer as client offers no protocol; as server it "
        "selects none. The implementation must close the connection.", "low"),
    ProtocolFault(
        "alpn-without-libp2p", "alpn-without-libp2p", ("listen",), ANY, "invalid", ALPN_NONE,
        "The fixture peer dials offering one ALPN protocol, h2, and not libp2p. The listener "
        "supports none of what is offered and must refuse.", "low"),
    ProtocolFault(
        "alpn-muxers-only", "alpn-muxers-only", ("listen",), ANY, "acceptable", ALPN_LAST,
        "The fixture peer dials offering muxer ids only (/yamux/1.0.0, /mplex/6.7.0), without "
        "the libp2p id the spec requires last. A listener that negotiates muxers in ALPN may "
        "select one; one that does not must refuse: either verdict agrees."),
    ProtocolFault(
        "alpn-muxers-then-libp2p", "alpn-muxers-then-libp2p", ("listen",), ANY, "valid", ALPN_LAST,
        "The fixture peer dials offering /yamux/1.0.0, /mplex/6.7.0 and then libp2p, as the "
        "inlined muxer negotiation prescribes. Every listener must accept: one without the "
        "optimisation selects libp2p."),
    ProtocolFault(
        "alpn-libp2p-first", "alpn-libp2p-first", ("listen",), ANY, "acceptable", ALPN_LAST,
        "The fixture peer dials offering libp2p first and /yamux/1.0.0 after it, against the "
        "rule that libp2p is last. A listener may select either, or refuse the order: either "
        "verdict agrees."),
    ProtocolFault(
        "strict-listener", "strict-listener", ("dial",), ANY, "valid", ALPN_LAST,
        "The fixture peer, as server, breaks no rule and holds the dialler to the ALPN rule: a "
        "ClientHello whose ALPN list is missing or does not end with libp2p is refused. A "
        "dialler that offers libp2p (muxer ids before it, or nothing else) completes; one that "
        "does not is refused, and rejects this valid case.", "medium"),
    ProtocolFault(
        "no-certificate-request", "no-certificate-request", ("dial",), ANY, "acceptable",
        CLIENT_AUTH,
        "The fixture peer, as server, does not ask for the implementation's certificate (no "
        "CertificateRequest): the listener breaks the rule, not the dialler, which has "
        "authenticated its peer and may go on or refuse. The result says which it did."),
    ProtocolFault(
        "certificate-verify-sha1", "certificate-verify-sha1", BOTH, ("tcp",), "invalid",
        SHA1_FORBIDDEN,
        "The message-level peer's CertificateVerify announces ecdsa_sha1 (0x0203) and is a "
        "valid ECDSA signature over SHA-1 by the certificate's P-256 key, whatever the other "
        "side offered. TLS 1.3 defines no SHA-1 CertificateVerify: the implementation must "
        "refuse.", "medium", "message"),
    ProtocolFault(
        "certificate-entry-extension", "certificate-entry-extension", BOTH, ("tcp",),
        "invalid", CERTIFICATE_ENTRY,
        "The message-level peer's Certificate message carries, in the leaf's CertificateEntry, "
        "a supported_groups extension (listing x25519), which RFC 8446 allows in ClientHello "
        "and EncryptedExtensions only. Certificate and CertificateVerify are otherwise honest. "
        "The implementation must abort the handshake.", "low", "message"),
)


def fault_of(case_id: str) -> ProtocolFault | None:
    """The protocol fault a rule case's id names (``rule.NAME.SIDE``), or None."""
    if not case_id.startswith(PREFIX):
        return None
    name = case_id[len(PREFIX):].rsplit(".", 1)[0]
    return next((f for f in PROTOCOL_FAULTS if f.name == name), None)
