"""The adapter protocol: the lines the harness and an adapter exchange, and the lines the
harness and its fixture peer exchange in handshake mode. Every line is one JSON object, and
every kind of line is a model here (``MESSAGES``): the JSON Schemas shipped in
``fixturegen/schemas/`` and the reference page of the protocol are generated from them, and
the harness writes and reads the lines through them.

An adapter reads ``Request`` lines on its stdin and writes one ``Reply`` per request, with the
same ``id``, in order. In handshake mode it may also write ``Listening`` (a ``listen`` request:
where it listens, before its reply) and read ``Cancel`` (a QUIC ``listen`` request: the fixture
peer's side is over). The fixture peer (``adapters/fixture-peer``) reads ``PeerRequest``,
``PeerAddress`` and ``PeerStop`` and writes ``PeerEvent``; an adapter never sees those. The
message-level peer (``adapters/message-peer``, TCP only) speaks the same lines, for the cases
Go's crypto/tls will not send.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Base64Bytes, BaseModel, ConfigDict, Field

from fixturegen.keys.kinds import HOST_KEY_NAMES, HostKeyName
from fixturegen.model.manifest import json_schema

#: The host key types of the libp2p spec (peer-ids.md), as the generate request names them
#: (owned by keys/kinds.py, beside the manifest's spelling).
HostKeyType = HostKeyName
HOST_KEY_TYPES = HOST_KEY_NAMES


class Request(BaseModel):
    """Harness to adapter, one per case: check a certificate chain (`certificate`: as a
    handshake would, reporting the PeerId), a TLS 1.3 CertificateVerify signature made with
    the certificate's key (`certificate_verify`), make a certificate with the library's own
    generator for a fresh host key of `host_key_type` (`generate`: the interop stage then
    verifies it with every implementation), or run the library's real secure-channel upgrade
    against the fixture peer (`handshake`: `dial` connects to `address` expecting
    `expect_peer_id`; `listen` listens on 127.0.0.1, writes `Listening`, and reports the
    PeerId of the peer that connected, refusing any other when `expect_peer_id` names one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The case id (the manifest's fixture id, or a transcript id)")
    kind: Literal["certificate", "certificate_verify", "generate", "handshake"] = Field(
        default="certificate", description="What to do with the case (see above)")
    certificates: list[str] = Field(
        default_factory=list,
        description="The presented chain, leaf first, each certificate base64 DER (empty for "
        "generate)")
    expect_peer_id: str | None = Field(
        default=None, description="The PeerId the caller expects: the one a dial dialled, "
        "or (a listen request of a peer-id case, sent only to an adapter whose listener takes "
        "one) the peer a listener expects; null when it expects none")
    certificate_key: str | None = Field(
        default=None,
        description="PKCS#8 PEM of the leaf's key, for an adapter that runs a real handshake")
    signature_scheme: int | None = Field(
        default=None, description="certificate_verify: the TLS SignatureScheme code point")
    context: Literal["server", "client"] | None = Field(
        default=None, description="certificate_verify: whose CertificateVerify it is")
    signed_content: str | None = Field(
        default=None, description="certificate_verify: the signed content (RFC 8446 4.4.3), "
        "base64")
    signature: str | None = Field(
        default=None, description="certificate_verify: the signature, base64")
    host_key_type: HostKeyType | None = Field(
        default=None, description="generate: the type of the fresh host key (libp2p KeyType)")
    transport: Literal["tcp", "quic"] | None = Field(
        default=None, description="handshake: TCP (multistream-select, /tls/1.0.0, TLS 1.3) or "
        "QUIC v1")
    direction: Literal["dial", "listen"] | None = Field(
        default=None, description="handshake: the implementation dials the fixture peer, or "
        "listens for it")
    address: str | None = Field(
        default=None, description="handshake, dial: the fixture peer's HOST:PORT")
    timeout_ms: int | None = Field(
        default=None, description="handshake: give up (and reject) after this long")


class Reply(BaseModel):
    """Adapter to harness: the one answer to a request, with its `id`, in request order.
    `skip`: the library cannot take this request at all (a kind or key type it lacks)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The request's id")
    verdict: Literal["accept", "reject", "skip"] = Field(
        description="The library's verdict; for generate, accept with the certificate made")
    peer_id: str | None = Field(
        default=None, description="The PeerId the implementation derived, when it accepted; "
        "for generate, the PeerId of the fresh host key")
    error: str | None = Field(
        default=None, description="The implementation's own error text, verbatim")
    certificates: list[str] | None = Field(
        default=None, description="generate: the chain the library made, leaf first, base64 DER")
    certificate_key: str | None = Field(
        default=None, description="generate: the certificate's private key, PKCS#8 PEM, when the "
        "library exposes it")
    cpu_seconds: float | None = Field(
        default=None, ge=0, description="certificate, certificate_verify and handshake: the "
        "CPU time (user + system) the adapter's process spent from the request to this reply, "
        "measured by the adapter (optional; the harness reports what a check costs from it)")


class Listening(BaseModel):
    """Adapter to harness, handshake `listen` only: where the implementation listens,
    written once it listens and before the reply. The harness has the fixture peer dial it; a
    listener that never writes it gets no connection (the peer gives up at once when the
    reply comes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The request's id")
    listening: str = Field(description="HOST:PORT on 127.0.0.1")


class Cancel(BaseModel):
    """Harness to adapter, handshake `listen` over QUIC only, at most once per request,
    while the adapter has not replied: the fixture peer's side of the handshake is over, so
    a listener whose library drops a failed inbound handshake without a word stops waiting.
    The adapter waits `grace_ms` more for a connection still on its way (one that arrives
    is answered as usual), then replies `reject` with `cancel` as its error. A cancel may
    cross the adapter's reply: a cancel for a request already answered is ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The id of the listen request still unanswered")
    cancel: str = Field(description="Why: the fixture peer's outcome and error, as it saw "
                        "them (the library's reason, as the peer received it)")
    grace_ms: int = Field(
        ge=0, description="How long a connection still on its way may take: 0 when the peer "
        "saw the implementation refuse (no connection is coming), else 250 (its library may "
        "hand an accepted connection over a little later)")


class PeerRequest(BaseModel):
    """Harness to fixture peer, one per handshake case, before the adapter's request: what
    to present and how. `server` (the implementation dials): the peer listens and writes
    `listening`; `client` (the implementation listens): the peer writes `ready` and
    waits for a `PeerAddress`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The case id")
    transport: Literal["tcp", "quic"]
    role: Literal["server", "client"] = Field(
        description="The peer's TLS role: server when the implementation dials")
    certificates: list[str] = Field(
        description="The chain to present, leaf first, base64 DER, sent as raw bytes (empty "
        "with fault no-certificate)")
    key: str | None = Field(description="PKCS#8 PEM of the leaf's key, to sign with")
    scheme: int | None = Field(
        description="The CertificateVerify scheme to announce; null: any that fits the key")
    fault: str = Field(
        description="The fault of its CertificateVerify (signature-corrupted, wrong-context, "
        "transcript-hash-changed, other-key, wrong-length, scheme-mismatch), no-certificate "
        "(a dialer with an empty Certificate message), or empty: honest")
    protocol: str = Field(
        default="", description="A rule of the handshake the peer breaks on purpose "
        "(the fixture peer: tls12-only, tls12-and-tls13, alpn-absent, alpn-without-libp2p, "
        "alpn-muxers-only, alpn-muxers-then-libp2p, alpn-libp2p-first, strict-listener, "
        "no-certificate-request; the message-level peer: certificate-verify-sha1, "
        "certificate-entry-extension), or empty: none")
    timeout_ms: int = Field(ge=0, description="Give up after this long (the adapter's too)")


class PeerAddress(BaseModel):
    """Harness to fixture peer, role `client`: the address the adapter's `Listening`
    named, to dial; an empty address when the adapter replied without listening (the peer
    then gives up at once)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The case id")
    address: str = Field(description="HOST:PORT, or empty")


class PeerStop(BaseModel):
    """Harness to fixture peer, after the adapter replied (unless the peer already wrote
    `done`): end what still waits. If the peer's TLS handshake is over it ends at once after
    an accept, 25 ms later otherwise (an alert may be in its socket, unread); if it still
    runs, it ends when it finishes, or 150 ms after a refusal (3 s after an accept) at most."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The case id")
    stop: Literal[True]
    verdict: Literal["accept", "reject", "skip"] | None = Field(
        description="What the adapter answered; null when it failed the case (hang, crash, "
        "error)")


class PeerEvent(BaseModel):
    """Fixture peer to harness: `listening` (role server: it accepts one connection at
    `address`), `ready` (role client: it waits for a `PeerAddress`), then `done` (its
    side is over: how, and what the implementation offered and presented)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The case id")
    event: Literal["listening", "ready", "done"]
    address: str | None = Field(default=None, description="listening: HOST:PORT to dial")
    outcome: Literal["complete", "failed", "not_offered", "cannot_present"] | None = Field(
        default=None, description="done: its TLS handshake finished; failed; the implementation "
        "offered no scheme the case sends; the peer cannot present the case at all")
    error: str | None = None
    offered: list[int] | None = Field(
        default=None, description="The signature_algorithms the implementation offered")
    sent: int | None = Field(default=None,
                             description="The scheme the peer's CertificateVerify carried")
    peer_certificates: list[Base64Bytes] | None = Field(
        default=None, max_length=8, description="The certificates the implementation presented "
        "(base64 DER; at most 64 KiB in all, else left out)")
    version: int | None = Field(
        default=None, description="The TLS version its finished handshake agreed (0x0304: "
        "TLS 1.3); null when it did not finish")
    alpn: str | None = Field(
        default=None, description="The ALPN protocol agreed (empty: none); null when the "
        "handshake did not finish")
    certificate_requested: bool | None = Field(
        default=None, description="Role client, finished: whether the implementation asked "
        "for the peer's certificate (a CertificateRequest came)")
    seconds: float = Field(default=0.0, description="Wall time of its TLS handshake")
    cpu_seconds: float = Field(default=0.0, description="The peer's CPU time in it")


@dataclass(frozen=True)
class Message:
    """One kind of line: its model, its schema's name, who writes it to whom, in which mode."""

    model: type[BaseModel]
    schema: str
    sender: Literal["harness", "adapter", "fixture peer"]
    receiver: Literal["harness", "adapter", "fixture peer"]
    modes: str

    def json_schema(self) -> dict[str, object]:
        return json_schema(self.model, self.schema)


#: Every line of the protocol, in the order a handshake meets them.
MESSAGES: tuple[Message, ...] = (
    Message(Request, "harness-request", "harness", "adapter", "api, handshake"),
    Message(Listening, "harness-listening", "adapter", "harness", "handshake listen"),
    Message(Cancel, "harness-cancel", "harness", "adapter", "handshake listen, QUIC"),
    Message(Reply, "harness-reply", "adapter", "harness", "api, handshake"),
    Message(PeerRequest, "fixture-peer-request", "harness", "fixture peer", "handshake"),
    Message(PeerAddress, "fixture-peer-address", "harness", "fixture peer",
            "handshake listen"),
    Message(PeerStop, "fixture-peer-stop", "harness", "fixture peer", "handshake"),
    Message(PeerEvent, "fixture-peer-event", "fixture peer", "harness", "handshake"),
)


def request_schema() -> dict[str, object]:
    return json_schema(Request, "harness-request")


def reply_schema() -> dict[str, object]:
    return json_schema(Reply, "harness-reply")
