"""The model of ``out/transcripts.json`` (TLS 1.3 CertificateVerify vectors and handshake proof
sets). The JSON Schema is generated from it. Field names are a contract: add, never rename."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fixturegen.model.manifest import FrozenModel, Generator, json_schema
from fixturegen.verify.codes import ErrorCode, Flag

TRANSCRIPTS_SCHEMA_VERSION = 1


class VectorExpected(FrozenModel):
    result: Literal["valid", "invalid", "acceptable"]
    error: ErrorCode | None = Field(
        description="The reference verifier's code; null when it accepts")


HEX = r"^([0-9a-f]{2})*$"


class TranscriptVector(FrozenModel):
    id: str
    certificate: str = Field(description="The manifest fixture id of the certificate")
    certificate_path: str = Field(description="Relative to this file")
    context: Literal["server", "client"]
    signature_scheme: str
    code_point: int
    transcript_hash: str = Field(pattern=HEX, description="hex")
    signed_content: str = Field(pattern=HEX,
                                description="hex: 64 x 0x20, context string, 0x00, hash")
    signature: str = Field(pattern=HEX, description="hex")
    comment: str
    flags: list[Flag]
    expected: VectorExpected


class ProofSet(FrozenModel):
    id: str
    sender: Literal["server", "client"]
    corrupted: Literal["certificate", "extension", "transcript"] | None
    certificate: str
    transcript_vector: str
    expected: VectorExpected


class TranscriptsFile(FrozenModel):
    schema_version: int = Field(ge=1, le=TRANSCRIPTS_SCHEMA_VERSION,
                                description="The format's version: a newer one is refused, "
                                "not misread")
    generator: Generator
    seed: str | None
    reproducible: bool
    notes: dict[str, str]
    error_codes: dict[str, str]
    vectors: list[TranscriptVector]
    proof_sets: list[ProofSet]


def transcripts_schema() -> dict[str, object]:
    return json_schema(TranscriptsFile, "transcripts")
