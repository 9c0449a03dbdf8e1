"""What the commands print for other programs: `fixturegen verify --json` (one `VerifyLine` per
input) and `fixturegen list --json` (one `ListLine` per case), each a JSON object on its own
line (JSON Lines), printed through these models; `fixturegen show` prints one `ShowOutput`,
indented (the tests check it against its schema). The JSON Schemas, shipped in
`fixturegen/schemas/`, are generated from the models; like the files' fields, fields are
added, never renamed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fixturegen.model.manifest import Fixture, FrozenModel, json_schema
from fixturegen.verify.codes import Check, ErrorCode, Flag


class VerifyLine(FrozenModel):
    """The reference verifier's verdict on one input of `fixturegen verify --json`, in the
    order given. `error` result: the file could not be read as certificates at all (then
    `error` is `unreadable`, `detail` says why, and nothing was checked)."""

    path: str = Field(description="The input as given (non-printable characters escaped)")
    result: Literal["accept", "reject", "error"] = Field(
        description="The verdict; error: the input could not be read as certificates")
    error: ErrorCode | Literal["unreadable"] | None = Field(
        description="The error code of a reject (see the checks page); unreadable for an "
        "error; null for an accept")
    detail: str = Field(description="What failed, in words; empty for an accept")
    peer_id: str | None = Field(description="The PeerId (base58btc) the certificate proves, "
                                "once its host key decoded")
    peer_id_cid: str | None = Field(default=None,
                                    description="The same PeerId as a CIDv1 (base32)")
    host_key_type: str | None = Field(default=None,
                                      description="The host key's type, once decoded")
    signature_scheme: str | None = Field(
        default=None, description="The TLS SignatureScheme the certificate's key fits")
    validation_time: str | None = Field(
        default=None, description="The moment validity was checked against (ISO 8601, UTC)")
    checks: list[Check] = Field(
        default_factory=list, description="The checks run, in order; on a reject, the last "
        "one failed")
    signature_verifications: int = Field(default=0, ge=0,
                                         description="Signatures verified on the way")
    flags: list[Flag] = Field(default_factory=list,
                              description="Borderline properties noticed (see the flags)")


class ListLine(FrozenModel):
    """One case of the catalogue, as `fixturegen list --json` prints it."""

    id: str
    result: Literal["valid", "invalid", "acceptable"] = Field(
        description="What a verifier must conclude")
    error: ErrorCode | None = Field(description="The reference verifier's code; null when it "
                                    "accepts")
    importance: Literal["critical", "high", "medium", "low"] | None
    flags: list[Flag]
    description: str


class ShowVerdict(FrozenModel):
    """The reference verifier's verdict in `fixturegen show`: a `VerifyLine` without
    `path`."""

    result: Literal["accept", "reject"]
    error: ErrorCode | None
    detail: str
    peer_id: str | None
    peer_id_cid: str | None
    host_key_type: str | None
    signature_scheme: str | None
    validation_time: str
    checks: list[Check]
    signature_verifications: int = Field(ge=0)
    flags: list[Flag]


class ShowOutput(FrozenModel):
    """`fixturegen show ID`: the case built with the seed, as its manifest entry, and the
    reference verifier's verdict on it (indented JSON)."""

    fixture: Fixture
    verdict: ShowVerdict


def verify_schema() -> dict[str, object]:
    return json_schema(VerifyLine, "verify-output")


def list_schema() -> dict[str, object]:
    return json_schema(ListLine, "list-output")


def show_schema() -> dict[str, object]:
    return json_schema(ShowOutput, "show-output")
