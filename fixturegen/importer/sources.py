"""Find the certificates to import, with their keys and sidecar files.

A **certificate file** is DER (the whole file is the leaf) or PEM (its ``CERTIFICATE`` blocks
are the presented chain, leaf first; text or a byte order mark before the first BEGIN line is
passed over: ``fixturegen.verify.inputs.encoding_of``); a file that is neither is refused, and
so is a file name that is not UTF-8. Named on the command line, any file is read as one; in a
folder (walked recursively, links not followed, in sorted order) only ``*.der``, ``*.crt``,
``*.cer`` and ``*.pem`` files are, and a ``*.pem`` file without a ``CERTIFICATE`` block (a key)
is passed over.

Its **key** (for handshakes: the fixture peer must sign with it) is a private-key block in the
same PEM file, else the first of ``NAME.key``, ``NAME.key.pem``, ``NAME-key.pem`` and (for a
certificate that is not itself ``NAME.pem``) ``NAME.pem`` beside it: PEM or DER, PKCS#8, SEC 1
or PKCS#1, unencrypted. The folder ``harness interop`` writes (``peer-made/ID.der`` with
``ID.pem``) imports as it is.

Its **sidecar** ``NAME.json`` (optional) states what the importer cannot know::

    {"id": "my-case", "result": "invalid", "expect_peer_id": "12D3Koo...",
     "description": "Sent by node X on 2026-11-02."}

Every field is optional. ``result`` replaces the reference verifier's verdict as the expected
result; ``expect_peer_id`` is the PeerId the dialler expects.

Everything read is bounded: file sizes (:data:`MAX_FILE_BYTES`), the number of certificates
(:data:`MAX_CERTIFICATES`), the depth of the walk, each certificate's size and a chain's length.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fixturegen.verify.der import MAX_CERTIFICATE_BYTES, MAX_CHAIN_CERTIFICATES
from fixturegen.verify.inputs import (
    InputError,
    encoding_of,
    is_unicode,
    pem_base64,
    pem_blocks,
    printable,
    read_bounded,
)
from fixturegen.verify.jsonfile import strict_loads

#: The largest file read (a PEM chain of the longest allowed length fits).
MAX_FILE_BYTES = 4 * MAX_CHAIN_CERTIFICATES * MAX_CERTIFICATE_BYTES
MAX_SIDECAR_BYTES = 64 * 1024
MAX_KEY_BYTES = 64 * 1024
MAX_CERTIFICATES = 5000
MAX_DEPTH = 16
CERTIFICATE_SUFFIXES = (".der", ".crt", ".cer", ".pem")


class ImportProblem(Exception):
    """An input cannot be imported: one line, a usage error (exit code 2)."""


class Sidecar(BaseModel):
    """``NAME.json`` beside a certificate: what the importer cannot decode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$",
                           description="The fixture id (else derived from the file name)")
    result: Literal["valid", "invalid", "acceptable"] | None = Field(
        default=None, description="The expected result (else the reference verifier's verdict)")
    expect_peer_id: str | None = Field(
        default=None, pattern=r"^(?:[1-9A-HJ-NP-Za-km-z]{1,800}|b[a-z2-7]{1,1000})$",
        description="The PeerId the dialler expects: base58btc (a multihash, up to an identity "
        "multihash of the largest host key) or a CIDv1 in base32")
    description: str | None = Field(default=None, max_length=2000)


@dataclass(frozen=True)
class Source:
    """One certificate to import."""

    shown: str  # the file as the user named it (or as found under a named folder)
    chain: tuple[bytes, ...]
    key_pem: str | None  # PKCS#8 PEM
    key_file: str | None
    sidecar: Sidecar


def _name(path: Path) -> str:
    return printable(str(path))


def _read(path: Path, limit: int) -> bytes:
    try:
        return read_bounded(path, limit)
    except InputError as exc:
        raise ImportProblem(str(exc)) from None


