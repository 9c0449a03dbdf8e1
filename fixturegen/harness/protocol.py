"""The adapter protocol: one JSON object per line on the adapter's stdin, one per line back.

A request (``Request``) names a case and carries the presented certificates as base64 DER;
``kind`` is ``certificate`` (check the chain as a handshake would, and report the PeerId) or
``certificate_verify`` (check a TLS 1.3 CertificateVerify signature made with the certificate's
key). The adapter answers each request with one ``Reply`` with the same ``id``, in order. The
JSON Schemas of both directions are generated from these models and shipped in
``fixturegen/schemas/``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fixturegen.output.manifest import json_schema


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The case id (the manifest's fixture id, or a transcript id)")
    kind: Literal["certificate", "certificate_verify"] = "certificate"
    certificates: list[str] = Field(
        description="The presented chain, leaf first, each certificate base64 DER")
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


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The request's id")
    verdict: Literal["accept", "reject", "skip"]
    peer_id: str | None = Field(
        default=None, description="The PeerId the implementation derived, when it accepted")
    error: str | None = Field(
        default=None, description="The implementation's own error text, verbatim")


def request_schema() -> dict[str, object]:
    return json_schema(Request, "harness-request")


def reply_schema() -> dict[str, object]:
    return json_schema(Reply, "harness-reply")
