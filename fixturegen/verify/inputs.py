"""Reading what a user hands the verifier: DER, or PEM with one or more certificates."""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path

_PEM = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.S)


class InputError(Exception):
    """The input cannot be read at all (not a verdict: an error for that input)."""


def read_certificates(path: Path) -> list[bytes]:
    """The presented certificates in ``path``: PEM blocks (a chain), or the whole file as DER."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise InputError(f"{path} is a directory") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data.lstrip().startswith(b"-----BEGIN"):
        blocks = []
        for label, body in _PEM.findall(data):
            if label != b"CERTIFICATE":
                continue
            try:
                blocks.append(base64.b64decode(b"".join(body.split()), validate=True))
            except (binascii.Error, ValueError):
                raise InputError(f"{path}: a PEM block is not valid base64") from None
        if not blocks:
            raise InputError(f"{path}: no CERTIFICATE block in the PEM file")
        return blocks
    return [data]
