"""The adapter protocol: one JSON object per line on the adapter's stdin, one per line back. A
request (``Request``) names a case and carries the presented certificates as base64 DER;
``kind`` is ``certificate`` (check the chain as a handshake would, and report the PeerId) or
``certificate_verify`` (check a TLS 1.3 CertificateVerify signature made with the certificate's
key) or ``generate`` (make a certificate with the library's own generator, for a fresh host key
of ``host_key_type``, and reply with its chain, its key and the PeerId it stands for: the
interop stage verifies it with every implementation) or ``handshake`` (run the library's real
secure-channel upgrade against fixturegen's fixture peer: ``direction`` ``dial`` connects to
``address`` expecting ``expect_peer_id``; ``listen`` listens on 127.0.0.1, first writes one line
``{"id": ..., "listening": "HOST:PORT"}``, and reports the PeerId of the peer that connected).
The adapter answers each request with one ``Reply`` with the same ``id``, in order. The JSON
Schemas of both directions are generated from these models and shipped in ``fixturegen/schemas/``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Base64Bytes, BaseModel, ConfigDict, Field

from fixturegen.keys.kinds import HOST_KEY_NAMES, HostKeyName
from fixturegen.model.manifest import json_schema

#: The host key types of the libp2p spec (peer-ids.md), as the generate request names them
#: (owned by keys/kinds.py, beside the manifest's spelling).
HostKeyType = HostKeyName
HOST_KEY_TYPES = HOST_KEY_NAMES


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The case id (the manifest's fixture id, or a transcript id)")
    kind: Literal["certificate", "certificate_verify", "generate", "handshake"] = "certificate"
    certificates: list[str] = Field(
        default_factory=list,
        description="The presented chain, leaf first, each certificate base64 DER (empty for "
        "generate)")
    expect_peer_id: str | None = Field(
        default=None, description="The PeerId the caller dialled; null when it expects none")
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
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The request's id")
    verdict: Literal["accept", "reject", "skip"]
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
        default=None, ge=0, description="handshake: the CPU time (user + system) the adapter's "
        "process spent from the request to this reply, measured by the adapter")


class Listening(BaseModel):
    """The line a ``listen`` handshake writes before its reply: where to connect."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    listening: str = Field(description="HOST:PORT on 127.0.0.1")


class PeerEvent(BaseModel):
    """What the fixture peer (``adapters/fixture-peer``) writes: ``listening`` (it accepts one
    connection at ``address``), ``ready`` (it waits for the address to dial), ``done``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    event: Literal["listening", "ready", "done"]
    address: str | None = None
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
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def request_schema() -> dict[str, object]:
    return json_schema(Request, "harness-request")


def reply_schema() -> dict[str, object]:
    return json_schema(Reply, "harness-reply")
