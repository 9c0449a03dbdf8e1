"""The PeerId the caller expects, as a dimension: for every host key type, a valid certificate
checked against the right PeerId in each text form the spec requires a parser to take, and
against PeerIds that are not the certificate's (another key of the same type, a key of another
type, the same key under the other multihash function).

A dialler always knows whom it dials (tls.md: "a client MUST check the PeerId is the one it
dialled"), so every case here sets ``expect_peer_id``; the certificate itself is valid and
signed by the committed host key of its type. peer-ids.md fixes the PeerId of a key (the
identity multihash of its protobuf encoding when that is at most 42 bytes, else SHA-256) and
requires parsers to take both text forms: the base58btc multihash and the CIDv1 with the
``libp2p-key`` multicodec (base32 by default).
"""

from __future__ import annotations

import base64
import hashlib

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.model import case
from fixturegen.cases.mutate import (
    corrupt,
    host_signature,
    with_corrupted_self_signature,
    with_libp2p_value,
)
from fixturegen.certs.extension import signed_key, subject_alt_name
from fixturegen.identity.hostkey import HostKey
from fixturegen.identity.peerid import MAX_INLINE_KEY_LENGTH, base58btc, peer_id_multihash
from fixturegen.identity.protobuf import varint
from fixturegen.keys import KeyKind
from fixturegen.verify.codes import ErrorCode

TLS = "tls.md"
PEER_IDS = "peer-ids.md"
DIALLED = f"{TLS}: a client MUST check that the PeerId is the one it dialled"
HOSTS = [{"host_type": "Ed25519", "name": "ed25519"},
         {"host_type": "Secp256k1", "name": "secp256k1"},
         {"host_type": "ECDSA", "name": "ecdsa"},
         {"host_type": "RSA", "name": "rsa"}]
#: The host key type whose PeerId stands in for "a key of another type", for each type.
OTHER_TYPE = {"Ed25519": "RSA", "Secp256k1": "Ed25519", "ECDSA": "Secp256k1", "RSA": "ECDSA"}


def other_multihash(host: HostKey) -> str:
    """The base58btc text of the host key's protobuf under the multihash function its length
    does not call for: SHA-256 for a key short enough to be inlined, identity for a longer one.
    A multihash of the right key, but not its PeerId."""
    protobuf = host.protobuf
    if len(protobuf) <= MAX_INLINE_KEY_LENGTH:
        return base58btc(b"\x12\x20" + hashlib.sha256(protobuf).digest())
    return base58btc(b"\x00" + varint(len(protobuf)) + protobuf)


