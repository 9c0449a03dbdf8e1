"""The PeerId a caller gives as text, read the way py-libp2p reads one."""

from __future__ import annotations

from libp2p.peer.id import ID


def parse_peer_id(text: str) -> ID:
    """``ID.from_string`` (base58btc or multibase, as go-libp2p's peer.Decode) where the release
    has it, else the base58btc-only ``ID.from_base58`` of older releases."""
    reader = getattr(ID, "from_string", None) or ID.from_base58
    peer_id: ID = reader(text)
    return peer_id
