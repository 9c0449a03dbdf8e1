"""Reading what a user hands the verifier: DER, or PEM with one or more certificates.

Files are untrusted: only regular files are read (a FIFO, a device such as ``/dev/zero`` or a
directory is an :class:`InputError` at once, never a hang), at most :data:`MAX_INPUT_BYTES`, and
PEM is scanned in one linear pass.
"""

from __future__ import annotations

import base64
import os
import re
import stat
import sys
from pathlib import Path
from typing import Literal

from fixturegen.verify.der import MAX_CERTIFICATE_BYTES, MAX_CHAIN_CERTIFICATES

#: The largest input file: a full chain of the largest certificates, in PEM (4/3 + line breaks).
MAX_INPUT_BYTES = 2 * MAX_CHAIN_CERTIFICATES * MAX_CERTIFICATE_BYTES
_LABEL = re.compile(rb"[A-Z0-9 ]{1,64}")
_BEGIN = b"-----BEGIN "
_DASHES = b"-----"
_BOM = b"\xef\xbb\xbf"


class InputError(Exception):
    """The input cannot be read at all (not a verdict: an error for that input)."""


class MissingFile(InputError):
    """A well-formed corpus path that names no file."""


#: Control characters but tab and line feed (which a one-line writer folds into spaces): a
#: terminal acts on them (an escape sequence recolours or rewrites the screen, a carriage return
#: overwrites the line), and HTML and Markdown cannot show them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with each control character (but tab and line feed) written as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def shown(value: object) -> object:
    """A value a report template prints (its ``finalize``): a text made :func:`visible`, any
    other value as it is (the template's autoescape then escapes the markup)."""
    return visible(value) if isinstance(value, str) else value


def printable(text: str) -> str:
    """``text`` as the terminal can print it: control characters escaped (:func:`visible`),
    and undecodable file-name bytes escaped, not raised."""
    text = visible(text)
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except (LookupError, UnicodeError):
        return text.encode("ascii", "backslashreplace").decode("ascii")


def is_unicode(text: str) -> bool:
    """``text`` holds no lone surrogate (JSON's ``\\ud800`` escapes can make one)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_bounded(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, or an InputError."""
    name = printable(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise InputError(f"{name} is a directory") from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(f"cannot read {name}: {reason}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{name} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{name} is not a regular file (a FIFO, socket or device)")
        if info.st_size > limit:
            raise InputError(f"{name} is {info.st_size} bytes (limit {limit})")
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise InputError(f"{name} grew past {limit} bytes while being read")
        return data
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def confined(root: Path, rel: object) -> Path:
    """``root / rel`` for a path taken from a manifest, transcripts or results file, or an
    InputError: ``rel`` must be a relative path without ``..``, NUL or backslash, and must
    resolve (symbolic links followed) to a regular file inside ``root``. A corpus is something
    people download; it must not be able to make a command read the rest of the machine."""
    if not isinstance(rel, str) or not rel or len(rel) > 1024:
        raise InputError(f"path {printable(repr(rel))[:80]} is not a file name in the corpus")
    shown = printable(repr(rel))[:120]
    if "\x00" in rel or "\\" in rel:
        raise InputError(f"path {shown} contains NUL or a backslash")
    parts = Path(rel).parts
    if Path(rel).is_absolute() or ".." in parts:
        raise InputError(f"path {shown} is absolute or leaves the corpus (..)")
    try:
        base = root.resolve(strict=True)
        target = (root / rel).resolve(strict=True)
    except FileNotFoundError:
        raise MissingFile(f"path {shown}: no such file") from None
    except (OSError, RuntimeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(f"path {shown}: {reason}") from None
    if not target.is_relative_to(base):
        raise InputError(f"path {shown} is a symbolic link out of the corpus")
    return target


def read_confined(root: Path, rel: object, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a corpus file named in a manifest (see :func:`confined`), size-capped."""
    return read_bounded(confined(root, rel), limit)


_BASE64 = re.compile(rb"[A-Za-z0-9+/]*={0,2}")


def pem_base64(body: bytes) -> bytes:
    """A PEM block's body (RFC 7468: base64 lines): white space dropped, then strict base64
    (whole quads, at most two '=' and only at the end: ``MIIB====`` is refused). Raises
    ValueError."""
    text = b"".join(body.split())
    if len(text) % 4 or not _BASE64.fullmatch(text):
        raise ValueError("not base64")
    return base64.b64decode(text, validate=True)


def pem_blocks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(label, body) of every PEM block, in one forward pass (linear in the input)."""
    blocks: list[tuple[bytes, bytes]] = []
    pos = 0
    while True:
        begin = data.find(_BEGIN, pos)
        if begin < 0:
            return blocks
        head_end = data.find(_DASHES, begin + len(_BEGIN))
        label = data[begin + len(_BEGIN) : head_end] if head_end >= 0 else b""
        if not _LABEL.fullmatch(label):
            raise InputError("a PEM BEGIN line is malformed")
        marker = b"-----END " + label + _DASHES
        end = data.find(marker, head_end + len(_DASHES))
        if end < 0:
            raise InputError(f"a PEM {label.decode()} block has no END line")
        blocks.append((label, data[head_end + len(_DASHES) : end]))
        pos = end + len(marker)


def encoding_of(data: bytes) -> Literal["pem", "der", "neither"]:
    """How a certificate or key file is encoded. PEM when a BEGIN line opens it (after a UTF-8
    byte order mark and white space), or when one follows text (what ``openssl x509 -text``
    and PKCS#12 tools' bag attributes put before it); DER when it opens with a SEQUENCE tag
    (and, if the BEGIN text occurs in it, the SEQUENCE spans the file: the text is inside a
    field); else neither. One linear search of the (bounded) file."""
    if data.removeprefix(_BOM).lstrip().startswith(_BEGIN):
        return "pem"
    has_begin = _BEGIN in data
    if data[:1] == b"\x30" and (not has_begin or _spans(data)):
        return "der"
    return "pem" if has_begin else "neither"


def _spans(data: bytes) -> bool:
    """The DER element at the start of ``data`` ends exactly where ``data`` ends."""
    if len(data) < 2:
        return False
    first = data[1]
    if first < 0x80:
        return 2 + first == len(data)
    count = first & 0x7F
    if not 1 <= count <= 4 or len(data) < 2 + count:
        return False
    return 2 + count + int.from_bytes(data[2:2 + count], "big") == len(data)


def read_certificates(path: Path, root: Path | None = None) -> list[bytes]:
    """The presented certificates in ``path``: PEM blocks (a chain), or the whole file as DER.

    With ``root``, ``path`` is a name taken from a manifest and is confined to ``root``."""
    data = read_confined(root, str(path)) if root is not None else read_bounded(path)
    name = printable(str(path))
    if encoding_of(data) == "pem":
        certificates = []
        try:
            found = pem_blocks(data)
        except InputError as exc:
            raise InputError(f"{name}: {exc}") from None
        for label, body in found:
            if label != b"CERTIFICATE":
                continue
            try:
                certificates.append(pem_base64(body))
            except ValueError:
                raise InputError(f"{name}: a PEM block is not valid base64") from None
        if not certificates:
            raise InputError(f"{name}: no CERTIFICATE block in the PEM file")
        return certificates
    return [data]
