"""Cases checked after another: a verifier that remembers what it verified.

A verifier may keep state between peers: a cache of host-key signatures it verified (they are
costly, and a peer reconnects with the same certificate), of PeerIds, of parsed keys. Keyed by
the wrong thing, such a cache answers for a certificate it never checked. No case checked alone
can show it: the certificate that fills the cache must come first, in the same process.

So each invalid case here names, in the manifest's ``after``, a valid case a harness sends to
the same verifier just before it (``valid.state.first.*``, one per host key type, so that an
implementation that refuses some host key type still meets the others), and is built from that
case's certificate with one thing changed:

- its libp2p extension copied byte for byte under another certificate key (the host key's
  signature covers the certificate key it was made for, not this one);
- the same certificate key and host key, the host key's signature corrupted;
- the same certificate, its self-signature corrupted;
- the same certificate, byte for byte, while the caller expects another peer.

Each is also a plain invalid case: checked alone, or after any other, its result is the same.
"""

from __future__ import annotations

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.model import case, rebuilt
from fixturegen.cases.mutate import (
    corrupt,
    host_signature,
    with_corrupted_self_signature,
    with_libp2p_value,
)
from fixturegen.certs.extension import signed_key
from fixturegen.identity.hostkey import HostKey
from fixturegen.keys import KeyKind
from fixturegen.verify.codes import ErrorCode

RULE = ("tls.md: libp2p Public Key Extension: the receiver MUST verify the signature (of "
        "every certificate it is presented, whatever it verified before)")
HOSTS = [{"host_type": "Ed25519", "name": "ed25519"},
         {"host_type": "Secp256k1", "name": "secp256k1"},
         {"host_type": "ECDSA", "name": "ecdsa"},
         {"host_type": "RSA", "name": "rsa"}]


def _first(name: str) -> str:
    return f"valid.state.first.{name}"


@case("valid.state.first.{name}", "valid", rule=RULE, each=HOSTS)
def first(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate whose host key is {host_type}: the certificate a verifier checks just
    before each ``invalid.state.*.{name}`` case (the manifest's ``after``), so that a verifier
    that remembers what it verified has something to remember."""
    return ctx.built(ctx.draft(host=ctx.host(host_type, source="fixed")))


@case("invalid.state.extension-replayed.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, rule=RULE, each=HOSTS,
      after=lambda name, **_: _first(name), importance="critical")
def extension_replayed(ctx: BuildContext, host_type: str, name: str) -> Built:
    """Checked just after ``valid.state.first.{name}``: its libp2p extension copied byte for byte
    into a certificate of another key. The {host_type} host key signed the first certificate's
    key, not this one: a verifier that remembers verified extensions by their bytes accepts it
    as the first certificate's peer."""
    earlier = rebuilt(ctx, _first(name)).draft
    other = ctx.key(KeyKind.P256, role="replaying")
    d = ctx.draft(cert_key=other, host=earlier.host)
    return ctx.built(d.but(extensions=(earlier.tbs.extensions[0], *d.tbs.extensions[1:])))


@case("invalid.state.host-signature-corrupted.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, rule=RULE, each=HOSTS,
      after=lambda name, **_: _first(name), importance="critical")
def host_signature_corrupted(ctx: BuildContext, host_type: str, name: str) -> Built:
    """Checked just after ``valid.state.first.{name}``: the same certificate key and {host_type}
    host key, the host key's signature corrupted. A verifier that remembers the pair of keys it
    verified (or the host key alone) accepts it."""
    earlier = rebuilt(ctx, _first(name)).draft
    value = signed_key(earlier.host.protobuf, corrupt(host_signature(earlier.host, earlier)))
    return ctx.built(with_libp2p_value(earlier, value))


@case("invalid.state.self-signature-corrupted.{name}", "invalid",
      ErrorCode.CERTIFICATE_SIGNATURE_INVALID,
      rule="tls.md: Peer Authentication: abort if the self-signature is invalid",
      each=HOSTS, after=lambda name, **_: _first(name), importance="critical")
def self_signature_corrupted(ctx: BuildContext, host_type: str, name: str) -> Built:
    """Checked just after ``valid.state.first.{name}``: the same certificate (the same
    to-be-signed bytes; its host key is {host_type}), its self-signature corrupted. A verifier that
    remembers certificates by their key, their extension or their to-be-signed part accepts
    it."""
    earlier = rebuilt(ctx, _first(name)).draft
    return ctx.built(earlier, files=(with_corrupted_self_signature(earlier),))


@case("invalid.state.same-certificate-other-peer.{name}", "invalid", ErrorCode.PEER_ID_MISMATCH,
      rule="tls.md: Peer Authentication: a client MUST check that the PeerId is the one it "
           "dialled (on every connection)",
      each=HOSTS, after=lambda name, **_: _first(name), importance="critical")
def same_certificate_other_peer(ctx: BuildContext, host_type: str, name: str) -> Built:
    """Checked just after ``valid.state.first.{name}``: the same certificate, byte for byte
    (its host key is {host_type}), while the caller now expects the PeerId of another key of
    that type. A verifier that remembers the certificates it verified, and answers from memory
    before it compares the PeerId with the one dialled, accepts an impostor's connection."""
    earlier = rebuilt(ctx, _first(name))
    dialled = HostKey(ctx.shared(KeyKind.for_host_type(host_type), "peer-id-dialled"))
    return ctx.built(earlier.draft, files=earlier.files, expect_peer_id=dialled.peer_id)
