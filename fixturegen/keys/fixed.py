"""Fixed keys: committed under ``keys/`` as PKCS#8 PEM, made once by ``fixturegen keys generate``.

They are test-only keys: their private halves are public. ``keys/README.md`` records how they
were made and the SHA-256 fingerprint of each SubjectPublicKeyInfo.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import cryptography
from cryptography.hazmat.primitives import serialization

from fixturegen.keys import FIXED_KINDS, KeyKind, KeyPair

#: The fixed keys travel with the package (``fixturegen/data/keys``, in a checkout a link to the
#: repository's ``keys/``, their source), so an installed wheel generates the same corpus.
KEYS_DIR = Path(__file__).resolve().parent.parent / "data" / "keys"


class FixedKeyError(Exception):
    """A fixed key is missing, unreadable or not of the kind its name says."""


def key_file(kind: str) -> str:
    return f"keys/{kind}.pem"


@cache
def load_fixed(kind: KeyKind | str, keys_dir: Path = KEYS_DIR) -> KeyPair:
    kind = KeyKind(kind)
    path = keys_dir / f"{kind}.pem"
    try:
        # OpenSSL's RSA consistency check proves p and q prime again on every load: seconds
        # for the RSA-8704 key. These files are ours, their fingerprints tested (test_keys).
        private = serialization.load_pem_private_key(path.read_bytes(), password=None,
                                                     unsafe_skip_rsa_key_validation=True)
    except (OSError, ValueError, TypeError) as exc:
        raise FixedKeyError(f"cannot load fixed key {path}: {exc}") from exc
    try:
        found = KeyKind.of(private)
    except ValueError as exc:
        raise FixedKeyError(f"{path}: {exc}") from None
    if found is not kind:
        raise FixedKeyError(f"{path} holds a {found} key, not {kind}")
    return KeyPair.of(kind, private, "fixed", key_file(kind))


def fingerprint(pair: KeyPair) -> str:
    return pair.fingerprint


def readme_text(pairs: list[KeyPair], made: str) -> str:
    rows = "\n".join(
        f"| `{p.kind}.pem` | {p.kind} | `{fingerprint(p)}` |" for p in pairs
    )
    return f"""# Fixed keys (TEST ONLY)

These private keys are public. They exist so that fixtures made from them are stable across
seeds and releases. Never use them for anything but tests.

**Provenance.** Made once with `fixturegen keys generate` ({made}), from the operating
system's random source through `cryptography` {cryptography.__version__} (OpenSSL):
RSA with e = 65537, EC on the named curves, Ed25519 and Ed448 from fresh random bytes.
Stored as unencrypted PKCS#8 PEM. They are not derived from any seed: regenerating them
changes every fixture that uses a fixed key, so don't, unless a key is compromised for its
purpose (it can't be: it is public) or a new kind is added (then generate only that kind with
`fixturegen keys generate --only KIND`).

`tests/test_keys.py` checks that each file still matches its fingerprint below.

| file | kind | SHA-256 of the DER SubjectPublicKeyInfo |
|---|---|---|
{rows}
"""


def fixed_files(keys_dir: Path, only: list[str] | None = None
                ) -> tuple[list[KeyPair], list[tuple[str, bytes, int]]]:
    """Fresh fixed keys (all kinds, or ``only`` these) and the files that hold them: each
    ``KIND.pem`` (mode 0600: a fresh private key is nobody's until it is committed, when it
    becomes a public test key like the rest of ``keys/``) and the ``README.md`` listing every
    key of ``keys_dir`` afterwards. Writing them is the caller's (its ownership rule)."""
    fresh: dict[str, KeyPair] = {}
    for name in only or list(FIXED_KINDS):
        if name not in FIXED_KINDS:
            raise FixedKeyError(f"unknown fixed key kind {name!r}")
        kind = KeyKind(name)
        fresh[name] = KeyPair.of(kind, kind.generate(), "fixed", key_file(kind))
    load_fixed.cache_clear()
    pairs = [fresh[k] if k in fresh else load_fixed(k, keys_dir) for k in FIXED_KINDS
             if k in fresh or (keys_dir / f"{k}.pem").exists()]
    made = datetime.now(UTC).strftime("%Y-%m-%d")
    files = [(f"{k}.pem", pair.pkcs8_pem(), 0o600) for k, pair in fresh.items()]
    files.append(("README.md", readme_text(pairs, made).encode(), 0o644))
    return pairs, files
