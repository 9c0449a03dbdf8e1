"""The one obvious way for a case body to get keys, salts and a default certificate draft."""

from __future__ import annotations

from dataclasses import dataclass, field

from fixturegen.cases.model import Built
from fixturegen.certs.builder import Draft, derived_serial, draft
from fixturegen.certs.schemes import SCHEMES, SigningAlgorithm
from fixturegen.identity.hostkey import HostKey
from fixturegen.keys import KeyPair, Source
from fixturegen.keys.derive import derive_private_key, stream
from fixturegen.keys.fixed import load_fixed

#: Host key type name -> the key kind the catalogue uses for it.
HOST_KINDS = {"Ed25519": "ed25519", "Secp256k1": "secp256k1", "ECDSA": "p256", "RSA": "rsa-2048"}


@dataclass
class BuildContext:
    seed: bytes
    fixture_id: str
    _keys: dict[tuple[str, str], KeyPair] = field(default_factory=dict)

    def throwaway(self, kind: str, role: str = "certificate") -> KeyPair:
        """The throwaway key of this fixture for ``role`` (derived from seed, id and role)."""
        if (kind, role) not in self._keys:
            label = f"{self.fixture_id}/{role}"
            self._keys[(kind, role)] = KeyPair.of(
                kind, derive_private_key(kind, self.seed, label), "throwaway"
            )
        return self._keys[(kind, role)]

    def fixed(self, kind: str) -> KeyPair:
        return load_fixed(kind)

    def key(self, kind: str, source: Source = "throwaway", role: str = "certificate") -> KeyPair:
        return self.fixed(kind) if source == "fixed" else self.throwaway(kind, role)

    def host(self, host_type: str = "Ed25519", role: str = "host", kind: str | None = None
             ) -> HostKey:
        return HostKey(self.throwaway(kind or HOST_KINDS[host_type], role))

    def derived(self, purpose: str, n: int) -> bytes:
        """``n`` bytes derived from the seed, this fixture and ``purpose``."""
        return stream(self.seed, self.fixture_id, purpose, n)

    def draft(
        self,
        scheme: str = "ecdsa_secp256r1_sha256",
        *,
        algorithm: SigningAlgorithm | None = None,
        cert_kind: str | None = None,
        cert_source: Source = "throwaway",
        host: HostKey | None = None,
        critical: bool = False,
        **options: object,
    ) -> Draft:
        named = SCHEMES.get(scheme)
        algorithm = algorithm or (named.algorithm if named else None)
        if algorithm is None:
            raise ValueError(f"unknown scheme {scheme!r}: pass an algorithm")
        kind = cert_kind or (named.key_kind if named else "p256")
        salt = b""
        if algorithm.family == "rsa_pss":
            salt = self.derived("pss-salt", algorithm.pss_salt_length)
        return draft(
            self.key(kind, cert_source),
            algorithm,
            host or self.host(),
            serial=derived_serial(self.fixture_id),
            pss_salt=salt,
            critical=critical,
            **options,  # type: ignore[arg-type]
        )

    def built(self, d: Draft, scheme: str, *, files: tuple[bytes, ...] | None = None,
              critical: bool = False, expect_peer_id: str | None = None) -> Built:
        return Built(d, files if files is not None else (d.sign(),), scheme,
                     expect_peer_id, critical)
