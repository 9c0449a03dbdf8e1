"""What a case body works with: a :class:`BuildContext` (the one obvious way to get keys, salts
and a default certificate draft) and the :class:`Built` fixture it returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from fixturegen.certs.builder import Draft, derived_serial, draft
from fixturegen.certs.schemes import SCHEMES, SigningAlgorithm
from fixturegen.identity.hostkey import HostKey
from fixturegen.identity.peerid import peer_id_base58
from fixturegen.keys import KeyKind, KeyPair, Source
from fixturegen.keys.derive import derive_private_key, stream
from fixturegen.keys.fixed import load_fixed


@dataclass(frozen=True)
class Built:
    """What a case body returns."""

    #: The leaf's draft: certificate key, algorithm, scheme, host key, TBS fields.
    draft: Draft
    #: The presented certificates as files, leaf first (one file in all but the chain cases).
    files: tuple[bytes, ...]
    #: The PeerId the caller expects (peer_id_mismatch cases), passed to the verifier.
    expect_peer_id: str | None = None
    extension_critical: bool = False
    #: The host key the extension really carries, when it is not the draft's (a key this
    #: project holds no private key object for: the multi-prime RSA key of the cost case).
    host: PresentedHost | None = None


@dataclass(frozen=True)
class PresentedHost:
    """A host key known by its public protobuf only: what the manifest states for it."""

    type: str
    kind: str
    protobuf: bytes

    @property
    def peer_id(self) -> str:
        return peer_id_base58(self.protobuf)


#: Keys derived from a seed alone, by (seed, kind, role): see :meth:`BuildContext.shared`.
_SHARED: dict[tuple[bytes, KeyKind, str], KeyPair] = {}


@dataclass
class BuildContext:
    seed: bytes
    fixture_id: str
    #: Keys the user brought (--certificate-key): they replace the fixed key of their kind.
    user_keys: dict[KeyKind, KeyPair] = field(default_factory=dict)
    _keys: dict[tuple[KeyKind, str], KeyPair] = field(default_factory=dict)

    def throwaway(self, kind: KeyKind, role: str = "certificate") -> KeyPair:
        """The throwaway key of this fixture for ``role`` (derived from seed, id and role)."""
        if (kind, role) not in self._keys:
            label = f"{self.fixture_id}/{role}"
            self._keys[(kind, role)] = KeyPair.of(
                kind, derive_private_key(kind, self.seed, label), "throwaway"
            )
        return self._keys[(kind, role)]

    def shared(self, kind: KeyKind, role: str) -> KeyPair:
        """The key of ``role`` derived from the seed alone, the same in every case that asks
        for it: for the RSA host keys of many generated cases (one RSA key derived per case
        would cost a prime search each). Still a throwaway key: another seed, another key."""
        if (self.seed, kind, role) not in _SHARED:
            if len(_SHARED) >= 64:
                _SHARED.clear()
            _SHARED[(self.seed, kind, role)] = KeyPair.of(
                kind, derive_private_key(kind, self.seed, f"shared/{role}"), "throwaway")
        return _SHARED[(self.seed, kind, role)]

    def fixed(self, kind: KeyKind) -> KeyPair:
        return self.user_keys.get(kind) or load_fixed(kind)

    def key(self, kind: KeyKind, source: Source = "throwaway", role: str = "certificate"
            ) -> KeyPair:
        return self.fixed(kind) if source == "fixed" else self.throwaway(kind, role)

    def host(self, host_type: str = "Ed25519", role: str = "host", kind: KeyKind | None = None,
             source: Source = "throwaway") -> HostKey:
        """The host key of ``role``: this fixture's throwaway key of ``kind`` (by default the
        type's usual kind), or with ``source="fixed"`` the committed key of that kind (never a
        user's ``--certificate-key``: that stands in for certificate keys only)."""
        kind = kind or KeyKind.for_host_type(host_type)
        return HostKey(load_fixed(kind) if source == "fixed" else self.throwaway(kind, role))

    def derived(self, purpose: str, n: int) -> bytes:
        """``n`` bytes derived from the seed, this fixture and ``purpose``."""
        return stream(self.seed, self.fixture_id, purpose, n)

    def draft(
        self,
        scheme: str = "ecdsa_secp256r1_sha256",
        *,
        algorithm: SigningAlgorithm | None = None,
        cert_kind: KeyKind | None = None,
        cert_source: Source = "throwaway",
        cert_key: KeyPair | None = None,
        host: HostKey | None = None,
        critical: bool = False,
        **options: object,
    ) -> Draft:
        """A valid draft for ``scheme``: a named scheme, or any name with an ``algorithm`` (the
        name is what the manifest states, e.g. ``ecdsa_secp384r1_sha256``); its certificate key
        is ``cert_key``, else the fixed or throwaway key of the scheme's kind."""
        named = SCHEMES.get(scheme)
        algorithm = algorithm or (named.algorithm if named else None)
        if algorithm is None:
            raise ValueError(f"unknown scheme {scheme!r}: pass an algorithm")
        kind = cert_kind or (named.key_kind if named else KeyKind.P256)
        salt = b""
        if algorithm.family == "rsa_pss":
            salt = self.derived("pss-salt", algorithm.pss_salt_length)
        return draft(
            cert_key or self.key(kind, cert_source),
            algorithm,
            host or self.host(),
            serial=derived_serial(self.fixture_id),
            pss_salt=salt,
            critical=critical,
            scheme=scheme,
            **options,  # type: ignore[arg-type]
        )

    def built(self, d: Draft, *, files: tuple[bytes, ...] | None = None,
              critical: bool = False, expect_peer_id: str | None = None,
              host: PresentedHost | None = None) -> Built:
        """The fixture of draft ``d``: its signed certificate, or the ``files`` given
        (``host``: the host key its extension carries, when not the draft's)."""
        return Built(d, files if files is not None else (d.sign(),), expect_peer_id, critical,
                     host)
