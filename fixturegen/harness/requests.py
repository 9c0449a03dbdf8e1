"""The corpus as harness cases: a request for the adapter and what the manifest expects."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from fixturegen.harness.protocol import Request
from fixturegen.model.manifest import Family
from fixturegen.verify.inputs import InputError, MissingFile, read_confined
from fixturegen.verify.jsonfile import load_json

#: A certificate key file (PKCS#8 PEM); the largest, RSA-8192, is under 7 KB.
MAX_KEY_BYTES = 64 * 1024


class CorpusError(Exception):
    """The corpus folder cannot be read as a corpus (no manifest, a missing file)."""


@dataclass(frozen=True)
class Expectation:
    result: str  # valid | invalid | acceptable
    peer_id: str | None
    error: str | None
    #: Other error codes that are right reasons too (the manifest's ``expected.also``).
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class HarnessCase:
    """One request with what the manifest says about it."""

    request: Request
    expected: Expectation
    rule: str
    description: str
    importance: str | None
    path: str
    #: The manifest's family of the fixture (its id template and this case's parameters), for
    #: a case of a family with parameters: what the reachability report reads.
    family: Family | None = None
    #: The host key type the certificate's extension names (the manifest's ``host_key.type``),
    #: for a certificate case: what the cost of its check is compared within.
    host_key_type: str | None = None
    #: The manifest's ``after``: the case the same adapter process checks just before this one.
    after: str | None = None

    @property
    def id(self) -> str:
        return self.request.id


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def read_corpus_json(path: Path, schema: str, what: str) -> dict[str, Any]:
    try:
        data = load_json(path, schema, what)
    except InputError as exc:
        raise CorpusError(str(exc)) from None
    assert isinstance(data, dict)
    return data


def _family(data: object) -> Family | None:
    """The fixture's family block (None without one); ``load_json`` checked it against the
    manifest's schema."""
    return None if data is None else Family.model_validate(data)


def load_cases(corpus: Path, *, transcripts: bool = True) -> list[HarnessCase]:
    """Every fixture of ``corpus/manifest.json`` and, if asked, every transcript vector."""
    return load_corpus(corpus, transcripts=transcripts).cases


class LoadedCorpus(NamedTuple):
    """What one read of a corpus gives: its seed, its cases, and the catalogue version it was
    drawn from (the manifest's ``catalogue``; None for imported certificates, or a corpus
    written before the field)."""

    seed: str | None
    cases: list[HarnessCase]
    catalogue: str | None


def load_corpus(corpus: Path, *, transcripts: bool = True) -> LoadedCorpus:
    """The corpus seed, its cases and its catalogue version, from one read of the manifest."""
    manifest = read_corpus_json(corpus / "manifest.json", "manifest", "fixturegen manifest")
    seed = manifest.get("seed")
    catalogue = manifest.get("catalogue")
    catalogue = catalogue if isinstance(catalogue, str) else None
    blobs: dict[str, str] = {}

    def blob(rel: str) -> str:
        if rel not in blobs:
            try:
                blobs[rel] = _b64(read_confined(corpus, rel))
            except InputError as exc:
                raise CorpusError(f"{corpus / 'manifest.json'}: {exc}") from None
        return blobs[rel]

    cases: list[HarnessCase] = []
    fixtures: dict[str, dict[str, Any]] = {}
    try:
        for fx in manifest["fixtures"]:
            fixtures[fx["id"]] = fx
            key_path = fx.get("certificate_key_path")
            key = None
            if key_path:
                try:
                    key = read_confined(corpus, key_path, MAX_KEY_BYTES).decode("ascii")
                except MissingFile:
                    key = None  # a corpus without its keys folder: the adapters get no key
                except InputError as exc:
                    raise CorpusError(f"{corpus / 'manifest.json'}: certificate key: {exc}"
                                      ) from None
                except UnicodeDecodeError:
                    raise CorpusError(f"{corpus / 'manifest.json'}: certificate key "
                                      f"{key_path!r} is not a PEM file") from None
            request = Request(id=fx["id"], kind="certificate",
                              certificates=[blob(p) for p in fx["chain"]],
                              expect_peer_id=fx.get("expect_peer_id"), certificate_key=key)
            exp = fx["expected"]
            cases.append(HarnessCase(request, Expectation(exp["result"], exp.get("peer_id"),
                                                          exp.get("error"),
                                                          tuple(exp.get("also") or ())),
                                     fx["rule"], fx["description"], fx.get("importance"),
                                     fx["path"], _family(fx.get("family")),
                                     (fx.get("host_key") or {}).get("type"),
                                     fx.get("after")))
    except (KeyError, TypeError) as exc:
        raise CorpusError(f"{corpus / 'manifest.json'} is not a fixturegen manifest: {exc}"
                          ) from exc
    if not transcripts or not (corpus / "transcripts.json").exists():
        return LoadedCorpus(seed, cases, catalogue)
    vectors = read_corpus_json(corpus / "transcripts.json", "transcripts", "transcripts file")
    try:
        for vec in vectors["vectors"]:
            fx = fixtures.get(vec["certificate"], {})
            request = Request(
                id=vec["id"], kind="certificate_verify",
                certificates=[blob(vec["certificate_path"])],
                signature_scheme=int(vec["code_point"]), context=vec["context"],
                signed_content=_b64(bytes.fromhex(vec["signed_content"])),
                signature=_b64(bytes.fromhex(vec["signature"])))
            exp = vec["expected"]
            cases.append(HarnessCase(
                request, Expectation(exp["result"], None, exp.get("error")),
                "RFC 8446 4.4.3 CertificateVerify, with the certificate's key "
                f"({fx.get('rule', 'tls.md')})",
                vec["comment"],
                fx.get("importance") or ("high" if exp["result"] == "invalid" else None),
                vec["certificate_path"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise CorpusError(f"{corpus / 'transcripts.json'} is not a transcripts file: {exc}"
                          ) from exc
    return LoadedCorpus(seed, cases, catalogue)
