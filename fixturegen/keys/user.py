"""A certificate key the user brings (``--certificate-key FILE``): PKCS#8, DER or PEM.

It stands in for the fixed key of its kind wherever the catalogue or a profile would use that
one. It is never copied anywhere but the output's ``keys/`` folder, and the manifest records
its SHA-256 fingerprint (of the SubjectPublicKeyInfo) and that it came from the user.
"""

from __future__ import annotations

import stat
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from fixturegen.keys import KeyKind, KeyPair

#: The largest PKCS#8 file read (an RSA-8192 key is under 7 KB as PEM).
MAX_KEY_FILE = 64 * 1024


class UserKeyError(Exception):
    """The key file cannot be used (a usage error: exit code 2)."""


def load_user_key(path: Path) -> KeyPair:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise UserKeyError(f"{path} is not a regular file")
        if info.st_size > MAX_KEY_FILE:
            raise UserKeyError(f"{path} is {info.st_size} bytes (a key file is at most "
                               f"{MAX_KEY_FILE})")
        data = path.read_bytes()
    except OSError as exc:
        raise UserKeyError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if data.lstrip().startswith(b"-----BEGIN"):
            if b"-----BEGIN PRIVATE KEY-----" not in data:
                raise UserKeyError(f"{path}: not an unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY)")
            private = serialization.load_pem_private_key(data, password=None)
        else:
            private = serialization.load_der_private_key(data, password=None)
    except UserKeyError:
        raise
    except (ValueError, TypeError) as exc:
        raise UserKeyError(f"{path}: not an unencrypted PKCS#8 key ({exc})") from None
    try:
        kind = KeyKind.of(private)
    except ValueError as exc:
        raise UserKeyError(f"{path}: {exc}") from None
    return KeyPair.of(kind, private, "user")