@case("valid.peer-id.expected.{name}", "valid", rule=DIALLED, each=HOSTS)
def expected(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects its PeerId (base58btc,
    the canonical text form)."""
    host = ctx.host(host_type, source="fixed")
    return ctx.built(ctx.draft(host=host), expect_peer_id=host.peer_id)


@case("valid.peer-id.expected-cid.{name}", "valid",
      rule=f"{PEER_IDS}: implementations MUST support parsing both forms of peer IDs "
      "(base58btc multihash and CIDv1 libp2p-key)", each=HOSTS)
def expected_cid(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects its PeerId written as
    a CIDv1 (multicodec libp2p-key, base32), the text form every parser must also take."""
    host = ctx.host(host_type, source="fixed")
    return ctx.built(ctx.draft(host=host), expect_peer_id=host.peer_id_cid)


#: The multicodec of dag-pb (IPLD protobuf nodes): the codec of CIDv0 ``Qm`` hashes, not of
#: PeerIds.
DAG_PB_CODEC = 0x70


def cid_of_codec(host: HostKey, codec: int) -> str:
    """The host key's PeerId multihash as a CIDv1 of ``codec``, base32 (lower case, no
    padding, ``b...``): the text form of peer-ids.md with another multicodec."""
    cid = b"\x01" + varint(codec) + peer_id_multihash(host.protobuf)
    return "b" + base64.b32encode(cid).decode().lower().rstrip("=")


@case("invalid.peer-id.cid-dag-pb.{name}", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="high",
      rule=f"{PEER_IDS}: a CIDv1 PeerId has the multicodec libp2p-key (0x72)", each=HOSTS)
def cid_dag_pb(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects its PeerId multihash
    written as a CIDv1 whose multicodec is dag-pb (0x70), not libp2p-key: not a PeerId. A
    parser that takes the multihash of any CIDv1 (dag-pb is the codec of CIDv0 hashes) accepts
    it."""
    host = ctx.host(host_type, source="fixed")
    return ctx.built(ctx.draft(host=host), expect_peer_id=cid_of_codec(host, DAG_PB_CODEC))


@case("invalid.peer-id.other-key.{name}", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="critical", rule=DIALLED, each=HOSTS)
def other_key(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects the PeerId of another
    {host_type} key (an impostor with a key of the same type)."""
    host = ctx.host(host_type, source="fixed")
    dialled = HostKey(ctx.shared(KeyKind.for_host_type(host_type), "peer-id-dialled"))
    return ctx.built(ctx.draft(host=host), expect_peer_id=dialled.peer_id)


@case("invalid.peer-id.other-type.{name}", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="critical", rule=DIALLED, each=HOSTS)
def other_type(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects the PeerId of a key of
    another type."""
    host = ctx.host(host_type, source="fixed")
    dialled = ctx.host(OTHER_TYPE[host_type], source="fixed")
    return ctx.built(ctx.draft(host=host), expect_peer_id=dialled.peer_id)


@case("invalid.peer-id.other-multihash.{name}", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="critical",
      rule=f"{PEER_IDS}: the identity multihash when the encoded key is at most 42 bytes, "
      "else SHA-256", each=HOSTS)
def other_multihash_case(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects a multihash of that
    very key, but under the other hash function than peer-ids.md prescribes for its length (a
    verifier that compares keys instead of PeerIds, or that re-derives the PeerId with the
    function the expected one names, accepts it)."""
    host = ctx.host(host_type, source="fixed")
    return ctx.built(ctx.draft(host=host), expect_peer_id=other_multihash(host))


#: base58btc digits whose other case is also a digit (the alphabet has no 0, O, I or l).
_BOTH_CASES = frozenset("abcdefghijkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ") - frozenset("oOlIiL")


def case_changed(text: str) -> str:
    """``text`` with the case of its last letter changed whose other case is a base58 digit
    too: the same length, a valid base58btc string of another multihash."""
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        other = ch.swapcase()
        if ch in _BOTH_CASES and other in _BOTH_CASES:
            return text[:i] + other + text[i + 1:]
    raise ValueError(f"no letter of {text!r} has a base58 twin")  # pragma: no cover


@case("invalid.peer-id.case-changed.{name}", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="high",
      rule=f"{DIALLED}; base58btc is case-sensitive (peer-ids.md: the multihash in base58btc)",
      each=HOSTS)
def case_changed_case(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects its PeerId text with
    the case of one letter near the end changed: another valid base58btc multihash of the same
    length, so another peer (a verifier that compares PeerId texts without regard to case
    accepts it)."""
    host = ctx.host(host_type, source="fixed")
    return ctx.built(ctx.draft(host=host), expect_peer_id=case_changed(host.peer_id))


def byte_case_folded(host: HostKey) -> str:
    """The base58btc text of the host key's PeerId multihash with one byte of its digest
    changed in ASCII case (0x20 flipped on the last byte that is a letter): another peer, whose
    PeerId equals this one's only to a comparison that folds case."""
    mh = bytearray(peer_id_multihash(host.protobuf))
    for i in range(len(mh) - 1, 1, -1):
        if chr(mh[i]).isascii() and chr(mh[i]).isalpha():
            mh[i] ^= 0x20
            return base58btc(bytes(mh))
    raise ValueError("no letter byte in this PeerId's digest")  # pragma: no cover


@case("invalid.peer-id.byte-case-folded.{name}", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="high", rule=f"{DIALLED}; PeerIds are compared as the bytes of their multihash",
      each=HOSTS)
def byte_case_folded_case(ctx: BuildContext, host_type: str, name: str) -> Built:
    """A valid certificate of a {host_type} host key; the caller expects a PeerId whose
    multihash differs from the right one in a single byte, by ASCII case (0x20): another peer
    (a verifier that compares the binary PeerIds as text without regard to case accepts it)."""
    host = ctx.host(host_type, source="fixed")
    return ctx.built(ctx.draft(host=host), expect_peer_id=byte_case_folded(host))


@case("invalid.peer-id.dialled-but-host-signature-corrupted.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="critical",
      rule="tls.md: libp2p Public Key Extension: the receiver MUST verify the signature",
      each=HOSTS)
def dialled_but_host_signature_corrupted(ctx: BuildContext, host_type: str, name: str
                                         ) -> Built:
    """The caller expects the PeerId of the {host_type} host key this certificate names, but
    one bit of that key's signature over the certificate key is flipped (the self-signature is
    valid). A PeerId that matches proves nothing until the signature binds the certificate to
    it: a verifier that stops at the match accepts anyone who copies a peer's public key (the
    rule is the signature's; the PeerId the caller expects is the dimension)."""
    host = ctx.host(host_type, source="fixed")
    d = ctx.draft(host=host)
    v = signed_key(host.protobuf, corrupt(host_signature(host, d)))
    return ctx.built(with_libp2p_value(d, v), expect_peer_id=host.peer_id)


@case("invalid.peer-id.dialled-but-self-signature-corrupted", "invalid",
      ErrorCode.CERTIFICATE_SIGNATURE_INVALID, importance="high",
      rule="tls.md: Peer Authentication: abort if the self-signature is invalid")
def dialled_but_self_signature_corrupted(ctx: BuildContext) -> Built:
    """The caller expects the PeerId of the Ed25519 host key this certificate names (its
    extension valid), but one bit of the certificate's self-signature is flipped."""
    host = ctx.host("Ed25519", source="fixed")
    d = ctx.draft(host=host)
    return ctx.built(d, files=(with_corrupted_self_signature(d),), expect_peer_id=host.peer_id)


@case("valid.peer-id.expected.subject-alt-name", "valid", rule=DIALLED)
def expected_with_subject_alt_name(ctx: BuildContext) -> Built:
    """A valid certificate that also carries a non-critical subjectAltName (dNSName
    libp2p.example, as certificates for AutoTLS name a peer); the caller expects its PeerId:
    the twin of invalid.peer-id.other-key.subject-alt-name."""
    host = ctx.host("Ed25519", source="fixed")
    return ctx.built(ctx.draft(host=host, extra_extensions=(subject_alt_name(),)),
                     expect_peer_id=host.peer_id)


@case("invalid.peer-id.other-key.subject-alt-name", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="critical", rule=DIALLED)
def other_key_with_subject_alt_name(ctx: BuildContext) -> Built:
    """A valid certificate that also carries a non-critical subjectAltName (dNSName
    libp2p.example); the caller expects the PeerId of another Ed25519 key. A verifier that
    trusts a certificate's DNS name in place of the PeerId check (for AutoTLS certificates)
    accepts it."""
    host = ctx.host("Ed25519", source="fixed")
    dialled = HostKey(ctx.shared(KeyKind.ED25519, "peer-id-dialled"))
    return ctx.built(ctx.draft(host=host, extra_extensions=(subject_alt_name(),)),
                     expect_peer_id=dialled.peer_id)
