"""The manifest model. It defines ``out/manifest.json``; the JSON Schema is generated from it.

These field names are a contract that other tools read: add fields, never rename them.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from fixturegen.keys.kinds import HostKeyType
from fixturegen.verify.codes import ErrorCode, Flag

SCHEMA_VERSION = 1

#: A case id (a fixture's, a vector's, a result's): it names files and is a column of the
#: known-divergences list, so no space, no line break, no markup.
CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,299}$"
#: The most certificates a fixture's chain may list: the verifier's own limit
#: (``fixturegen.verify.der.MAX_CHAIN_CERTIFICATES``; the model layer does not import the
#: verifier's reader, and tests/test_model.py checks the two agree).
MAX_CHAIN_CERTIFICATES = 16
#: An implementation's name in a report: the same alphabet, at most 64 characters.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class FrozenModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _absent_when_null(handler: SerializerFunctionWrapHandler, model: BaseModel, *fields: str
                      ) -> dict[str, object]:
    """A model's JSON without each of ``fields`` that is null: optional fields only some
    entries have, so that the others serialise exactly as before those fields existed."""
    data: dict[str, object] = handler(model)
    for field in fields:
        if data.get(field) is None:
            data.pop(field, None)
    return data


class Generator(FrozenModel):
    name: str
    version: str


class KeyInfo(FrozenModel):
    type: str = Field(description="Key kind: rsa-2048, p256, p384, p521, ed25519, ed448, ...")
    source: Literal["fixed", "throwaway", "user", "imported"] = Field(
        description="user: the --certificate-key the user brought; imported: a certificate "
        "brought by `fixturegen import` (type 'unknown' when it is none of the toolkit's kinds)")
    file: str | None = Field(None, description="The fixed key's file, relative to the repo root")
    fingerprint: str | None = Field(
        None, description="A user key's SHA-256 of its DER SubjectPublicKeyInfo, hex (only "
        "for source 'user')")

    @model_serializer(mode="wrap")
    def _only_a_user_key_has_a_fingerprint(self, handler: SerializerFunctionWrapHandler
                                            ) -> dict[str, object]:
        return _absent_when_null(handler, self, "fingerprint")


class CertificateInfo(FrozenModel):
    signature_scheme: str = Field(description="TLS SignatureScheme name (SPEC section 3)")
    key: KeyInfo
    not_before: str
    not_after: str
    serial: str = Field(description="Serial number, lower-case hex")
    extension_critical: bool


class HostKeyInfo(FrozenModel):
    type: HostKeyType
    kind: str = Field(description="Key kind (curve or modulus) of the host key; 'unknown' when "
                      "an imported host key's data does not decode")
    source: Literal["fixed", "throwaway", "imported"]
    public_key_protobuf_hex: str


class Expected(FrozenModel):
    result: Literal["valid", "invalid", "acceptable"]
    error: ErrorCode | None = Field(
        description="The reference verifier's error code; null when it accepts"
    )
    peer_id: str | None = Field(description="The PeerId a verifier derives when it accepts")
    also: list[ErrorCode] = Field(
        default_factory=list,
        description="Other error codes that are right reasons too: checks that fail on this "
        "certificate as well, after the reference's first failing one (an expired and not yet "
        "valid certificate, say). A rejection for one of them is not wrong_reason. Left out of "
        "the manifest when empty")

    @model_serializer(mode="wrap")
    def _without_empty_also(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if not data.get("also"):
            data.pop("also", None)
        return data


class Family(FrozenModel):
    id: str = Field(description="The id template of the family: the case id with each "
                    "parameter left as {name}. Every fixture of the family has it; "
                    "id == family.id.format(**family.parameters)")
    parameters: dict[str, str] = Field(
        description="This fixture's value of each parameter of the template (for the fault "
        "model: host, scheme and placement, the context of the fault that family.id names)")


class Fixture(FrozenModel):
    id: str = Field(pattern=CASE_ID_PATTERN)
    path: str = Field(description="The leaf certificate file (DER), relative to the manifest")
    chain: list[str] = Field(
        min_length=1, max_length=MAX_CHAIN_CERTIFICATES,
        description="The presented certificates, leaf first, relative to the manifest"
    )
    sha256: str
    sha512: str
    description: str
    rule: str
    flags: list[Flag]
    importance: Literal["critical", "high", "medium", "low"] | None
    certificate: CertificateInfo
    certificate_key_path: str | None = Field(
        description="PKCS#8 PEM of the certificate key; null for an imported certificate that "
        "came without its key (handshakes cannot present it)")
    host_key: HostKeyInfo | None = Field(
        description="The host key the extension names; null for an imported certificate whose "
        "extension holds none that decodes (a dialler then expects no particular PeerId)")
    expect_peer_id: str | None = Field(
        description="The PeerId the caller expects (dialled); null when none is given"
    )
    expected: Expected
    imported_from: str | None = Field(
        default=None, description="For a certificate brought by `fixturegen import`: the file "
        "it came from, as given on the command line (absent for generated fixtures)")
    family: Family | None = Field(
        default=None, description="The family of generated cases this fixture belongs to "
        "(one fault in several contexts, one rule over several schemes, ...), so that readers "
        "group them; absent for a case declared alone and for imported certificates")
    after: str | None = Field(
        default=None, description="The id of a valid fixture that a verifier must check just "
        "before this one, in the same process, this one's result unchanged: this fixture is "
        "made from that one (its libp2p extension replayed under another certificate key, say), "
        "so that a verifier that remembers what it verified, keyed by the wrong thing, answers "
        "from its memory. A harness sends both in that order to one verifier; absent for most "
        "fixtures")

    @model_serializer(mode="wrap")
    def _optional_fields_only_when_set(self, handler: SerializerFunctionWrapHandler
                                       ) -> dict[str, object]:
        return _absent_when_null(handler, self, "imported_from", "family", "after")


class Manifest(FrozenModel):
    schema_version: int = Field(ge=1, le=SCHEMA_VERSION, description="The format's version: "
                                "a newer one is refused, not misread")
    generator: Generator
    seed: str | None = Field(description="The seed; null when --random was used")
    catalogue: str | None = Field(
        default=None, description="The version of the case catalogue the fixtures were drawn "
        "from, COUNT-DIGEST (fixturegen.cases.model.catalogue_version): the number of cases "
        "and a digest of each one's id, result, error and flags. Absent in a corpus of "
        "imported certificates")
    reproducible: bool
    notes: dict[str, str] = Field(description="Every flag, explained once")
    error_codes: dict[str, str] = Field(description="The reference verifier's codes, in order")
    fixtures: list[Fixture]

    @model_serializer(mode="wrap")
    def _catalogue_only_when_set(self, handler: SerializerFunctionWrapHandler
                                 ) -> dict[str, object]:
        return _absent_when_null(handler, self, "catalogue")


def json_schema(model: type[BaseModel], name: str) -> dict[str, object]:
    """The published JSON Schema of a model (draft 2020-12)."""
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://github.com/fixturegen/fixturegen/{name}.schema.json"
    return schema


def manifest_schema() -> dict[str, object]:
    return json_schema(Manifest, "manifest")


def dumps(data: object) -> str:
    """The one JSON serialisation of the toolkit: sorted keys, two spaces, final newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