def _decode_b64(body: bytes, where: str) -> bytes:
    try:
        return pem_base64(body)
    except ValueError:
        raise ImportProblem(f"{where}: a PEM block is not valid base64") from None


def _certificates(data: bytes, where: str) -> tuple[list[bytes], list[bytes]]:
    """(certificates, private-key DERs) of a file: PEM blocks (wherever the first BEGIN line
    is: text and a byte order mark before it are passed over), or the whole file as DER (it
    opens with a SEQUENCE). A file that is neither is refused, not imported as a broken
    certificate."""
    encoding = encoding_of(data)
    if encoding == "neither":
        raise ImportProblem(f"{where}: neither PEM (no -----BEGIN line) nor DER (it does not "
                            "open with a SEQUENCE)")
    if encoding == "der":
        return [data], []
    try:
        blocks = pem_blocks(data)
    except InputError as exc:
        raise ImportProblem(f"{where}: {exc}") from None
    certs = [_decode_b64(b, where) for label, b in blocks if label == b"CERTIFICATE"]
    keys = [_decode_b64(b, where) for label, b in blocks if label.endswith(b"PRIVATE KEY")
            and not label.startswith(b"ENCRYPTED")]
    if any(label == b"ENCRYPTED PRIVATE KEY" for label, _ in blocks):
        raise ImportProblem(f"{where}: an encrypted private key (give it unencrypted: it is a "
                           "test key)")
    return certs, keys


def _pkcs8(der: bytes, where: str) -> str:
    try:
        key = serialization.load_der_private_key(der, None)
    except TypeError:
        raise ImportProblem(f"{where}: the private key is encrypted") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ImportProblem(f"{where}: the private key does not decode ({exc})") from None
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode("ascii")


def _key_file(path: Path) -> Path | None:
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    names = [f"{stem}.key", f"{stem}.key.pem", f"{stem}-key.pem"]
    if path.suffix.lower() != ".pem":
        names.append(f"{stem}.pem")
    for name in names:
        if len(os.fsencode(name)) > 255:  # no file can have that name (ENAMETOOLONG)
            continue
        candidate = path.with_name(name)
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None


def _key_from(path: Path) -> tuple[str, str] | None:
    """(PKCS#8 PEM, file) of the key file beside a certificate, if there is one."""
    found = _key_file(path)
    if found is None:
        return None
    where = _name(found)
    data = _read(found, MAX_KEY_BYTES)
    if encoding_of(data) == "pem":
        certs, keys = _certificates(data, where)
        if not keys:
            if certs:  # NAME.pem is another certificate, not a key
                return None
            raise ImportProblem(f"{where}: no PRIVATE KEY block")
        return _pkcs8(keys[0], where), str(found)
    return _pkcs8(data, where), str(found)


