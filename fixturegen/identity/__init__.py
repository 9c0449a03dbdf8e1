"""libp2p identity encoding for the generator: PublicKey protobuf, PeerId, host-key signatures."""

from fixturegen.identity.hostkey import HOST_KEY_TYPES, HostKey, host_key_type_of
from fixturegen.identity.peerid import peer_id_base58, peer_id_cid, peer_id_multihash
from fixturegen.identity.protobuf import KEY_TYPE_CODES, encode_public_key

__all__ = [
    "HOST_KEY_TYPES",
    "KEY_TYPE_CODES",
    "HostKey",
    "encode_public_key",
    "host_key_type_of",
    "peer_id_base58",
    "peer_id_cid",
    "peer_id_multihash",
]