def _sidecar(path: Path) -> Sidecar:
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    side = path.with_name(f"{stem}.json")
    if len(os.fsencode(side.name)) > 255 or not side.exists():  # too long a name: none
        return Sidecar()
    where = _name(side)
    data = _read(side, MAX_SIDECAR_BYTES)
    try:
        return Sidecar.model_validate(strict_loads(data))
    except RecursionError:
        raise ImportProblem(f"{where}: JSON nested too deep") from None
    except (ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "the file"
            if first["type"] == "extra_forbidden":
                raise ImportProblem(f"{where}: unknown field {field!r} (a sidecar has "
                                    f"{', '.join(Sidecar.model_fields)})") from None
            raise ImportProblem(f"{where}: {field}: {first['msg']}") from None
        raise ImportProblem(f"{where}: not JSON ({exc})") from None


def read_source(path: Path, shown: str, *, walked: bool = False) -> Source | None:
    """One certificate file with its key and sidecar. A PEM file without a certificate is
    refused when named, passed over (None) when a folder walk found it: a key beside its
    certificate."""
    where = _name(Path(shown))
    certs, keys = _certificates(_read(path, MAX_FILE_BYTES), where)
    if not certs:
        if walked:
            return None
        raise ImportProblem(f"{where}: no CERTIFICATE block in the PEM file")
    if len(certs) > MAX_CHAIN_CERTIFICATES:
        raise ImportProblem(f"{where}: a chain of {len(certs)} certificates (limit "
                           f"{MAX_CHAIN_CERTIFICATES})")
    for cert in certs:
        if not cert:
            raise ImportProblem(f"{where}: an empty certificate")
        if len(cert) > MAX_CERTIFICATE_BYTES:
            raise ImportProblem(f"{where}: a certificate of {len(cert)} bytes (limit "
                               f"{MAX_CERTIFICATE_BYTES})")
    key = (_pkcs8(keys[0], where), shown) if keys else _key_from(path)
    return Source(shown, tuple(certs), key[0] if key else None,
                  printable(key[1]) if key else None, _sidecar(path))


def _walk(folder: Path) -> Iterator[Path]:
    base = len(folder.parts)
    for root, dirs, files in os.walk(folder, followlinks=False):
        here = Path(root)
        if len(here.parts) - base >= MAX_DEPTH:
            if dirs:  # what lies deeper is not imported: say so, never drop it in silence
                raise ImportProblem(f"{_name(here / dirs[0])}: folders nested deeper than "
                                    f"{MAX_DEPTH} below {_name(folder)} (limit {MAX_DEPTH}): "
                                    "import that folder by its own name")
            dirs.clear()
        dirs.sort()
        for name in sorted(files):
            path = here / name
            if (path.suffix.lower() in CERTIFICATE_SUFFIXES and not path.is_symlink()
                    and path.is_file()):
                yield path


def _unicode_name(path: Path) -> Path:
    """``path``, refused when its name is not UTF-8 (it becomes the fixture's id and stands in
    the manifest, which is UTF-8 JSON)."""
    if not is_unicode(str(path)):
        raise ImportProblem(f"{_name(path)}: the file name is not valid UTF-8 (it would name "
                            "the fixture in a UTF-8 manifest): rename it")
    return path


def apart(paths: Sequence[Path], out: Path) -> None:
    """Refuse an ``--out`` inside a folder being imported, or an input inside ``--out``: the
    import would read its own earlier output (and rename, re-key and re-judge it)."""
    where = Path(os.path.realpath(out))
    for given in paths:
        real = Path(os.path.realpath(given))
        if given.is_dir() and where.is_relative_to(real):
            raise ImportProblem(f"--out {_name(out)} is inside the input folder {_name(given)}: "
                                "the import would read its own output; give an --out outside "
                                "it")
        if real.is_relative_to(where):
            raise ImportProblem(f"the input {_name(given)} is inside --out {_name(out)}: the "
                                "import would replace what it reads; give an --out apart")


def find_sources(paths: Sequence[Path]) -> list[Source]:
    """Every certificate under ``paths`` (files as named, folders walked), in order."""
    found: list[tuple[Path, str, bool]] = []
    for given in paths:
        _unicode_name(given)
        if given.is_dir():
            found += [(p, str(p), True) for p in map(_unicode_name, _walk(given))]
        elif given.exists() or given.is_symlink():
            found.append((given, str(given), False))
        else:
            raise ImportProblem(f"{_name(given)}: no such file or folder")
        if len(found) > MAX_CERTIFICATES:
            raise ImportProblem(f"more than {MAX_CERTIFICATES} certificate files: import them "
                               "in parts")
    read = [read_source(path, shown, walked=walked) for path, shown, walked in found]
    sources = [source for source in read if source is not None]
    if not sources:
        shown = ", ".join(_name(p) for p in paths)
        raise ImportProblem(f"no certificate file (*.der, *.crt, *.cer, *.pem) in {shown}")
    return sources

